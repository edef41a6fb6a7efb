/**
 * The PostgreSQL store's builds role across nodes, on Debian's PostgreSQL server: two
 * PostgresStore instances on one database (each its own data and cache directory, as two nodes),
 * segments fetched from the database once per node, a node told of a new build serving it and
 * dropping the old file, damaged or missing cached files fetched again, damaged rows refused
 * clearly, stored documents brought to another node, and answers identical to the embedded store.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { open, readdir, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Snippet } from '../../../core/contracts.ts';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';
import { StoredDocsWriter, readStoredDocs, storedDocsPath, type StoredDocument } from '../../../core/stored-docs.ts';
import { HEADER_BYTES } from '../../../plugins/store-embedded/segment.ts';
import type { PostgresStore } from '../../../plugins/store-postgres/store.ts';
import { chunkedCorpus, hasCorpora, hasSharedQuestions, sharedQuestions } from '../../helpers/corpora.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { makeStore, tempDataDir } from '../store-embedded/helpers.ts';
import { freshDatabaseUrl, pgStore } from './helpers.ts';

const skip = postgresSkipReason();

const lib = (id: string) => ({ id, title: id, source: { kind: 'upload', spec: {} } });

async function build(store: PostgresStore, id: string, snippets: Snippet[], beforeFinalize?: (buildId: string) => Promise<void>): Promise<string> {
  const b = await store.beginBuild(id, '', null);
  for (let i = 0; i < snippets.length; i += 250) await store.addSnippets(b, snippets.slice(i, i + 250));
  await beforeFinalize?.(b);
  await store.finalizeBuild(b);
  return b;
}

/** Flips one byte of a file at `position`. */
async function flipByte(path: string, position: number): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, position);
    b[0] ^= 0xff;
    await fh.write(b, 0, 1, position);
  } finally {
    await fh.close();
  }
}

