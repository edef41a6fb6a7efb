/**
 * Build vectors without pgvector (plugins/store-postgres/vectors.ts PgRowVectors, migration 009)
 * on Debian's PostgreSQL server, which has no `vector` extension: two stores on one database as
 * two nodes. Vectors embedded at ingest through A (core's IngestVectors, a hash embedder) are
 * fetched, checked and used by B's hybrid search; reused by B's embedding step; rewritten vectors
 * replace B's copy; damaged rows leave B's answer lexical; a replaced build's vectors go.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder, SearchHit, Snippet } from '../../../core/contracts.ts';
import type { Kernel } from '../../../core/kernel.ts';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';
import { startHybrid } from '../../../core/hybrid.ts';
import { IngestVectors, buildVectorsMeta, embedTexts, snippetEmbedText } from '../../../core/vectors.ts';
import type { PostgresStore } from '../../../plugins/store-postgres/store.ts';
import { hashEmbedding } from '../../helpers/hash-embedding.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { memoryLogger } from '../store-embedded/helpers.ts';
import { freshDatabaseUrl, nextChange, pgStore } from './helpers.ts';

const skip = postgresSkipReason();
const DIMS = 64;

/** The hash embedder (not a model) under a name; counts the texts it embedded. */
function hashEmbedder(model: string): Embedder & { embedded: number } {
  const e = {
    model,
    dimensions: DIMS,
    embedded: 0,
    async embed(texts: string[]) {
      e.embedded += texts.length;
      return texts.map((t) => hashEmbedding(`${model} ${t}`, DIMS));
    },
  };
  return e as unknown as Embedder & { embedded: number };
}

/** The parts of a kernel core's vector code uses, on one node's store. */
function kernelOf(store: PostgresStore, embedder: Embedder): Kernel {
  return {
    store,
    env: store.database.env,
    logger: memoryLogger(),
    providers: { embedder: async () => embedder, resolved: async () => ({}), fingerprint: async () => `fp:${embedder.model}` },
  } as unknown as Kernel;
}

const run = { signal: new AbortController().signal, log: () => {} };

const SNIPPETS: Snippet[] = [
  sampleSnippet({ title: 'Kangaroo', content: 'marsupials hop across the outback grasslands' }),
  sampleSnippet({ title: 'Reef', content: 'coral polyps build the great barrier reef' }),
  sampleSnippet({ title: 'Desert', content: 'spinifex grows in red sand dunes' }),
  sampleSnippet({ title: 'Rainforest', content: 'cassowaries walk under the daintree canopy' }),
];

