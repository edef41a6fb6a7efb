import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Clock, Snippet, Store } from '../../../core/contracts.ts';
import { createFakeClock, createTestLogger } from '../../../core/testing/fakes.ts';
import { MemoryStore } from '../../../core/testing/memory-store.ts';
import { runStoreContract, sampleSnippet } from '../../../core/testing/store-contract.ts';
import { EmbeddedStore } from '../../../plugins/store-embedded/embedded-store.ts';

runStoreContract('memory', async () => {
  const store = new MemoryStore();
  await store.open();
  return { store, cleanup: () => store.close() };
});

test('the kit exports a contract suite per Store role', async () => {
  const kit = (await import('../../../core/testing/index.ts')) as Record<string, unknown>;
  for (const role of ['Catalog', 'Build', 'Job', 'ApiKey', 'Session', 'Audit', 'Settings']) {
    assert.equal(typeof kit[`run${role}StoreContract`], 'function', `run${role}StoreContract`);
  }
});

test('timestamps come from the injected clock', async () => {
  const clock = createFakeClock('2026-03-01T10:00:00.000Z');
  const store = new MemoryStore({ clock });
  await store.open();
  const lib = await store.upsertLibrary({ id: '/docs/a', title: 'A', source: { kind: 'upload', spec: {} } });
  assert.equal(lib.createdAt, '2026-03-01T10:00:00.000Z');
  clock.advance(1500);
  const job = await store.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' });
  assert.equal(job.createdAt, '2026-03-01T10:00:01.500Z');
  clock.advance(500);
  const b = await store.beginBuild('/docs/a', '', job.id);
  await store.addSnippets(b, [sampleSnippet()]);
  const v = await store.finalizeBuild(b);
  assert.equal(v.lastUpdateDate, '2026-03-01T10:00:02.000Z');
  assert.equal((await store.getLibrary('/docs/a'))?.lastUpdateDate, '2026-03-01T10:00:02.000Z');
  await store.close();
});

test('the store must be opened first, cannot be reopened once closed, and copies what goes in and out', async () => {
  const store = new MemoryStore();
  await assert.rejects(store.listLibraries(), { code: 'internal_error', message: /not open yet/ });
  await store.open();
  await store.open(); // idempotent
  const spec: Record<string, unknown> = { path: '/x', nested: { a: 1 } };
  await store.upsertLibrary({ id: '/docs/a', title: 'A', source: { kind: 'upload', spec } });
  (spec.nested as { a: number }).a = 2;
  const got = await store.getLibrary('/docs/a');
  assert.deepEqual(got?.source.spec, { path: '/x', nested: { a: 1 } });
  (got!.source.spec.nested as { a: number }).a = 3;
  assert.deepEqual((await store.getLibrary('/docs/a'))?.source.spec, { path: '/x', nested: { a: 1 } });

  const snippet = sampleSnippet({ breadcrumb: ['A', 'B'] });
  const b = await store.beginBuild('/docs/a', '', null);
  await store.addSnippets(b, [snippet]);
  snippet.breadcrumb.push('C');
  snippet.content = 'changed';
  await store.finalizeBuild(b);
  const [stored] = await store.getSnippets('/docs/a', '');
  assert.deepEqual(stored.breadcrumb, ['A', 'B']);
  assert.equal(stored.content, 'Some prose about the library.');
  assert.ok(Object.isFrozen(stored) && Object.isFrozen(stored.breadcrumb));

  const job = await store.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' });
  job.progress.files = 99;
  assert.deepEqual((await store.getJob(job.id))?.progress, {});

  await store.close();
  await assert.rejects(store.getLibrary('/docs/a'), { code: 'internal_error', message: /closed/ });
  await assert.rejects(store.open(), { code: 'internal_error' });
});

test('job logs keep the newest 2000 lines', async () => {
  const store = new MemoryStore();
  await store.open();
  await store.upsertLibrary({ id: '/docs/a', title: 'A', source: { kind: 'upload', spec: {} } });
  const job = await store.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' });
  for (let i = 1; i <= 2005; i++) await store.appendJobLog(job.id, 'info', `line ${i}`);
  const log = await store.getJobLog(job.id);
  assert.equal(log.length, 2000);
  assert.equal(log[0].seq, 6);
  assert.equal(log[0].message, 'line 6');
  assert.equal(log[1999].seq, 2005);
  await store.close();
});

