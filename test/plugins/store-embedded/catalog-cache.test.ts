import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LibraryRecord } from '../../../core/contracts.ts';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';
import type { EmbeddedStore } from '../../../plugins/store-embedded/embedded-store.ts';
import { withReopenableStore } from './helpers.ts';

/** The records as the database holds them now, read past the cache. */
const uncached = (store: EmbeddedStore): LibraryRecord[] => store.catalog.libraryRecords(null);

const withStore = withReopenableStore;

async function build(store: EmbeddedStore, id: string, version: string, contents: string[]): Promise<string> {
  const b = await store.beginBuild(id, version, null);
  await store.addSnippets(b, contents.map((content) => sampleSnippet({ content, tokens: content.length })));
  await store.finalizeBuild(b);
  return b;
}

describe('the embedded store’s catalog in memory (catalog-cache.ts)', () => {
  test('every write path keeps listLibraries and getLibrary equal to the database; a reopened store agrees', () =>
    withStore(async ({ store, reopen }) => {
      const agrees = async (step: string) => {
        const listed = await store.listLibraries();
        assert.deepEqual(listed, uncached(store), `after ${step}`);
        for (const lib of listed) assert.deepEqual(await store.getLibrary(lib.id), lib, `getLibrary after ${step}`);
        return listed;
      };
      assert.equal(store.catalogCache.stats.loads, 1, 'loaded once, at open');
      await agrees('open (empty)');

      await store.upsertLibrary({ id: '/docs/b', title: 'B', source: { kind: 'upload', spec: { n: 1 } } });
      await store.upsertLibrary({ id: '/docs/a', title: 'A', source: { kind: 'upload', spec: {} } });
      assert.deepEqual((await agrees('add')).map((l) => l.id), ['/docs/a', '/docs/b'], 'sorted by id');

      await store.upsertLibrary({ id: '/docs/a', title: 'A renamed title', description: 'about a', stars: 42, trustScore: 7, source: { kind: 'upload', spec: { x: 'y' } } });
      assert.equal((await agrees('metadata update')).find((l) => l.id === '/docs/a')?.title, 'A renamed title');

      const job = await store.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' });
      assert.equal((await agrees('createJob')).find((l) => l.id === '/docs/a')?.state, 'processing');
      await store.claimJob(job.id);
      await agrees('claimJob');
      await build(store, '/docs/a', '', ['one', 'two']);
      const afterFinalize = (await agrees('finalize')).find((l) => l.id === '/docs/a')!;
      assert.equal(afterFinalize.totalSnippets, 2);
      await store.updateJob(job.id, { state: 'succeeded' });
      assert.equal((await agrees('updateJob')).find((l) => l.id === '/docs/a')?.state, 'finalized');

      await build(store, '/docs/a', 'v1.0.0', ['pinned']);
      await build(store, '/docs/a', 'v2.0.0', ['pinned two']);
      assert.deepEqual((await agrees('version finalize')).find((l) => l.id === '/docs/a')?.versions, ['v2.0.0', 'v1.0.0']);
      await build(store, '/docs/a', '', ['one', 'two', 'three']);
      assert.equal((await agrees('refresh')).find((l) => l.id === '/docs/a')?.totalSnippets, 3);

      assert.equal(await store.deleteLibrary('/docs/a', 'v1.0.0'), true);
      assert.deepEqual((await agrees('version delete')).find((l) => l.id === '/docs/a')?.versions, ['v2.0.0']);

      await store.renameLibrary('/docs/a', '/docs/c');
      const renamed = await agrees('rename');
      assert.deepEqual(renamed.map((l) => l.id), ['/docs/b', '/docs/c']);
      assert.equal(await store.getLibrary('/docs/a'), null);

      // Each write read back before the next: a touch is read lazily, so one touch can cover another's miss.
      const failing = await store.createJob({ libraryId: '/docs/b', version: '', kind: 'upload' });
      await agrees('createJob (never built)');
      await store.claimJob(failing.id);
      await agrees('claimJob (never built)');
      await store.updateJob(failing.id, { state: 'failed', error: { code: 'build_failed', message: 'no documents' } });
      assert.equal((await agrees('failed job')).find((l) => l.id === '/docs/b')?.state, 'error');

      assert.equal(await store.deleteLibrary('/docs/b'), true);
      assert.deepEqual((await agrees('delete')).map((l) => l.id), ['/docs/c']);

      const before = await store.listLibraries();
      const again = await reopen();
      assert.deepEqual(await again.listLibraries(), before, 'a reopened store agrees');
    }));

  test('reads between writes come from memory: no sql.js reads per request, only the touched library is read again', () =>
    withStore(async ({ store }) => {
      for (const id of ['/docs/x', '/docs/y', '/docs/z']) {
        await store.upsertLibrary({ id, title: id, source: { kind: 'upload', spec: {} } });
        await build(store, id, '', [`about ${id}`]);
      }
      await store.listLibraries();
      const reloads = store.catalogCache.stats.reloads;
      for (let i = 0; i < 5; i++) await store.listLibraries();
      assert.equal(store.catalogCache.stats.reloads, reloads, 'nothing read again without a write');
      await store.upsertLibrary({ id: '/docs/y', title: 'Y', source: { kind: 'upload', spec: {} } });
      await store.listLibraries();
      assert.equal(store.catalogCache.stats.reloads, reloads + 1, 'one library read again');
      assert.equal(store.catalogCache.stats.loads, 1);
    }));

  test('records are frozen: a caller cannot change the catalog through what it was given', () =>
    withStore(async ({ store }) => {
      await store.upsertLibrary({ id: '/docs/f', title: 'F', source: { kind: 'upload', spec: { url: 'u' } } });
      const [lib] = await store.listLibraries();
      assert.throws(() => ((lib as { title: string }).title = 'changed'), TypeError);
      assert.throws(() => ((lib.versions as string[]).push('v9')), TypeError);
      assert.throws(() => ((lib.source.spec as Record<string, unknown>).url = 'other'), TypeError);
      const list = await store.listLibraries();
      list.pop();
      assert.equal((await store.listLibraries()).length, 1, 'the list returned is the caller’s own array');
      assert.deepEqual(await store.getLibrary('/docs/f'), uncached(store)[0]);
    }));
});
