/**
 * The PostgreSQL store's per-node segment cache, on Debian's PostgreSQL server (two stores on one
 * database, as two nodes): a segment computed with other search parameters is rebuilt from the
 * snippets it holds and written back; the disk cache stays under `segmentDiskBytes`, least
 * recently used removed first; the served build is learned from the change feed, not re-read
 * on the serving path every `pollMs`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Snippet, StoredSnippet } from '../../../core/contracts.ts';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';
import { computeIndexData } from '../../../core/search/index-data.ts';
import { DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import { writeSegment } from '../../../plugins/store-embedded/segment.ts';
import { uploadSegment } from '../../../plugins/store-postgres/segment-rows.ts';
import type { PostgresStore } from '../../../plugins/store-postgres/store.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { freshDatabaseUrl, nextChange, pgStore } from './helpers.ts';

const skip = postgresSkipReason();
const lib = (id: string) => ({ id, title: id, source: { kind: 'upload', spec: {} } });

async function build(store: PostgresStore, id: string, snippets: Snippet[]): Promise<string> {
  const b = await store.beginBuild(id, '', null);
  await store.addSnippets(b, snippets);
  await store.finalizeBuild(b);
  return b;
}

describe('PostgreSQL store segment cache', { skip }, () => {
  let url: string;
  let a: PostgresStore;
  const closers: Array<() => Promise<void>> = [];

  /** Another node on the database (its own data and cache directory). */
  async function node(options: Parameters<typeof pgStore>[1] = {}): Promise<PostgresStore> {
    const n = await pgStore(url, options);
    await n.store.open();
    closers.push(async () => {
      await n.store.close();
      await n.remove();
    });
    return n.store;
  }

  /**
   * Replaces a build's segment rows by a segment of the same snippets computed with other search
   * parameters (what an upgrade that changes the BM25 parameters finds in the database).
   */
  async function replaceWithOtherParams(buildId: string, snippets: StoredSnippet[]): Promise<void> {
    const other = { ...DEFAULT_BM25, k1: 2.0 };
    const dir = await mkdtemp(join(tmpdir(), 'refdesk-oldseg-'));
    try {
      const written = await writeSegment(dir, buildId, computeIndexData(snippets, other), snippets, other);
      await a.database.tx(async (c) => {
        await c.query('DELETE FROM segment_chunks WHERE build_id = $1', [buildId]);
        const rows = await uploadSegment(c, buildId, join(dir, written.file));
        await c.query('UPDATE builds SET segment_bytes = $2, segment_chunks = $3, segment_checksum = $4, segment_sha256 = $5 WHERE id = $1', [
          buildId,
          rows.bytes,
          rows.chunks,
          written.checksum,
          rows.sha256,
        ]);
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  before(async () => {
    url = await freshDatabaseUrl();
    a = await node();
  });
  after(async () => {
    for (const c of closers.reverse()) await c();
  });

  test('a segment in the database made with other search parameters is rebuilt from its snippets, written back and served', async () => {
    await a.upsertLibrary(lib('/docs/params'));
    const buildId = await build(a, '/docs/params', [
      sampleSnippet({ title: 'Echidna care', content: 'the echidna eats ants' }),
      sampleSnippet({ title: 'Other', content: 'unrelated prose about boats' }),
    ]);
    const snippets = (await a.getSnippets('/docs/params', '')) as StoredSnippet[];
    await replaceWithOtherParams(buildId, snippets);
    const b = await node();
    const hits = await b.search('/docs/params', '', 'echidna', 5);
    assert.equal(hits[0]?.snippet.content, 'the echidna eats ants');
    assert.equal(b.builds.cache.stats.rebuilt, 1);
    assert.deepEqual((await b.getSnippets('/docs/params', '')).map((s) => s.content), snippets.map((s) => s.content));
    // Written back: a third node fetches the rebuilt segment and opens it as it is.
    const c = await node();
    assert.equal((await c.search('/docs/params', '', 'echidna', 5))[0]?.snippet.content, 'the echidna eats ants');
    assert.equal(c.builds.cache.stats.rebuilt, 0);
    assert.equal(c.builds.cache.stats.refetched, 0);
    assert.equal(c.builds.cache.stats.fetched, 1);
  });

  test('two nodes opening a segment of other parameters at once both serve it; the database keeps one rebuilt copy', async () => {
    await a.upsertLibrary(lib('/docs/race'));
    const buildId = await build(a, '/docs/race', Array.from({ length: 40 }, (_, i) => sampleSnippet({ title: `T${i}`, content: `dingo ${i} ${i === 7 ? 'howls at dusk' : 'sleeps'}` })));
    await replaceWithOtherParams(buildId, (await a.getSnippets('/docs/race', '')) as StoredSnippet[]);
    const [b, c] = [await node(), await node()];
    const answers = await Promise.all([b, c].map((n) => n.search('/docs/race', '', 'howls', 3)));
    for (const hits of answers) assert.equal(hits[0]?.snippet.content, 'dingo 7 howls at dusk');
    assert.ok(b.builds.cache.stats.rebuilt + c.builds.cache.stats.rebuilt >= 1);
    const d = await node();
    assert.equal((await d.search('/docs/race', '', 'howls', 3))[0]?.snippet.content, 'dingo 7 howls at dusk');
    assert.equal(d.builds.cache.stats.rebuilt, 0, 'the rows hold a segment of the current parameters');
    assert.equal(d.builds.cache.stats.refetched, 0);
  });

  test('damaged rows are still refused clearly (never rebuilt from), and the node keeps serving', async () => {
    await a.upsertLibrary(lib('/docs/badold'));
    const buildId = await build(a, '/docs/badold', [sampleSnippet({ content: 'platypus notes' })]);
    await a.database.query("UPDATE segment_chunks SET bytes = set_byte(bytes, 300, (get_byte(bytes, 300) + 1) % 256) WHERE build_id = $1 AND seq = 0", [buildId]);
    const b = await node();
    await assert.rejects(b.search('/docs/badold', '', 'platypus', 5), (e: Error & { code?: string }) => e.code === 'internal_error' && /refresh the library/.test(e.message));
    assert.equal((await b.search('/docs/params', '', 'echidna', 5))[0]?.snippet.content, 'the echidna eats ants');
  });

  test('the disk cache stays under segmentDiskBytes: the least recently used segment goes, and is fetched again when asked', async () => {
    const ids = ['/docs/lru1', '/docs/lru2', '/docs/lru3'];
    const builds: string[] = [];
    for (const id of ids) {
      await a.upsertLibrary(lib(id));
      builds.push(await build(a, id, [sampleSnippet({ content: `wallaby ${id} ${'text '.repeat(200)}` })]));
    }
    const sizes = builds.map((id) => statSync(a.builds.cache.pathOf(id)).size);
    const budget = 2 * Math.max(...sizes) + Math.floor(Math.min(...sizes) / 2);
    assert.ok(sizes.reduce((x, y) => x + y) > budget);
    const b = await node({ segmentDiskBytes: budget });
    const cached = () => builds.map((id) => existsSync(b.builds.cache.pathOf(id)));
    for (const id of ids) assert.match((await b.search(id, '', 'wallaby', 5))[0]?.snippet.content ?? '', /wallaby/);
    assert.deepEqual(cached(), [false, true, true], 'the first used is removed');
    assert.ok(b.builds.cache.diskUsage.bytes <= budget);
    // lru2 used again: lru3 is now the least recently used.
    await b.search(ids[1], '', 'wallaby', 5);
    assert.match((await b.search(ids[0], '', 'wallaby', 5))[0]?.snippet.content ?? '', /lru1/);
    assert.deepEqual(cached(), [true, true, false]);
    assert.equal(b.builds.cache.stats.fetched, 4);
    // lru3 asked again: fetched, and lru2 (used before lru1) goes.
    assert.match((await b.search(ids[2], '', 'wallaby', 5))[0]?.snippet.content ?? '', /lru3/);
    assert.deepEqual(cached(), [true, false, true]);
    // A node started on a cache directory over its budget trims it at its first use.
    const dir = b.database.cacheDir;
    const c = await node({ cacheDir: dir, segmentDiskBytes: Math.max(...sizes) });
    await c.search(ids[2], '', 'wallaby', 5);
    assert.deepEqual(cached(), [false, false, true]);
  });

  test('the served build is learned from the change feed: no re-read of versions on the serving path', async () => {
    const b = await node({ pollMs: 100 });
    await a.upsertLibrary(lib('/docs/feed'));
    await build(a, '/docs/feed', [sampleSnippet({ content: 'first bilby' })]);
    assert.equal((await b.search('/docs/feed', '', 'bilby', 5))[0]?.snippet.content, 'first bilby');
    // The first build published several changes (library, job, build); one may reach B after its
    // first search (it then reads the served build again, rightly). Let them all arrive first.
    await new Promise((r) => setTimeout(r, 1000));
    await b.search('/docs/feed', '', 'bilby', 5);
    const reads = b.builds.cache.servedReads;
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 120)); // longer than pollMs each time
      await b.search('/docs/feed', '', 'bilby', 5);
      await b.segmentFile!('/docs/feed', '');
    }
    assert.equal(b.builds.cache.servedReads, reads, 'served build not read again while nothing changed');
    const heard = nextChange(b, 'library', '/docs/feed', a.database.nodeId);
    await build(a, '/docs/feed', [sampleSnippet({ content: 'second bilby' })]);
    await heard;
    assert.equal((await b.search('/docs/feed', '', 'bilby', 5))[0]?.snippet.content, 'second bilby');
    assert.equal(b.builds.cache.servedReads, reads + 1);
  });
});