/**
 * Differential test: the same script against the memory store and the embedded store, with the
 * same fake clock, must give the same results and the same errors (codes and messages), once the
 * random build and job ids are replaced by the order they first appeared in.
 */
test('the memory store answers exactly like the embedded store', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'refdesk-memory-parity-'));
  t.after(() => rm(root, { recursive: true, force: true }));

  async function script(store: Store, clock: ReturnType<typeof createFakeClock>): Promise<unknown[]> {
    const out: unknown[] = [];
    const step = async (label: string, fn: () => Promise<unknown>): Promise<unknown> => {
      clock.advance(1000);
      try {
        const value = await fn();
        out.push([label, 'ok', value]);
        return value;
      } catch (e) {
        const err = e as { code?: unknown; message?: unknown };
        out.push([label, 'error', err.code ?? null, err.message]);
        return undefined;
      }
    };
    const snip = (content: string, extra: Partial<Snippet> = {}) => sampleSnippet({ content, ...extra });
    const lib = (id: string, extra: Record<string, unknown> = {}) => ({ id, title: id, source: { kind: 'upload', spec: { path: id } }, ...extra });

    await step('upsert b', () => store.upsertLibrary(lib('/docs/b', { stars: 3, branch: 'main' })));
    await step('upsert a', () => store.upsertLibrary(lib('/docs/a')));
    await step('upsert invalid', () => store.upsertLibrary({ id: '', title: 'x', source: { kind: 'upload', spec: {} } }));
    await step('upsert bad stars', () => store.upsertLibrary(lib('/docs/c', { stars: Number.NaN })));
    await step('list', () => store.listLibraries());
    await step('snippets before build', () => store.getSnippets('/docs/a', ''));
    await step('snippets unknown', () => store.getSnippets('/docs/none', ''));
    await step('version none', () => store.getVersion('/docs/a', ''));

    const j1 = (await step('job 1', () => store.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' }))) as { id: string };
    await step('job bad', () => store.createJob({ libraryId: '/docs/a', version: undefined as unknown as string, kind: 'upload' }));
    await step('lib processing', () => store.getLibrary('/docs/a'));
    await step('snippets processing', () => store.getSnippets('/docs/a', ''));
    await step('pinned processing', () => store.search('/docs/a', 'v1', 'x', 3));
    await step('job running', () => store.updateJob(j1.id, { state: 'running', progress: { files: 1 } }));
    await step('job bad state', () => store.updateJob(j1.id, { state: 'paused' as never }));
    await step('log 1', () => store.appendJobLog(j1.id, 'info', 'hello'));
    await step('log 2', () => store.appendJobLog(j1.id, 'loud' as never, 'odd level'));
    const b1 = (await step('begin 1', () => store.beginBuild('/docs/a', '', j1.id))) as string;
    await step('versions while building', () => store.listVersions('/docs/a'));
    await step('add 1', () => store.addSnippets(b1, [snip('alpha middleware'), snip('beta cookies', { type: 'code', code: 'ctx.cookies.set()', language: 'js', sourceUrl: 'https://x/y', anchor: 'y' })]));
    await step('add empty', () => store.addSnippets(b1, []));
    await step('finalize 1', () => store.finalizeBuild(b1));
    await step('finalize again', () => store.finalizeBuild(b1));
    await step('fail finalized', () => store.failBuild(b1));
    await step('add to finalized', () => store.addSnippets(b1, [snip('late')]));
    await step('job done', () => store.updateJob(j1.id, { state: 'succeeded', progress: { snippets: 2 } }));
    await step('job done again', () => store.updateJob(j1.id, { state: 'succeeded' }));
    await step('get snippets', () => store.getSnippets('/docs/a', ''));
    await step('search', () => store.search('/docs/a', '', 'cookies middleware', 5));
    await step('search zero limit', () => store.search('/docs/a', '', 'cookies', 0));
    await step('search fractional limit', () => store.search('/docs/a', '', 'cookies', 1.7));

    for (const v of ['v1.10', 'v1.9', 'v2.0-beta']) {
      const b = (await step(`begin ${v}`, () => store.beginBuild('/docs/a', v, null))) as string;
      await step(`add ${v}`, () => store.addSnippets(b, [snip(`pinned ${v}`, { tokens: 4 })]));
      await step(`finalize ${v}`, () => store.finalizeBuild(b));
    }
    await step('pinned missing', () => store.getSnippets('/docs/a', 'v9'));
    const bf = (await step('begin failing', () => store.beginBuild('/docs/a', 'v3', null))) as string;
    await step('add failing', () => store.addSnippets(bf, [snip('doomed')]));
    await step('fail', () => store.failBuild(bf));
    await step('fail twice', () => store.failBuild(bf));
    await step('finalize failed', () => store.finalizeBuild(bf));
    await step('v3 after fail', () => store.getVersion('/docs/a', 'v3'));
    await step('v3 snippets', () => store.getSnippets('/docs/a', 'v3'));
    await step('versions', () => store.listVersions('/docs/a'));
    await step('library', () => store.getLibrary('/docs/a'));

    // Only pinned versions, named so they sort by date.
    await step('upsert p', () => store.upsertLibrary(lib('/docs/p')));
    for (const v of ['stable', 'next']) {
      const b = (await step(`begin p ${v}`, () => store.beginBuild('/docs/p', v, null))) as string;
      await step(`finalize p ${v}`, () => store.finalizeBuild(b));
    }
    await step('p default', () => store.getSnippets('/docs/p', ''));
    await step('p library', () => store.getLibrary('/docs/p'));
    await step('p versions', () => store.listVersions('/docs/p'));

    const jb = (await step('job b', () => store.createJob({ libraryId: '/docs/b', version: '', kind: 'upload' }))) as { id: string };
    await step('job b failed', () => store.updateJob(jb.id, { state: 'failed', error: { code: 'no_documentation', message: 'none' } }));
    await step('b snippets after failure', () => store.getSnippets('/docs/b', ''));
    await step('b library', () => store.getLibrary('/docs/b'));
    await step('jobs', () => store.listJobs());
    await step('jobs limited', () => store.listJobs({ limit: 1 }));
    await step('jobs bad limit', () => store.listJobs({ limit: -1 }));
    await step('jobs by state', () => store.listJobs({ state: 'failed' }));
    await step('job log', () => store.getJobLog(j1.id));
    await step('job log unknown', () => store.getJobLog('nope'));
    await step('upsert keeps', () => store.upsertLibrary({ id: '/docs/b', title: 'B', source: { kind: 'github', spec: { repo: 'x/y' } } }));

    const orphan = (await step('begin orphan', () => store.beginBuild('/docs/b', '', null))) as string;
    await step('delete b', () => store.deleteLibrary('/docs/b'));
    await step('add orphan', () => store.addSnippets(orphan, [snip('x')]));
    await step('fail orphan', () => store.failBuild(orphan));
    await step('delete b again', () => store.deleteLibrary('/docs/b'));
    await step('begin unknown', () => store.beginBuild('/docs/b', '', null));
    await step('list end', () => store.listLibraries());
    await step('jobs end', () => store.listJobs());
    return out;
  }

  /** Replaces UUIDs by their order of first appearance. */
  function normalize(value: unknown): unknown {
    const ids = new Map<string, string>();
    const text = JSON.stringify(value, (_k, v: unknown) => (v instanceof Float32Array ? [...v] : v));
    return JSON.parse(
      text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
        if (!ids.has(id)) ids.set(id, `<id${ids.size + 1}>`);
        return ids.get(id)!;
      }),
    );
  }

  const memClock = createFakeClock();
  const memory = new MemoryStore({ clock: memClock });
  await memory.open();
  const memResult = normalize(await script(memory, memClock));
  await memory.close();

  const embClock = createFakeClock();
  const embedded = new EmbeddedStore(
    { flushIntervalMs: 60_000 },
    { env: { dataDir: join(root, 'data'), mode: 'writer' }, logger: createTestLogger(), clock: embClock as Clock },
  );
  await embedded.open();
  const embResult = normalize(await script(embedded, embClock));
  await embedded.close();

  assert.deepEqual(memResult, embResult);
  // The script exercised both paths: answers and refusals.
  const rows = memResult as Array<[string, 'ok' | 'error', ...unknown[]]>;
  const outcome = (label: string) => rows.find((r) => r[0] === label)?.[1];
  assert.ok(rows.filter((r) => r[1] === 'ok').length >= 40);
  assert.ok(rows.filter((r) => r[1] === 'error').length >= 15);
  assert.equal(outcome('finalize 1'), 'ok');
  assert.equal(outcome('fail finalized'), 'error');
  assert.equal((rows.find((r) => r[0] === 'search')?.[2] as unknown[]).length, 2);
});