describe('PostgreSQL store builds across two nodes', { skip }, () => {
  let a: PostgresStore;
  let b: PostgresStore;
  let url: string;
  const removers: Array<() => Promise<void>> = [];

  before(async () => {
    url = await freshDatabaseUrl();
    const na = await pgStore(url);
    const nb = await pgStore(url);
    a = na.store;
    b = nb.store;
    removers.push(na.remove, nb.remove);
    await a.open();
    await b.open();
  });
  after(async () => {
    await a?.close();
    await b?.close();
    for (const r of removers) await r();
  });

  test('without the vector extension the store keeps vectors in rows (vector-rows.test.ts), not in files', async () => {
    assert.equal((await a.buildVectors!())?.constructor.name, 'PgRowVectors');
  });

  test('a build finalized through A is served by B, whose cache fetches the segment once', async () => {
    await a.upsertLibrary(lib('/docs/two'));
    const buildId = await build(a, '/docs/two', [sampleSnippet({ content: 'the quokka lives on Rottnest' }), sampleSnippet({ content: 'other prose' })]);
    assert.equal(b.builds.stats().fetched, 0);
    for (let i = 0; i < 3; i++) {
      const hits = await b.search('/docs/two', '', 'quokka', 5);
      assert.equal(hits[0]?.snippet.content, 'the quokka lives on Rottnest');
    }
    assert.deepEqual((await b.getSnippets('/docs/two', '')).map((s) => s.content), ['the quokka lives on Rottnest', 'other prose']);
    assert.equal(b.builds.stats().fetched, 1, 'fetched from the database once');
    assert.equal(a.builds.stats().fetched, 0, 'the finalizing node serves the segment it wrote');
    const ref = await b.segmentFile!('/docs/two', '');
    assert.equal(ref?.buildId, buildId);
    assert.ok(ref && ref.path.startsWith(b.database.cacheDir), 'the path is in B’s own cache');
    assert.equal(readFileSync(ref!.path).length, Number((await b.database.query('SELECT segment_bytes FROM builds WHERE id = $1', [buildId]))[0].segment_bytes));
  });

  test('a new build through A reaches B through the change feed; B drops the old cached file', async () => {
    await a.upsertLibrary(lib('/docs/refresh'));
    const first = await build(a, '/docs/refresh', [sampleSnippet({ content: 'first wombat edition' })]);
    assert.equal((await b.search('/docs/refresh', '', 'wombat', 5))[0]?.snippet.content, 'first wombat edition');
    const oldFile = b.builds.cache.pathOf(first);
    assert.ok(existsSync(oldFile));
    // B hears of A's finalize through the change feed (LISTEN/NOTIFY, notify.ts).
    const heard = new Promise<void>((resolve) => {
      const on = (topic: string, id: string, from: string) => {
        if (topic !== 'library' || id !== '/docs/refresh' || from !== a.database.nodeId) return;
        b.database.changes.off('change', on);
        resolve();
      };
      b.database.changes.on('change', on);
    });
    const second = await build(a, '/docs/refresh', [sampleSnippet({ content: 'second wombat edition' })]);
    await heard;
    assert.equal((await b.search('/docs/refresh', '', 'wombat', 5))[0]?.snippet.content, 'second wombat edition');
    assert.equal((await b.segmentFile!('/docs/refresh', ''))?.buildId, second);
    assert.ok(!existsSync(oldFile), 'the replaced build’s cached segment is removed');
    assert.equal((await b.database.query('SELECT count(*)::int AS n FROM segment_chunks WHERE build_id = $1', [first]))[0].n, 0, 'the old rows are gone');
  });

  test('a node without LISTEN (polling the change feed) serves the new build', async () => {
    const polling = await pgStore(url, { pollMs: 20, listen: false });
    removers.push(polling.remove);
    const c = polling.store;
    await c.open();
    try {
      await a.upsertLibrary(lib('/docs/poll'));
      await build(a, '/docs/poll', [sampleSnippet({ content: 'old numbat' })]);
      assert.equal((await c.search('/docs/poll', '', 'numbat', 5))[0]?.snippet.content, 'old numbat');
      await build(a, '/docs/poll', [sampleSnippet({ content: 'new numbat' })]);
      // Polled every 20 ms (and the served build read again after pollMs): within a few polls.
      for (let i = 0; i < 100 && (await c.search('/docs/poll', '', 'numbat', 5))[0]?.snippet.content !== 'new numbat'; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal((await c.search('/docs/poll', '', 'numbat', 5))[0]?.snippet.content, 'new numbat');
    } finally {
      await c.close();
    }
  });

  test('a build staged on A cannot be finalized through B (its snippets are on A’s disk)', async () => {
    await a.upsertLibrary(lib('/docs/elsewhere'));
    const served = await build(a, '/docs/elsewhere', [sampleSnippet({ content: 'served bilby' })]);
    const staged = await a.beginBuild('/docs/elsewhere', '', null);
    await a.addSnippets(staged, [sampleSnippet({ content: 'staged bilby' })]);
    await assert.rejects(b.finalizeBuild(staged), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'invalid_request');
      assert.match(err.message, /another process/);
      return true;
    });
    assert.equal((await b.getVersion('/docs/elsewhere', ''))?.activeBuildId, served, 'the served build is untouched');
    await a.finalizeBuild(staged);
    assert.equal((await a.search('/docs/elsewhere', '', 'bilby', 5))[0]?.snippet.content, 'staged bilby');
  });

  test('a damaged or missing cached segment is fetched again, never served', async () => {
    await a.upsertLibrary(lib('/docs/damage'));
    const snippets = Array.from({ length: 40 }, (_, i) => sampleSnippet({ title: `Part ${i}`, content: `filler text number ${i}` }));
    snippets[20] = sampleSnippet({ title: 'Target', content: 'the platypus lays eggs' });
    const buildId = await build(a, '/docs/damage', snippets);
    const search = async () => (await b.search('/docs/damage', '', 'platypus', 3))[0]?.snippet.content;
    assert.equal(await search(), 'the platypus lays eggs');
    const file = b.builds.cache.pathOf(buildId);
    const before = { ...b.builds.stats() };

    // The index part damaged while closed: found when the file is opened.
    b.builds.cache.segments.clear();
    await flipByte(file, HEADER_BYTES + 40);
    assert.equal(await search(), 'the platypus lays eggs');
    assert.equal(b.builds.stats().refetched, before.refetched + 1);
    assert.equal(b.builds.stats().fetched, before.fetched + 1);

    // A snippet record damaged while the segment is open: found when the record is read. The
    // snippet part ends where the postings part (segment format 2) begins: header, index part
    // and snippet part lengths are in the header.
    const header = readFileSync(file).subarray(0, HEADER_BYTES);
    await flipByte(file, HEADER_BYTES + header.readDoubleLE(16) + header.readDoubleLE(24) - 3);
    const all = await b.getSnippets('/docs/damage', '');
    assert.equal(all.length, 40);
    assert.equal(all[39].content, 'filler text number 39');
    assert.equal(b.builds.stats().refetched, before.refetched + 2);

    // Missing: fetched again.
    b.builds.cache.segments.clear();
    await unlink(file);
    assert.equal(await search(), 'the platypus lays eggs');
    assert.equal(b.builds.stats().fetched, before.fetched + 3);
  });

  test('damaged rows in the database are refused with a clear error, and the node keeps serving others', async () => {
    const fresh = await pgStore(url);
    removers.push(fresh.remove);
    const c = fresh.store;
    await c.open();
    try {
      await a.upsertLibrary(lib('/docs/rows'));
      const buildId = await build(a, '/docs/rows', [sampleSnippet({ content: 'echidna spines' })]);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query("UPDATE segment_chunks SET bytes = overlay(bytes placing '\\x00ff'::bytea from 300 for 2) WHERE build_id = $1 AND seq = 0", [buildId]);
      } finally {
        await client.end();
      }
      await assert.rejects(c.search('/docs/rows', '', 'echidna', 5), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'internal_error');
        assert.match(err.message, /damaged/);
        assert.match(err.message, /refresh the library/);
        return true;
      });
      assert.deepEqual(await readdir(c.database.cacheDir).then((names) => names.filter((n) => n.includes(buildId))), [], 'no file is kept');
      assert.equal((await c.search('/docs/two', '', 'quokka', 5))[0]?.snippet.content, 'the quokka lives on Rottnest');
    } finally {
      await c.close();
    }
  });

  test('stored documents written on A are brought to B’s disk for a re-chunk', async () => {
    await a.upsertLibrary(lib('/docs/stored'));
    const docs: StoredDocument[] = [
      { path: 'z-first.md', format: 'markdown', content: '# Z\n\nfirst by source order', hash: 'h1', meta: {} },
      { path: 'a-second.md', format: 'markdown', content: '# A\n\n' + 'long text '.repeat(50_000), hash: 'h2', meta: { etag: '"x"' }, title: 'A' },
      // Incompressible: more than one 1 MiB piece once gzipped.
      { path: 'm-big.md', format: 'markdown', content: randomBytes(1_200_000).toString('base64'), hash: 'h3', meta: {} },
    ];
    const buildId = await build(a, '/docs/stored', [sampleSnippet()], async (id) => {
      await a.addDocuments(id, docs.map((d) => ({ path: d.path, hash: d.hash, meta: d.meta, chunker: 'c1' })));
      const out = await StoredDocsWriter.create(a.database.env.dataDir, id);
      for (const d of docs) await out.add(d);
      await out.commit();
    });
    assert.ok(!existsSync(storedDocsPath(b.database.env.dataDir, buildId)));
    const [big] = await b.database.query<{ n: number }>('SELECT count(*)::int AS n FROM document_chunks WHERE build_id = $1 AND path = $2', [buildId, 'm-big.md']);
    assert.ok(big.n > 1, 'the big document is stored in several pieces');
    assert.equal(await b.builds.localStoredDocs(buildId), true);
    const got: StoredDocument[] = [];
    for await (const d of readStoredDocs(b.database.env.dataDir, buildId)) got.push(d);
    assert.deepEqual(got, docs);
    // A build without stored documents: nothing to bring.
    const bare = await build(a, '/docs/stored', [sampleSnippet()]);
    assert.equal(await b.builds.localStoredDocs(bare), false);
    assert.ok(!existsSync(storedDocsPath(a.database.env.dataDir, buildId)), 'the replaced build’s local copy is removed on A');
  });
});

