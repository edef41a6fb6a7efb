/**
 * The PostgreSQL store's vectors in pgvector (plugins/store-postgres/vectors.ts) on PGlite with
 * its bundled `vector` extension over the wire protocol (test/helpers/pglite.ts: a pool of one):
 * a build's vectors written, described, read back and searched with the HNSW index of their
 * dimension (an unindexed dimension gets its index), reused by core's embedding step through
 * BuildStore.buildVectors, removed with a failed build and with a replaced one. Without the
 * extension (Debian's server) the store has no vector index: test/plugins/store-postgres/builds.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BuildVectorStore, Embedder } from '../../../core/contracts.ts';
import type { Kernel } from '../../../core/kernel.ts';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';
import { buildVectorsMeta, embedTexts, textHash } from '../../../core/vectors.ts';
import { startHybrid } from '../../../core/hybrid.ts';
import { PostgresStore } from '../../../plugins/store-postgres/store.ts';
import { startPglite, type TestPglite } from '../../helpers/pglite.ts';
import { memoryLogger, realClock } from '../store-embedded/helpers.ts';

/** A deterministic vector of `dims` numbers for seed `i` (a tiny LCG). */
function vec(dims: number, i: number): Float32Array {
  let s = (i + 1) * 2654435761;
  const out = new Float32Array(dims);
  for (let d = 0; d < dims; d++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out[d] = s / 2147483648 - 0.5;
  }
  return out;
}