describe('PostgreSQL store vectors without pgvector, across two nodes', { skip }, () => {
  let url: string;
  let a: PostgresStore;
  let b: PostgresStore;
  const closers: Array<() => Promise<void>> = [];

  async function node(): Promise<PostgresStore> {
    const n = await pgStore(url);
    await n.store.open();
    closers.push(async () => {
      await n.store.close();
      await n.remove();
    });
    return n.store;
  }

  /** A build of SNIPPETS through `store`, embedded at ingest (before finalize) as core does. */
  async function ingest(store: PostgresStore, id: string, embedder: Embedder): Promise<string> {
    await store.upsertLibrary({ id, title: id, source: { kind: 'upload', spec: {} } });
    const buildId = await store.beginBuild(id, '', null);
    const vectors = await IngestVectors.start(kernelOf(store, embedder));
    assert.ok(vectors);
    await store.addSnippets(buildId, SNIPPETS);
    vectors.add(SNIPPETS);
    await vectors.finish(buildId, { libraryId: id, version: '' }, null, run);
    await store.finalizeBuild(buildId);
    return buildId;
  }

  async function vectorHits(store: PostgresStore, embedder: Embedder, id: string, question: string, lexical: SearchHit[] = []): Promise<SearchHit[]> {
    const hybrid = await startHybrid(kernelOf(store, embedder), id, '', question);
    assert.ok(hybrid, 'the version has vectors of the configured embedder on this node');
    return hybrid.fuse(lexical, 4);
  }

  before(async () => {
    url = await freshDatabaseUrl();
    a = await node();
    b = await node();
  });
  after(async () => {
    for (const c of closers.reverse()) await c();
  });

  test('vectors embedded through A are in the database, not in A’s files, and B’s hybrid search uses them', async () => {
    const embedder = hashEmbedder('hash-a');
    const buildId = await ingest(a, '/docs/aus', embedder);
    assert.equal(existsSync(join(a.database.env.dataDir, 'vectors', buildId)), false, 'no vector files on the node that embedded');
    const meta = await buildVectorsMeta(kernelOf(b, embedder), buildId);
    assert.equal(meta?.index, 'store');
    assert.equal(meta?.count, SNIPPETS.length);
    assert.equal(meta?.dimensions, DIMS);
    const hits = await vectorHits(b, embedder, '/docs/aus', snippetEmbedText(SNIPPETS[1]));
    assert.equal(hits[0]?.snippet.content, 'coral polyps build the great barrier reef');
    assert.equal(hits.length, SNIPPETS.length);
    assert.ok(existsSync(b.builds.cache.vectorsPathOf(buildId)), 'B cached the vectors it fetched');
    // Warm: the vectors' record (one text hash per snippet) and matrix come from B's memory, no statement.
    const stored = (await b.buildVectors!())!;
    const query = b.database.query.bind(b.database);
    let statements = 0;
    b.database.query = ((...args: Parameters<typeof query>) => {
      statements++;
      return query(...args);
    }) as typeof query;
    try {
      assert.equal((await stored.meta(buildId))?.checksum, meta?.checksum);
      assert.equal((await stored.query(buildId, hashEmbedding('hash-a coral', DIMS), 2)).length, 2);
    } finally {
      b.database.query = query;
    }
    assert.equal(statements, 0);
    // B's embedding step reuses them for unchanged texts (a refresh run on B).
    const again = hashEmbedder('hash-a');
    const got = await embedTexts(kernelOf(b, again), again, SNIPPETS.map((s) => snippetEmbedText(s)), buildId, run);
    assert.equal(got.reused, SNIPPETS.length);
    assert.equal(again.embedded, 0);
  });

  test('vectors rewritten (an embed job of another model) replace B’s cached copy', async () => {
    const buildId = (await a.getVersion('/docs/aus', ''))!.activeBuildId!;
    const old = await buildVectorsMeta(kernelOf(b, hashEmbedder('hash-a')), buildId);
    const next = hashEmbedder('hash-b');
    const texts = SNIPPETS.map((s) => snippetEmbedText(s));
    const got = await embedTexts(kernelOf(a, next), next, texts, buildId, run);
    const stored = (await a.buildVectors!())!;
    // B hears of the write through the change feed (the vectors' record is kept until then).
    const heard = nextChange(b, 'library', '/docs/aus', a.database.nodeId);
    await stored.write(buildId, { model: 'hash-b', dimensions: DIMS, hashes: got.hashes, vectors: got.vectors });
    await heard;
    const meta = await buildVectorsMeta(kernelOf(b, next), buildId);
    assert.equal(meta?.model, 'hash-b');
    assert.notEqual(meta?.checksum, old?.checksum);
    const hits = await vectorHits(b, next, '/docs/aus', texts[3]);
    assert.equal(hits[0]?.snippet.content, 'cassowaries walk under the daintree canopy');
    // The rows B searched are the new ones (the same on A and B).
    assert.deepEqual(await (await b.buildVectors!())!.rows(buildId), await stored.rows(buildId));
  });

  test('damaged rows are refused by their checksum: a third node answers lexically, no crash', async () => {
    const embedder = hashEmbedder('hash-c');
    const buildId = await ingest(a, '/docs/damaged', embedder);
    await a.database.query('UPDATE vector_chunks SET bytes = set_byte(bytes, 5, (get_byte(bytes, 5) + 1) % 256) WHERE build_id = $1 AND seq = 0', [buildId]);
    const c = await node();
    const lexical = await c.search('/docs/damaged', '', 'spinifex', 4);
    assert.equal(lexical[0]?.snippet.content, 'spinifex grows in red sand dunes');
    const fused = await vectorHits(c, embedder, '/docs/damaged', 'coral reef', lexical);
    assert.deepEqual(fused, lexical, 'the vector side failed: the lexical hits unchanged');
    assert.equal(existsSync(c.builds.cache.vectorsPathOf(buildId)), false, 'nothing damaged cached');
    await assert.rejects((await c.buildVectors!())!.rows(buildId), /damaged/);
  });

  test('a replaced build’s vectors go with it, from the database and from B’s cache', async () => {
    const embedder = hashEmbedder('hash-d');
    const first = await ingest(a, '/docs/replaced', embedder);
    await vectorHits(b, embedder, '/docs/replaced', 'coral');
    assert.ok(existsSync(b.builds.cache.vectorsPathOf(first)));
    await ingest(a, '/docs/replaced', embedder);
    assert.equal((await a.database.query<{ n: number }>('SELECT count(*)::int AS n FROM vector_chunks WHERE build_id = $1', [first]))[0].n, 0);
    // B is told by the change feed; its next use of the library drops the replaced build's files.
    for (let i = 0; i < 100 && existsSync(b.builds.cache.vectorsPathOf(first)); i++) {
      await b.search('/docs/replaced', '', 'coral', 4);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(existsSync(b.builds.cache.vectorsPathOf(first)), false);
  });
});