describe('PostgreSQL and embedded stores answer alike', { skip: skip || (!hasCorpora && 'needs ../shared/corpora') }, () => {
  /** The benchmark's questions on this corpus (../shared/bench), or a few of our own without it. */
  const questions = (corpus: string): string[] =>
    hasSharedQuestions ? sharedQuestions(corpus) : ['register a plugin', 'validate the request body', 'hooks onRequest'];

  test('the fastify corpus: same hits, same scores, same snippets for the benchmark questions', async () => {
    const snippets = chunkedCorpus('fastify');
    assert.ok(snippets.length > 300, 'large enough to build its segment in a worker thread');
    const data = await tempDataDir();
    const embedded = makeStore(data.dir, 'writer');
    const dbUrl = await freshDatabaseUrl();
    const node = await pgStore(dbUrl);
    // A second node, which fetches the segment (several 1 MiB pieces) from the database.
    const other = await pgStore(dbUrl);
    await embedded.open();
    await node.store.open();
    await other.store.open();
    try {
      for (const store of [embedded, node.store]) {
        await store.upsertLibrary(lib('/fastify/fastify'));
        const b = await store.beginBuild('/fastify/fastify', '', null);
        for (let i = 0; i < snippets.length; i += 250) await store.addSnippets(b, snippets.slice(i, i + 250));
        await store.finalizeBuild(b);
      }
      assert.equal(node.store.builds.segmentBuilds.workerThread, 1);
      const strip = (s: { id: number; seq: number }) => ({ ...s, id: 0, seq: 0 });
      assert.deepEqual((await node.store.getSnippets('/fastify/fastify', '')).map(strip), (await embedded.getSnippets('/fastify/fastify', '')).map(strip));
      const asked = questions('fastify');
      assert.ok(asked.length >= 3);
      for (const q of asked) {
        const want = await embedded.search('/fastify/fastify', '', q, 10);
        const got = await node.store.search('/fastify/fastify', '', q, 10);
        assert.ok(want.length > 0, q);
        assert.deepEqual(
          got.map((h) => ({ ...h, snippet: strip(h.snippet) })),
          want.map((h) => ({ ...h, snippet: strip(h.snippet) })),
          q,
        );
        assert.deepEqual(await other.store.search('/fastify/fastify', '', q, 10), got, `${q} (the other node)`);
      }
      const [pieces] = await node.store.database.query<{ n: number }>('SELECT segment_chunks AS n FROM builds WHERE state = $1', ['finalized']);
      assert.ok(pieces.n > 1, `the segment is stored in several pieces (${pieces.n})`);
      assert.equal(other.store.builds.stats().fetched, 1);
      const v = await node.store.getVersion('/fastify/fastify', '');
      assert.deepEqual(
        { snippets: v?.totalSnippets, tokens: v?.totalTokens },
        { snippets: (await embedded.getVersion('/fastify/fastify', ''))?.totalSnippets, tokens: (await embedded.getVersion('/fastify/fastify', ''))?.totalTokens },
      );
    } finally {
      await embedded.close();
      await node.store.close();
      await other.store.close();
      await data.remove();
      await node.remove();
      await other.remove();
    }
  });
});