describe('PostgreSQL store vectors in pgvector (PGlite)', () => {
  let lite: TestPglite;
  let store: PostgresStore;
  let dataDir: string;
  let vectors: BuildVectorStore;

  before(async () => {
    lite = await startPglite();
    dataDir = await mkdtemp(join(tmpdir(), 'refdesk-pgvec-'));
    store = new PostgresStore({ poolSize: 1 }, { env: { dataDir, mode: 'server' }, logger: memoryLogger(), clock: realClock, databaseUrl: lite.url });
    await store.open();
    const v = await store.buildVectors!();
    assert.ok(v, 'the store has a vector index on a database with pgvector');
    vectors = v;
  });
  after(async () => {
    await store?.close();
    await lite?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  async function builtVersion(id: string, n: number): Promise<string> {
    await store.upsertLibrary({ id, title: id, source: { kind: 'upload', spec: {} } });
    const b = await store.beginBuild(id, '', null);
    await store.addSnippets(b, Array.from({ length: n }, (_, i) => sampleSnippet({ content: `snippet ${i}` })));
    await store.finalizeBuild(b);
    return b;
  }

  test('written, described, read back and searched by cosine (384 dimensions: the migration’s index)', async () => {
    const buildId = await builtVersion('/docs/vec', 30);
    const rows = Array.from({ length: 30 }, (_, i) => vec(384, i));
    const hashes = rows.map((_, i) => textHash(`text ${i}`));
    const checksum = await vectors.write(buildId, { model: 'test-384', dimensions: 384, hashes, vectors: rows });
    assert.deepEqual(await vectors.meta(buildId), { model: 'test-384', dimensions: 384, count: 30, checksum, hashes });
    assert.deepEqual(await vectors.rows(buildId), rows);
    const hits = await vectors.query(buildId, vec(384, 17), 5);
    assert.equal(hits.length, 5);
    assert.equal(hits[0].position, 17);
    assert.ok(Math.abs(hits[0].score - 1) < 1e-5, `cosine of a vector with itself: ${hits[0].score}`);
    for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1].score >= hits[i].score, 'best first');
    // Written again (an embed job): replaced, with another checksum.
    const again = await vectors.write(buildId, { model: 'test-384', dimensions: 384, hashes: hashes.slice(0, 2), vectors: rows.slice(0, 2) });
    assert.notEqual(again, checksum);
    assert.equal((await vectors.meta(buildId))?.count, 2);
    assert.equal((await vectors.rows(buildId)).length, 2);
  });

  test('a dimension no migration indexed gets its HNSW index at its first write', async () => {
    const buildId = await builtVersion('/docs/vec10', 8);
    const rows = Array.from({ length: 8 }, (_, i) => vec(10, i));
    await vectors.write(buildId, { model: 'tiny', dimensions: 10, hashes: rows.map((_, i) => String(i)), vectors: rows });
    const indexes = (await lite.db.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE indexname = 'snippet_vectors_hnsw_10'")).rows;
    assert.equal(indexes.length, 1);
    assert.equal((await vectors.query(buildId, vec(10, 3), 3))[0].position, 3);
    // Rows of other builds and dimensions never answer for this one.
    assert.ok((await vectors.query(buildId, vec(10, 3), 50)).length === 8);
  });

  test('core reuses the stored vectors of unchanged texts and describes them as the store’s', async () => {
    const buildId = await builtVersion('/docs/reuse', 4);
    const texts = ['alpha', 'beta', 'gamma', 'delta'];
    const rows = texts.map((_, i) => vec(384, 100 + i));
    await vectors.write(buildId, { model: 'm', dimensions: 384, hashes: texts.map(textHash), vectors: rows });
    const kernel = { store, env: { dataDir, mode: 'server' } } as unknown as Kernel;
    const meta = await buildVectorsMeta(kernel, buildId);
    assert.equal(meta?.index, 'store');
    assert.equal(meta?.count, 4);
    let embedded = 0;
    const embedder: Embedder = {
      model: 'm',
      dimensions: 384,
      async embed(list) {
        embedded += list.length;
        return list.map((_, i) => vec(384, 900 + i));
      },
    } as Embedder;
    const got = await embedTexts(kernel, embedder, ['alpha', 'beta', 'epsilon', 'delta'], buildId, { signal: new AbortController().signal, log: () => {} });
    assert.equal(got.reused, 3);
    assert.equal(embedded, 1);
    assert.deepEqual(got.vectors[0], rows[0]);
    assert.deepEqual(got.vectors[3], rows[3]);
  });

  test('a hybrid search of a version with stored vectors queries pgvector and fuses its hits', async () => {
    const buildId = await builtVersion('/docs/hybrid', 30);
    const rows = Array.from({ length: 30 }, (_, i) => vec(384, i));
    await vectors.write(buildId, { model: 'h', dimensions: 384, hashes: rows.map((_, i) => String(i)), vectors: rows });
    const embedder = { model: 'h', dimensions: 384, embed: async (list: string[]) => list.map(() => vec(384, 17)) } as unknown as Embedder;
    const kernel = {
      store,
      env: { dataDir, mode: 'server' },
      logger: memoryLogger(),
      providers: { embedder: async () => embedder, resolved: async () => ({}), fingerprint: async () => 'fp' },
    } as unknown as Kernel;
    const hybrid = await startHybrid(kernel, '/docs/hybrid', '', 'anything');
    assert.ok(hybrid, 'the version has vectors of the configured embedder');
    const fused = await hybrid.fuse([], 5);
    assert.equal(fused[0]?.snippet.content, 'snippet 17');
    assert.equal(fused.length, 5);
  });

  test('vectors go with their build: a failed build’s, a replaced build’s', async () => {
    const served = await builtVersion('/docs/gone', 2);
    await vectors.write(served, { model: 'm', dimensions: 384, hashes: ['a', 'b'], vectors: [vec(384, 1), vec(384, 2)] });
    const staged = await store.beginBuild('/docs/gone', '', null);
    await store.addSnippets(staged, [sampleSnippet()]);
    await vectors.write(staged, { model: 'm', dimensions: 384, hashes: ['c'], vectors: [vec(384, 3)] });
    await store.failBuild(staged);
    assert.equal(await vectors.meta(staged), null);
    assert.deepEqual(await vectors.rows(staged), []);
    const next = await store.beginBuild('/docs/gone', '', null);
    await store.addSnippets(next, [sampleSnippet()]);
    await store.finalizeBuild(next);
    assert.deepEqual(await vectors.rows(served), [], 'the replaced build’s rows are deleted with it');
    assert.equal((await lite.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM snippet_vectors WHERE build_id = '${served}'`)).rows[0].n, 0);
  });
});
