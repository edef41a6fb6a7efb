/**
 * The catalog role of the Store contract (CatalogStore): libraries, their state, deletes and
 * renames. A library's state, versions and totals come from its builds and jobs, so the suite
 * runs on a store that also has the build and job roles.
 */
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { BuildStore, CatalogStore, JobStore } from '../../contracts.ts';
import { ISO_MS, buildVersion, contents, errorCode, lib, sampleSnippet, storeTests, type MakeStore } from './shared.ts';

export function runCatalogStoreContract(name: string, makeStore: MakeStore<CatalogStore & BuildStore & JobStore>): void {
  const storeTest = storeTests(makeStore);
  describe(`Store contract, catalog: ${name}`, () => {
    storeTest('upsertLibrary creates a library with defaults; getLibrary returns it', async (store) => {
      const created = await store.upsertLibrary(lib('/docs/koa', { description: 'Koa docs', stars: 5 }));
      assert.equal(created.id, '/docs/koa');
      assert.equal(created.title, 'Title of /docs/koa');
      assert.equal(created.description, 'Koa docs');
      assert.equal(created.branch, '');
      assert.equal(created.state, 'initial');
      assert.equal(created.lastUpdateDate, null);
      assert.equal(created.totalSnippets, 0);
      assert.equal(created.totalTokens, 0);
      assert.equal(created.stars, 5);
      assert.equal(created.trustScore, 0);
      assert.equal(created.benchmarkScore, 0);
      assert.deepEqual(created.versions, []);
      assert.deepEqual(created.source, { kind: 'upload', spec: { name: '/docs/koa' } });
      assert.match(created.createdAt, ISO_MS);
      assert.deepEqual(await store.getLibrary('/docs/koa'), created);
    });

    storeTest('upsertLibrary updates descriptive fields and keeps createdAt and builds', async (store) => {
      const first = await store.upsertLibrary(lib('/docs/koa'));
      await buildVersion(store, '/docs/koa', '', [sampleSnippet({ content: 'kept' })]);
      const updated = await store.upsertLibrary({
        id: '/docs/koa',
        title: 'Koa',
        description: 'Next generation web framework',
        branch: 'master',
        source: { kind: 'github', spec: { repo: 'koajs/koa' } },
        stars: 35000,
        trustScore: 9.5,
        benchmarkScore: 80,
      });
      assert.equal(updated.createdAt, first.createdAt);
      assert.equal(updated.title, 'Koa');
      assert.equal(updated.description, 'Next generation web framework');
      assert.equal(updated.branch, 'master');
      assert.deepEqual(updated.source, { kind: 'github', spec: { repo: 'koajs/koa' } });
      assert.equal(updated.stars, 35000);
      assert.equal(updated.trustScore, 9.5);
      assert.equal(updated.benchmarkScore, 80);
      assert.equal(updated.state, 'finalized');
      assert.equal(updated.totalSnippets, 1);
      assert.deepEqual(contents(await store.getSnippets('/docs/koa', '')), ['kept']);
    });

    storeTest('listLibraries lists every library; getLibrary of an unknown id is null', async (store) => {
      assert.deepEqual(await store.listLibraries(), []);
      await store.upsertLibrary(lib('/docs/b'));
      await store.upsertLibrary(lib('/docs/a'));
      await store.upsertLibrary(lib('/docs/b', { title: 'B again' }));
      const all = await store.listLibraries();
      assert.deepEqual(all.map((l) => l.id).sort(), ['/docs/a', '/docs/b']);
      assert.equal(all.find((l) => l.id === '/docs/b')?.title, 'B again');
      assert.equal(await store.getLibrary('/docs/missing'), null);
    });

    storeTest('deleteLibrary removes the library, its versions, builds and snippets; false when unknown', async (store) => {
      await store.upsertLibrary(lib('/docs/gone'));
      await store.upsertLibrary(lib('/docs/stays'));
      await buildVersion(store, '/docs/gone', '', [sampleSnippet({ content: 'gone default' })]);
      await buildVersion(store, '/docs/gone', 'v1', [sampleSnippet({ content: 'gone v1' })]);
      await buildVersion(store, '/docs/stays', '', [sampleSnippet({ content: 'stays' })]);
      assert.equal(await store.deleteLibrary('/docs/gone'), true);
      assert.equal(await store.getLibrary('/docs/gone'), null);
      assert.equal(await store.getVersion('/docs/gone', ''), null);
      assert.deepEqual(await store.listVersions('/docs/gone'), []);
      await assert.rejects(store.getSnippets('/docs/gone', ''), errorCode('library_not_found'));
      await assert.rejects(store.search('/docs/gone', 'v1', 'gone', 5), errorCode('library_not_found'));
      assert.deepEqual((await store.listLibraries()).map((l) => l.id), ['/docs/stays']);
      assert.deepEqual(contents(await store.getSnippets('/docs/stays', '')), ['stays']);
      assert.equal(await store.deleteLibrary('/docs/gone'), false);
      assert.equal(await store.deleteLibrary('/docs/never'), false);
      // The id can be used again from scratch.
      const again = await store.upsertLibrary(lib('/docs/gone'));
      assert.equal(again.state, 'initial');
      assert.deepEqual(again.versions, []);
    });
    storeTest('deleteLibrary(id, version) removes that version only: builds, snippets, jobs; false when unknown', async (store) => {
      await store.upsertLibrary(lib('/docs/multi'));
      await buildVersion(store, '/docs/multi', '', [sampleSnippet({ content: 'default words' })]);
      await buildVersion(store, '/docs/multi', 'v1', [sampleSnippet({ content: 'version one words' })]);
      await buildVersion(store, '/docs/multi', 'v2', [sampleSnippet({ content: 'version two words' })]);
      const queuedV1 = await store.createJob({ libraryId: '/docs/multi', version: 'v1', kind: 'upload' });
      const jobV2 = await store.createJob({ libraryId: '/docs/multi', version: 'v2', kind: 'upload' });
      assert.equal(await store.deleteLibrary('/docs/multi', 'v1'), true);
      assert.equal(await store.getVersion('/docs/multi', 'v1'), null);
      await assert.rejects(store.getSnippets('/docs/multi', 'v1'), errorCode('version_not_found'));
      assert.equal(await store.getJob(queuedV1.id), null);
      assert.equal(await store.claimJob(queuedV1.id), null);
      assert.deepEqual((await store.getLibrary('/docs/multi'))?.versions, ['v2']);
      assert.deepEqual(contents(await store.getSnippets('/docs/multi', '')), ['default words']);
      assert.deepEqual(contents(await store.getSnippets('/docs/multi', 'v2')), ['version two words']);
      assert.equal((await store.getJob(jobV2.id))?.state, 'queued');
      assert.equal(await store.deleteLibrary('/docs/multi', 'v1'), false);
      assert.equal(await store.deleteLibrary('/docs/multi', 'v9'), false);
      assert.equal(await store.deleteLibrary('/docs/none', 'v1'), false);
      // The default version alone: the library stays, with nothing served by default.
      assert.equal(await store.deleteLibrary('/docs/multi', ''), true);
      await assert.rejects(store.getSnippets('/docs/multi', ''), errorCode('version_not_found'));
      assert.deepEqual((await store.getLibrary('/docs/multi'))?.versions, ['v2']);
    });

    storeTest('deleteLibrary refuses while a job of the library (or that version) runs; queued jobs go with it', async (store) => {
      await store.upsertLibrary(lib('/docs/busy'));
      await buildVersion(store, '/docs/busy', 'v1', [sampleSnippet({ content: 'one' })]);
      const running = await store.createJob({ libraryId: '/docs/busy', version: '', kind: 'upload' });
      await store.claimJob(running.id);
      await assert.rejects(store.deleteLibrary('/docs/busy'), errorCode('library_busy'));
      await assert.rejects(store.deleteLibrary('/docs/busy', ''), errorCode('library_busy'));
      assert.ok(await store.getLibrary('/docs/busy'));
      assert.equal((await store.getJob(running.id))?.state, 'running');
      // Another version is not busy.
      assert.equal(await store.deleteLibrary('/docs/busy', 'v1'), true);
      await store.updateJob(running.id, { state: 'failed', error: { code: 'invalid_source', message: 'bad' } });
      const queued = await store.createJob({ libraryId: '/docs/busy', version: '', kind: 'upload' });
      assert.equal(await store.deleteLibrary('/docs/busy'), true);
      assert.equal(await store.getJob(queued.id), null);
      assert.equal(await store.claimJob(queued.id), null);
      assert.deepEqual(await store.listJobs({ libraryId: '/docs/busy' }), []);
    });

    storeTest('a library follows its newest job until its default version is finalized', async (store) => {
      await store.upsertLibrary(lib('/docs/koa'));
      const state = async () => (await store.getLibrary('/docs/koa'))?.state;
      assert.equal(await state(), 'initial');

      const j1 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      assert.equal(await state(), 'processing');
      assert.equal((await store.getVersion('/docs/koa', ''))?.state, 'processing');
      await store.updateJob(j1.id, { state: 'running' });
      assert.equal(await state(), 'processing');
      await store.updateJob(j1.id, { state: 'failed', error: { code: 'no_documentation', message: 'none' } });
      assert.equal(await state(), 'error');
      assert.equal((await store.getVersion('/docs/koa', ''))?.state, 'error');
      await assert.rejects(store.getSnippets('/docs/koa', ''), errorCode('library_not_finalized'));

      const j2 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      await store.updateJob(j2.id, { state: 'running' });
      assert.equal(await state(), 'processing');
      await store.updateJob(j2.id, { state: 'interrupted', error: { code: 'interrupted', message: 'stopped' } });
      assert.equal(await state(), 'error');

      const j3 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      await store.updateJob(j3.id, { state: 'running' });
      await buildVersion(store, '/docs/koa', '', [sampleSnippet()], j3.id);
      await store.updateJob(j3.id, { state: 'succeeded' });
      assert.equal(await state(), 'finalized');
      assert.equal((await store.getVersion('/docs/koa', ''))?.state, 'finalized');

      // A refresh in progress or failing does not take a finalized library offline.
      const j4 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      assert.equal(await state(), 'finalized');
      await store.updateJob(j4.id, { state: 'failed', error: { code: 'too_large', message: 'too big' } });
      assert.equal(await state(), 'finalized');
      assert.equal((await store.getSnippets('/docs/koa', '')).length, 1);
    });

    storeTest('a library with only pinned versions is finalized and reports the latest pinned build', async (store) => {
      await store.upsertLibrary(lib('/docs/pinned'));
      await buildVersion(store, '/docs/pinned', 'v1', [sampleSnippet({ tokens: 1 })]);
      await new Promise((r) => setTimeout(r, 5));
      await buildVersion(store, '/docs/pinned', 'v2', [sampleSnippet({ tokens: 2 }), sampleSnippet({ tokens: 3 })]);
      const record = await store.getLibrary('/docs/pinned');
      assert.equal(record?.state, 'finalized');
      assert.deepEqual(record?.versions, ['v2', 'v1']);
      assert.equal(record?.totalSnippets, 2);
      assert.equal(record?.totalTokens, 5);
      assert.equal(record?.lastUpdateDate, (await store.getVersion('/docs/pinned', 'v2'))?.lastUpdateDate);
    });

    storeTest('renameLibrary moves versions, snippets and jobs and leaves an alias that follows later renames', async (store) => {
      await store.upsertLibrary(lib('/old/name'));
      await buildVersion(store, '/old/name', '', [sampleSnippet({ content: 'default words' })]);
      await buildVersion(store, '/old/name', 'v1', [sampleSnippet({ content: 'pinned words' })]);
      const job = await store.createJob({ libraryId: '/old/name', version: '', kind: 'upload' });
      const renamed = await store.renameLibrary('/old/name', '/new/name');
      assert.equal(renamed.id, '/new/name');
      assert.equal(renamed.state, 'finalized');
      assert.deepEqual(renamed.versions, ['v1']);
      assert.equal(await store.getLibrary('/old/name'), null);
      assert.deepEqual(contents(await store.getSnippets('/new/name', '')), ['default words']);
      assert.deepEqual(contents(await store.getSnippets('/new/name', 'v1')), ['pinned words']);
      assert.equal((await store.getJob(job.id))?.libraryId, '/new/name');
      assert.equal(await store.resolveLibraryAlias('/old/name'), '/new/name');
      assert.equal(await store.resolveLibraryAlias('/new/name'), null);
      await store.renameLibrary('/new/name', '/third/name');
      assert.equal(await store.resolveLibraryAlias('/old/name'), '/third/name');
      assert.equal(await store.resolveLibraryAlias('/new/name'), '/third/name');
      await store.upsertLibrary(lib('/other/lib'));
      await assert.rejects(store.renameLibrary('/third/name', '/other/lib'), errorCode('already_exists'));
      await assert.rejects(store.renameLibrary('/missing/lib', '/x/y'), errorCode('library_not_found'));
      await store.deleteLibrary('/third/name');
      assert.equal(await store.resolveLibraryAlias('/old/name'), null);
    });
  });
}
