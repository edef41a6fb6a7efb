/**
 * The PostgreSQL store's catalog role on Debian's PostgreSQL server, without the builds role:
 * the catalog contract's rules that jobs alone exercise, served versions written as the builds
 * role's finalize writes them (rows in builds and versions, then the change feed), the per-node
 * record cache and its invalidation by the change feed, across two stores on one database.
 * The catalog contract suite itself needs builds: it runs in contract.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ISO_MS } from '../../../core/testing/store-contracts/shared.ts';
import type { PostgresStore } from '../../../plugins/store-postgres/store.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { nextChange, withStores } from './helpers.ts';

const lib = (id: string, extra: Record<string, unknown> = {}) => ({ id, title: `Title of ${id}`, source: { kind: 'upload', spec: { name: id } }, ...extra });

function code(c: string) {
  return (e: unknown) => {
    assert.equal((e as { code?: string }).code, c, String((e as Error).message));
    return true;
  };
}

/**
 * A served build of a version, written as the builds role's finalize writes it: a finalized
 * build row, the version row pointing at it, then the change feed. Returns the build id.
 */
async function serve(store: PostgresStore, libraryId: string, version: string, totals: { tokens: number; snippets: number }, at = new Date()): Promise<string> {
  const buildId = randomUUID();
  await store.database.tx(async (c) => {
    await c.query(
      `INSERT INTO builds (id, library_id, version, state, started_at, finished_at, total_snippets, total_tokens) VALUES ($1, $2, $3, 'finalized', $4, $4, $5, $6)`,
      [buildId, libraryId, version, at.toISOString(), totals.snippets, totals.tokens],
    );
    await c.query(
      `INSERT INTO versions (library_id, version, active_build_id, last_update_date, total_tokens, total_snippets) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (library_id, version) DO UPDATE SET active_build_id = EXCLUDED.active_build_id, last_update_date = EXCLUDED.last_update_date,
         total_tokens = EXCLUDED.total_tokens, total_snippets = EXCLUDED.total_snippets`,
      [libraryId, version, buildId, at.toISOString(), totals.tokens, totals.snippets],
    );
  });
  await store.catalog.changed(libraryId);
  return buildId;
}

