import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';
import type { EmbeddedStore } from '../../../plugins/store-embedded/embedded-store.ts';
import { readMemoStats } from '../../../plugins/store-embedded/read-memo.ts';
import { withReopenableStore } from './helpers.ts';

async function build(store: EmbeddedStore, id: string, version: string, contents: string[]): Promise<string> {
  const b = await store.beginBuild(id, version, null);
  await store.addSnippets(b, contents.map((content) => sampleSnippet({ content, tokens: content.length })));
  await store.finalizeBuild(b);
  return b;
}

/** How many of the reads `fn` makes go to sql.js (0: all answered from memory). */
async function sqlReads(fn: () => Promise<unknown>): Promise<number> {
  const before = readMemoStats.misses;
  await fn();
  return readMemoStats.misses - before;
}

const HASH = 'a'.repeat(64);

describe('catalog reads of a served question come from memory until the database changes (read-memo.ts)', () => {
  test('API key, setting, versions, alias and segment file: read once, then from memory; every kind of write is seen at the next read', () =>
    withReopenableStore(async ({ store }) => {
      await store.upsertLibrary({ id: '/docs/a', title: 'A', source: { kind: 'upload', spec: {} } });
      const first = await build(store, '/docs/a', '', ['one', 'two']);
      await store.createApiKey({ id: 'k1', name: 'bench', plan: 'free', role: 'member', prefix: 'rdk_aaaa', hash: HASH });
      await store.setSetting('policy', { libraryFilters: { mode: null } });
      await store.renameLibrary('/docs/a', '/docs/b');

      const question = () =>
        Promise.all([
          store.findApiKeyByHash(HASH),
          store.findApiKeyByHash('b'.repeat(64)),
          store.getSetting('policy'),
          store.listVersions('/docs/b'),
          store.getVersion('/docs/b', ''),
          store.resolveLibraryAlias('/docs/a'),
          store.segmentFile!('/docs/b', ''),
        ]);
      const answered = await question();
      assert.ok(answered[0] && answered[0].revokedAt === null);
      assert.equal(answered[1], null);
      assert.equal(answered[5], '/docs/b');
      assert.equal(answered[6]?.buildId, first);
      assert.equal(await sqlReads(question), 0, 'the same reads again: none goes to sql.js');
      assert.deepEqual(await question(), answered, 'and they answer the same');

      // What callers get is theirs: changing it changes nothing the next caller reads.
      const setting = (await store.getSetting('policy')) as { libraryFilters: { mode: unknown } };
      setting.libraryFilters.mode = 'changed by a caller';
      const versions = await store.listVersions('/docs/b');
      versions[0].activeBuildId = 'changed by a caller';
      (await store.segmentFile!('/docs/b', ''))!.buildId = 'changed by a caller';
      assert.deepEqual(await question(), answered);

      // Each write is seen by the next read.
      await store.revokeApiKey('k1');
      assert.notEqual((await store.findApiKeyByHash(HASH))?.revokedAt, null, 'a revoked key reads as revoked at once');
      await store.setSetting('policy', { libraryFilters: { mode: 'allow' } });
      assert.deepEqual(await store.getSetting('policy'), { libraryFilters: { mode: 'allow' } });
      const second = await build(store, '/docs/b', '', ['one', 'two', 'three']);
      assert.equal((await store.segmentFile!('/docs/b', ''))?.buildId, second, 'a refresh serves the new build');
      assert.equal((await store.listVersions('/docs/b'))[0].activeBuildId, second);
      assert.equal((await store.getVersion('/docs/b', ''))?.totalSnippets, 3);
      await store.renameLibrary('/docs/b', '/docs/c');
      assert.equal(await store.resolveLibraryAlias('/docs/a'), '/docs/c');
      assert.deepEqual(await store.listVersions('/docs/b'), []);
      await store.deleteLibrary('/docs/c');
      assert.equal(await store.getVersion('/docs/c', ''), null);
      await assert.rejects(store.segmentFile!('/docs/c', ''), /not found/i);
    }));

  test('a reopened store reads what the file holds, not what the closed one remembered', () =>
    withReopenableStore(async ({ store, reopen }) => {
      await store.setSetting('policy', { n: 1 });
      assert.deepEqual(await store.getSetting('policy'), { n: 1 });
      const again = await reopen();
      assert.deepEqual(await again.getSetting('policy'), { n: 1 });
      await again.setSetting('policy', { n: 2 });
      assert.deepEqual(await again.getSetting('policy'), { n: 2 });
    }));
});
