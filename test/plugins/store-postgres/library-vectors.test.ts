/**
 * Library-search vectors shared through PostgreSQL (issue 24; plugins/store-postgres/
 * library-vectors.ts, migration 010), on Debian's server with two stores on one database (two
 * nodes): a vector written through node A is used by node B once its change feed names the
 * library, read from memory afterwards (no query per search), replaced and removed with its
 * library; and B ranks libraries by the vectors A wrote (core/library-vectors.ts), as A does.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Embedder, LibraryRecord } from '../../../core/contracts.ts';
import type { Kernel } from '../../../core/kernel.ts';
import { fuseLibraryVectors } from '../../../core/library-vectors.ts';
import { libraryEmbedText, putLibraryVector, readLibraryVectors, vectorsTag } from '../../../core/vectors.ts';
import type { PostgresStore } from '../../../plugins/store-postgres/store.ts';
import { hashEmbedding } from '../../helpers/hash-embedding.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { memoryLogger } from '../store-embedded/helpers.ts';
import { nextChange, withStores } from './helpers.ts';

const MODEL = 'hash-256';

/** An embedder computing the deterministic hash embedding in this process (no provider). */
const embedder: Embedder = {
  kind: 'hash',
  model: MODEL,
  dimensions: 256,
  async embed(texts: string[]) {
    return texts.map((t) => hashEmbedding(t));
  },
} as unknown as Embedder;

/** What core/vectors.ts and core/library-vectors.ts use of a node's kernel: its store, data directory, embedder, logger. */
function nodeKernel(store: PostgresStore): Kernel {
  return {
    store,
    env: store.database.env,
    logger: memoryLogger(),
    providers: { embedder: async () => embedder, fingerprint: async () => MODEL, resolved: async () => ({}) },
  } as unknown as Kernel;
}

const vec = (text: string) => hashEmbedding(text);

describe('store-postgres library-search vectors on Debian PostgreSQL', { timeout: 180_000, skip: postgresSkipReason() }, () => {
  test('a vector written on node A is read by node B once told, from memory after; replaced and removed with its library', () =>
    withStores(2, async (_url, a, b) => {
      for (const id of ['/x/alpha', '/x/beta']) await a.upsertLibrary({ id, title: id.slice(3), source: { kind: 'git', spec: { url: `https://example.com${id}` } } });
      const ka = nodeKernel(a);
      const kb = nodeKernel(b);
      assert.deepEqual(await readLibraryVectors(kb, ['/x/alpha', '/x/beta'], embedder), []);
      const emptyTag = await vectorsTag(kb, null);

      let told = nextChange(b, 'library', '/x/alpha');
      const v1 = vec('alpha routing middleware');
      await putLibraryVector(ka, { libraryId: '/x/alpha', model: MODEL, vector: v1 });
      await told;
      const got = await readLibraryVectors(kb, ['/x/alpha', '/x/beta'], embedder);
      assert.equal(got.length, 1);
      assert.equal(got[0].libraryId, '/x/alpha');
      assert.deepEqual(Array.from(got[0].vector), Array.from(v1), 'the same float32 values');
      const tag1 = await vectorsTag(kb, null);
      assert.notEqual(tag1, emptyTag, 'a new library vector changes the library search ETag on B');

      const reads = b.libraryVectors.reads;
      for (let i = 0; i < 10; i++) await readLibraryVectors(kb, ['/x/alpha', '/x/beta'], embedder);
      assert.equal(b.libraryVectors.reads, reads, 'ten searches on B, no query');

      // Another model's vector is kept but not used by this embedder.
      assert.deepEqual(await readLibraryVectors(kb, ['/x/alpha'], { model: 'other', dimensions: 0 }), []);

      told = nextChange(b, 'library', '/x/alpha');
      const v2 = vec('alpha cookies sessions');
      await putLibraryVector(ka, { libraryId: '/x/alpha', model: MODEL, vector: v2 });
      await told;
      assert.deepEqual(Array.from((await readLibraryVectors(kb, ['/x/alpha'], embedder))[0].vector), Array.from(v2), 'replaced on B');
      assert.notEqual(await vectorsTag(kb, null), tag1);

      told = nextChange(b, 'library', '/x/alpha');
      await a.deleteLibrary('/x/alpha');
      await told;
      assert.deepEqual(await readLibraryVectors(kb, ['/x/alpha'], embedder), [], 'gone with its library');

      // A vector for a library that does not exist is refused; the store keeps working.
      await assert.rejects(putLibraryVector(ka, { libraryId: '/x/none', model: MODEL, vector: v1 }));
      await assert.rejects(a.libraryVectors.putLibraryVector({ libraryId: '/x/beta', model: MODEL, vector: new Float32Array(0) }));
      assert.deepEqual(await readLibraryVectors(kb, ['/x/beta'], embedder), []);
    }));

  test('node B ranks libraries by the vectors node A wrote, as A does', () =>
    withStores(2, async (_url, a, b) => {
      const libraries = [
        { id: '/x/http', title: 'http', description: 'Routing, middleware and cookies for web servers' },
        { id: '/x/tasks', title: 'tasks', description: 'A background job queue: workers, retries and backoff' },
        { id: '/x/charts', title: 'charts', description: 'Line, bar and pie charts drawn on a canvas' },
      ];
      for (const l of libraries) await a.upsertLibrary({ ...l, source: { kind: 'git', spec: { url: `https://example.com${l.id}` } } });
      const ka = nodeKernel(a);
      const kb = nodeKernel(b);
      for (const l of libraries) {
        const told = nextChange(b, 'library', l.id);
        await putLibraryVector(ka, { libraryId: l.id, model: MODEL, vector: vec(libraryEmbedText(l.title, l.description, [])) });
        await told;
      }
      const rank = async (k: Kernel, store: PostgresStore) => {
        const pool = (await store.listLibraries()) as LibraryRecord[];
        // No name matches "retry failed jobs in the background": the lexical ranking is empty.
        const fused = await fuseLibraryVectors(k, 'retry failed jobs in the background workers', [], pool);
        return fused.sort((x, y) => y.score - x.score).map((r) => r.library.id);
      };
      const onA = await rank(ka, a);
      const onB = await rank(kb, b);
      assert.equal(onB[0], '/x/tasks', `the vectors put the job queue first on B: ${onB.join(', ')}`);
      assert.deepEqual(onB, onA, 'B ranks as A does');
    }));
});