describe('store-postgres catalog role on Debian PostgreSQL', { skip: postgresSkipReason() }, () => {
  const stores = (n: number, fn: (...s: PostgresStore[]) => Promise<void>) => withStores(n, (_url, ...s) => fn(...s));

  test('upsertLibrary creates with defaults and updates descriptive fields, keeping createdAt and what the input leaves out', () =>
    stores(1, async (store) => {
      const created = await store.upsertLibrary(lib('/docs/koa', { description: 'Koa docs', stars: 5 }));
      assert.deepEqual(
        { ...created, createdAt: '' },
        {
          id: '/docs/koa',
          title: 'Title of /docs/koa',
          description: 'Koa docs',
          branch: '',
          lastUpdateDate: null,
          state: 'initial',
          totalTokens: 0,
          totalSnippets: 0,
          stars: 5,
          trustScore: 0,
          benchmarkScore: 0,
          versions: [],
          source: { kind: 'upload', spec: { name: '/docs/koa' } },
          createdAt: '',
        },
      );
      assert.match(created.createdAt, ISO_MS);
      assert.deepEqual(await store.getLibrary('/docs/koa'), created);
      await serve(store, '/docs/koa', '', { tokens: 7, snippets: 1 });
      const updated = await store.upsertLibrary({ id: '/docs/koa', title: 'Koa', branch: 'master', source: { kind: 'github', spec: { repo: 'koajs/koa' } }, trustScore: 9.5 });
      assert.equal(updated.createdAt, created.createdAt);
      assert.equal(updated.title, 'Koa');
      assert.equal(updated.description, 'Koa docs', 'left out: kept');
      assert.equal(updated.stars, 5, 'left out: kept');
      assert.equal(updated.trustScore, 9.5);
      assert.equal(updated.branch, 'master');
      assert.deepEqual(updated.source, { kind: 'github', spec: { repo: 'koajs/koa' } });
      assert.equal(updated.state, 'finalized');
      assert.equal(updated.totalSnippets, 1);
      await assert.rejects(store.upsertLibrary({ id: '', title: 'x', source: { kind: 'upload', spec: {} } }), code('invalid_request'));
      assert.deepEqual((await store.listLibraries()).map((l) => l.id), ['/docs/koa']);
      assert.equal(await store.getLibrary('/docs/missing'), null);
      assert.ok(Object.isFrozen(await store.getLibrary('/docs/koa')), 'records are shared: frozen');
    }));

  test('a library follows its newest job until a default build is served; pinned-only libraries show their latest pinned build', () =>
    stores(1, async (store) => {
      await store.upsertLibrary(lib('/docs/koa'));
      const state = async () => (await store.getLibrary('/docs/koa'))?.state;
      const j1 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      assert.equal(await state(), 'processing');
      assert.equal((await store.getVersion('/docs/koa', ''))?.state, 'processing');
      await store.updateJob(j1.id, { state: 'running' });
      await store.updateJob(j1.id, { state: 'failed', error: { code: 'no_documentation', message: 'none' } });
      assert.equal(await state(), 'error');
      assert.equal((await store.getVersion('/docs/koa', ''))?.state, 'error');
      // Jobs created in the same millisecond: the later one is the newest (insertion order).
      const j2 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      const j3 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      await store.database.query('UPDATE jobs SET created_at = $1 WHERE id = ANY($2)', [new Date().toISOString(), [j2.id, j3.id]]);
      await store.updateJob(j2.id, { state: 'failed', error: { code: 'x', message: 'x' } });
      assert.equal(await state(), 'processing', 'the newest job (j3) is queued');
      await store.claimJob(j3.id);
      await serve(store, '/docs/koa', '', { tokens: 10, snippets: 2 });
      await store.updateJob(j3.id, { state: 'succeeded' });
      const koa = await store.getLibrary('/docs/koa');
      assert.equal(koa?.state, 'finalized');
      assert.equal(koa?.totalTokens, 10);
      assert.match(koa?.lastUpdateDate ?? '', ISO_MS);
      // A failing refresh does not take a finalized library offline.
      const j4 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      await store.updateJob(j4.id, { state: 'failed', error: { code: 'too_large', message: 'big' } });
      assert.equal(await state(), 'finalized');

      await store.upsertLibrary(lib('/docs/pinned'));
      await serve(store, '/docs/pinned', 'v1', { tokens: 1, snippets: 1 }, new Date(Date.now() - 1000));
      await serve(store, '/docs/pinned', 'v2', { tokens: 5, snippets: 2 });
      const pinned = await store.getLibrary('/docs/pinned');
      assert.equal(pinned?.state, 'finalized');
      assert.deepEqual(pinned?.versions, ['v2', 'v1']);
      assert.equal(pinned?.totalSnippets, 2);
      assert.equal(pinned?.totalTokens, 5);
      assert.equal(pinned?.lastUpdateDate, (await store.getVersion('/docs/pinned', 'v2'))?.lastUpdateDate);
      const versions = await store.listVersions('/docs/pinned');
      assert.deepEqual(versions.map((v) => [v.version, v.state, v.totalTokens]), [['v2', 'finalized', 5], ['v1', 'finalized', 1]]);
      assert.equal(await store.getVersion('/docs/pinned', 'v9'), null);
      assert.equal(await store.getVersion('/docs/none', ''), null);
      assert.deepEqual(await store.listVersions('/docs/none'), []);
    }));

  test('deleteLibrary: the whole library or one version, refused while a job runs, queued jobs go with it, false when unknown', () =>
    stores(1, async (store) => {
      const deleted: string[][] = [];
      store.catalog.onBuildsDeleted((ids) => deleted.push(ids));
      await store.upsertLibrary(lib('/docs/multi'));
      await store.upsertLibrary(lib('/docs/stays'));
      await serve(store, '/docs/multi', '', { tokens: 1, snippets: 1 });
      const v1Build = await serve(store, '/docs/multi', 'v1', { tokens: 1, snippets: 1 });
      await serve(store, '/docs/multi', 'v2', { tokens: 1, snippets: 1 });
      const queuedV1 = await store.createJob({ libraryId: '/docs/multi', version: 'v1', kind: 'upload' });
      await store.appendJobLog(queuedV1.id, 'info', 'queued');
      const jobV2 = await store.createJob({ libraryId: '/docs/multi', version: 'v2', kind: 'upload' });
      assert.equal(await store.deleteLibrary('/docs/multi', 'v1'), true);
      assert.deepEqual(deleted, [[v1Build]]);
      assert.equal(await store.getVersion('/docs/multi', 'v1'), null);
      assert.equal(await store.getJob(queuedV1.id), null);
      assert.equal(await store.claimJob(queuedV1.id), null);
      assert.deepEqual((await store.getLibrary('/docs/multi'))?.versions, ['v2']);
      assert.equal((await store.getJob(jobV2.id))?.state, 'queued');
      assert.equal(await store.deleteLibrary('/docs/multi', 'v1'), false);
      assert.equal(await store.deleteLibrary('/docs/multi', 'v9'), false);
      assert.equal(await store.deleteLibrary('/docs/none', 'v1'), false);
      await assert.rejects(store.deleteLibrary('/docs/multi', 3 as never), code('invalid_request'));

      // A running job of the library (or of that version) refuses the delete; another version is free.
      const running = await store.createJob({ libraryId: '/docs/multi', version: '', kind: 'upload' });
      assert.ok(await store.claimJob(running.id));
      await assert.rejects(store.deleteLibrary('/docs/multi'), code('library_busy'));
      await assert.rejects(store.deleteLibrary('/docs/multi', ''), code('library_busy'));
      assert.equal(await store.deleteLibrary('/docs/multi', 'v2'), true);
      assert.equal(await store.getJob(jobV2.id), null);
      await store.updateJob(running.id, { state: 'succeeded' });

      // The default version alone: the library stays, serving no default.
      assert.equal(await store.deleteLibrary('/docs/multi', ''), true);
      assert.equal((await store.getLibrary('/docs/multi'))?.state, 'initial');
      // The whole library: versions, builds, jobs, logs, aliases go.
      await store.createJob({ libraryId: '/docs/multi', version: '', kind: 'upload' });
      assert.equal(await store.deleteLibrary('/docs/multi'), true);
      assert.equal(await store.getLibrary('/docs/multi'), null);
      assert.deepEqual(await store.listJobs({ libraryId: '/docs/multi' }), []);
      const left = await store.database.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM builds WHERE library_id = '/docs/multi') + (SELECT count(*) FROM versions WHERE library_id = '/docs/multi')
              + (SELECT count(*) FROM jobs WHERE library_id = '/docs/multi') + (SELECT count(*) FROM job_logs) AS n`,
      );
      assert.equal(Number(left[0].n), 0);
      assert.equal(await store.deleteLibrary('/docs/multi'), false);
      assert.deepEqual((await store.listLibraries()).map((l) => l.id), ['/docs/stays']);
      const again = await store.upsertLibrary(lib('/docs/multi'));
      assert.equal(again.state, 'initial');
    }));

  test('renameLibrary moves versions and jobs, leaves an alias that follows later renames; refusals', () =>
    stores(1, async (store) => {
      await store.upsertLibrary(lib('/old/name'));
      await serve(store, '/old/name', '', { tokens: 3, snippets: 1 });
      await serve(store, '/old/name', 'v1', { tokens: 2, snippets: 1 });
      const job = await store.createJob({ libraryId: '/old/name', version: '', kind: 'upload' });
      const renamed = await store.renameLibrary('/old/name', '/new/name');
      assert.equal(renamed.id, '/new/name');
      assert.equal(renamed.state, 'finalized');
      assert.deepEqual(renamed.versions, ['v1']);
      assert.equal(renamed.totalTokens, 3);
      assert.equal(await store.getLibrary('/old/name'), null);
      assert.equal((await store.getJob(job.id))?.libraryId, '/new/name');
      assert.equal((await store.getVersion('/new/name', 'v1'))?.state, 'finalized');
      assert.equal(await store.resolveLibraryAlias('/old/name'), '/new/name');
      assert.equal(await store.resolveLibraryAlias('/new/name'), null);
      await store.renameLibrary('/new/name', '/third/name');
      assert.equal(await store.resolveLibraryAlias('/old/name'), '/third/name');
      assert.equal(await store.resolveLibraryAlias('/new/name'), '/third/name');
      // Renaming back onto an alias: the alias gives way to the library.
      await store.renameLibrary('/third/name', '/old/name');
      assert.equal(await store.resolveLibraryAlias('/old/name'), null);
      assert.equal(await store.resolveLibraryAlias('/third/name'), '/old/name');
      await store.upsertLibrary(lib('/other/lib'));
      await assert.rejects(store.renameLibrary('/old/name', '/other/lib'), code('already_exists'));
      await assert.rejects(store.renameLibrary('/missing/lib', '/x/y'), code('library_not_found'));
      await assert.rejects(store.renameLibrary('/old/name', '/old/name'), code('invalid_request'));
      await store.deleteLibrary('/old/name');
      assert.equal(await store.resolveLibraryAlias('/new/name'), null);
    }));

  test('two stores on one database: records are cached per node and refreshed by the change feed (notify.ts)', () =>
    stores(2, async (a, b) => {
      await a.upsertLibrary(lib('/docs/shared', { description: 'first' }));
      assert.equal((await b.getLibrary('/docs/shared'))?.description, 'first');
      const loads = b.catalog.cache.stats.loads;
      const reloads = b.catalog.cache.stats.reloads;
      // Reads are served from memory: no reload without a change.
      for (let i = 0; i < 5; i++) await b.listLibraries();
      assert.equal(b.catalog.cache.stats.loads, loads);
      assert.equal(b.catalog.cache.stats.reloads, reloads);

      // B's change feed (notify.ts: LISTEN, polling as the fallback) tells it about A's writes.
      const heard = () => nextChange(b, 'library', '/docs/shared', a.database.nodeId);
      let told = heard();
      await a.upsertLibrary(lib('/docs/shared', { description: 'second' }));
      assert.equal((await a.getLibrary('/docs/shared'))?.description, 'second', 'the writer sees its change at once');
      await told;
      assert.equal((await b.getLibrary('/docs/shared'))?.description, 'second', 'B reads it again once told');
      // A job's state change through A shows on B's record, once B hears of it.
      told = heard();
      const job = await a.createJob({ libraryId: '/docs/shared', version: '', kind: 'upload' });
      await told;
      assert.equal((await b.getLibrary('/docs/shared'))?.state, 'processing');
      await a.claimJob(job.id);
      told = heard();
      await a.updateJob(job.id, { state: 'failed', error: { code: 'x', message: 'y' } });
      await told;
      assert.equal((await b.getLibrary('/docs/shared'))?.state, 'error');
      told = heard();
      await a.deleteLibrary('/docs/shared');
      await told;
      assert.equal(await b.getLibrary('/docs/shared'), null);
      assert.deepEqual(await b.listLibraries(), []);
    }));

  test('a change committed while a read is loading is not lost', () =>
    stores(1, async (store) => {
      await store.upsertLibrary(lib('/docs/race', { description: 'before' }));
      // Mark stale, start a read, and commit + publish a change while that read is in flight.
      store.catalog.cache.touch('/docs/race');
      const reading = store.getLibrary('/docs/race');
      await store.database.query(`UPDATE libraries SET description = 'after' WHERE id = '/docs/race'`);
      await store.catalog.changed('/docs/race');
      await reading;
      assert.equal((await store.getLibrary('/docs/race'))?.description, 'after');
    }));

  test('after close, cached reads fail too', () =>
    stores(1, async (store) => {
      await store.upsertLibrary(lib('/docs/koa'));
      await store.close();
      await assert.rejects(store.getLibrary('/docs/koa'));
      await assert.rejects(store.listLibraries());
      await store.open();
    }));
});
