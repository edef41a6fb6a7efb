import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { readFile, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Snippet } from '../../../core/contracts.ts';
import { computeIndexData } from '../../../core/search/index-data.ts';
import { DEFAULT_BM25, buildLexicalIndex } from '../../../core/search/lexical-index.ts';
import { stem } from '../../../core/search/tokenize.ts';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';
import { HEADER_BYTES, SEGMENT_DIR, SEGMENT_FORMAT, removeSegments } from '../../../plugins/store-embedded/segment.ts';
import { loadSqlJs } from '../../../plugins/store-embedded/sqlite.ts';
import type { EmbeddedStore } from '../../../plugins/store-embedded/embedded-store.ts';
import { chunkedCorpus, hasCorpora } from '../../helpers/corpora.ts';
import { withReopenableStore } from './helpers.ts';

const QUESTIONS = [
  'how do I write middleware',
  'ctx.throw with a status and message',
  'error handling in koa',
  'set a cookie signed',
  'how to stream a response body',
  '"Cannot set headers after they are sent"',
  'app.listen port',
];

/** The koa corpus chunked as an upload ingest would. */
function koaSnippets(): Snippet[] {
  return chunkedCorpus('koa');
}

const withStore = withReopenableStore;

async function addLibrary(store: EmbeddedStore, id: string, snippets: Snippet[]): Promise<string> {
  await store.upsertLibrary({ id, title: id, source: { kind: 'upload', spec: {} } });
  const b = await store.beginBuild(id, '', null);
  await store.addSnippets(b, snippets);
  await store.finalizeBuild(b);
  return b;
}

/** What a search answers, comparable across stores: ids, scores, units and the snippets' fields. */
async function answers(store: EmbeddedStore, id: string): Promise<string> {
  const out = [];
  for (const q of QUESTIONS) out.push(await store.search(id, '', q, 60));
  return JSON.stringify(out);
}

async function queryFile(dir: string, sql: string): Promise<unknown[][]> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(await readFile(join(dir, 'refdesk.sqlite')));
  try {
    return db.exec(sql)[0]?.values ?? [];
  } finally {
    db.close();
  }
}

async function segmentRow(dir: string, buildId: string): Promise<unknown[]> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(await readFile(join(dir, 'refdesk.sqlite')));
  try {
    return db.exec('SELECT segment_file, segment_format, segment_checksum FROM builds WHERE id = ?', [buildId])[0]?.values[0] ?? [];
  } finally {
    db.close();
  }
}

const segFile = (dir: string, buildId: string) => join(dir, SEGMENT_DIR, `${buildId}.seg`);

type ArrayEntry = { name: string; offset: number; length: number };

/** The JSON description of a segment file's index part. */
function segmentMeta(bytes: Buffer): Record<string, unknown> & { arrays: ArrayEntry[]; paged: ArrayEntry[] } {
  const metaLength = bytes.readUInt32LE(HEADER_BYTES);
  return JSON.parse(bytes.toString('utf8', HEADER_BYTES + 4, HEADER_BYTES + 4 + metaLength));
}

/** Strings a segment file keeps as a UTF-8 table (`<name>.start` offsets into `<name>.bytes`), decoded. */
function segmentStrings(bytes: Buffer, arrays: ArrayEntry[], name: string): string[] {
  const entry = (n: string) => {
    const e = arrays.find((a) => a.name === n);
    assert.ok(e, `array ${n} is in the index part`);
    return e;
  };
  const start = entry(`${name}.start`);
  const blob = entry(`${name}.bytes`);
  const offset = (i: number) => bytes.readUInt32LE(HEADER_BYTES + start.offset + 4 * i);
  return Array.from({ length: start.length - 1 }, (_, i) => bytes.toString('utf8', HEADER_BYTES + blob.offset + offset(i), HEADER_BYTES + blob.offset + offset(i + 1)));
}

const segmentTerms = (bytes: Buffer, arrays: ArrayEntry[]) => segmentStrings(bytes, arrays, 'terms');

describe('index segments', { skip: !hasCorpora && 'needs ../shared/corpora' }, () => {
  const koa = hasCorpora ? koaSnippets() : [];

  test('finalizing a build writes its segment, recorded in the catalog; searches answer as the in-memory index does', () =>
    withStore(async ({ dir, store }) => {
      const buildId = await addLibrary(store, '/docs/koa', koa);
      assert.ok(existsSync(segFile(dir, buildId)));
      await store.flush();
      const [file, format, checksum] = await segmentRow(dir, buildId);
      assert.equal(file, `${buildId}.seg`);
      assert.equal(format, SEGMENT_FORMAT);
      assert.match(String(checksum), /^[0-9a-f]{64}$/);

      const served = await store.getSnippets('/docs/koa', '');
      assert.equal(served.length, koa.length);
      const memory = buildLexicalIndex(served);
      const byId = new Map(served.map((s) => [s.id, s]));
      for (const q of QUESTIONS) {
        const expected = memory.search(q, 60).map((r) => (r.unit ? { snippet: byId.get(r.id), score: r.score, unit: r.unit } : { snippet: byId.get(r.id), score: r.score }));
        const got = await store.search('/docs/koa', '', q, 60);
        assert.ok(got.length > 0, q);
        assert.deepEqual(got, expected, q);
        assert.ok(got.every((h) => Object.isFrozen(h.snippet) && Object.isFrozen(h.snippet.breadcrumb)));
      }

      // Format 4: the dictionary and the page paths are UTF-8 tables of the index part, not JSON.
      // Pages with non-ASCII paths (the tokenizer's words are ASCII; a page path is any text).
      const words = ['café', 'naïve', '中文文档', '𝒳variable', 'Ａwide', 'zebra'];
      const odd = words.map((w, i) => sampleSnippet({ title: `Part ${i}`, content: `About ${w} and more.`, breadcrumb: ['Guide', `Part ${i}`], sourcePath: `docs/${w}.md` }));
      const oddId = await addLibrary(store, '/docs/odd', odd);
      const oddServed = await store.getSnippets('/docs/odd', '');
      const oddById = new Map(oddServed.map((s) => [s.id, s]));
      const oddIndex = buildLexicalIndex(oddServed);
      for (const q of [...words, 'more about', 'Part 3']) {
        const expected = oddIndex.search(q, 10).map((r) => (r.unit ? { snippet: oddById.get(r.id), score: r.score, unit: r.unit } : { snippet: oddById.get(r.id), score: r.score }));
        assert.deepEqual(await store.search('/docs/odd', '', q, 10), expected, q);
      }
      for (const w of ['variable', 'wide', 'zebra']) assert.equal((await store.search('/docs/odd', '', w, 1)).length, 1, `${w} is found`);
      for (const [id, snippets] of [[buildId, served], [oddId, oddServed]] as const) {
        const bytes = await readFile(segFile(dir, id));
        const meta = segmentMeta(bytes);
        assert.ok(!('terms' in meta) && !('pagePaths' in meta), 'the JSON description holds no dictionary and no page paths');
        const computed = computeIndexData(snippets, DEFAULT_BM25);
        assert.deepEqual(segmentStrings(bytes, meta.arrays, 'terms'), computed.terms);
        assert.deepEqual(segmentStrings(bytes, meta.arrays, 'pages'), computed.pagePaths);
      }
      assert.ok(computeIndexData(oddServed, DEFAULT_BM25).pagePaths.includes('docs/中文文档.md'));
    }));

  test('after a restart the first query reads the segment and rebuilds nothing', () =>
    withStore(async ({ store, reopen, logs }) => {
      await addLibrary(store, '/docs/koa', koa);
      const before = await answers(store, '/docs/koa');
      const again = await reopen();
      assert.deepEqual(again.segmentStats, { opened: 0, rebuilt: 0 }, 'opening the store reads no segment');
      assert.equal(await answers(again, '/docs/koa'), before);
      assert.deepEqual(again.segmentStats, { opened: 1, rebuilt: 0 });
      const reader = await reopen('reader');
      assert.equal(await answers(reader, '/docs/koa'), before);
      assert.deepEqual(reader.segmentStats, { opened: 1, rebuilt: 0 });
      assert.equal(logs.filter((l) => l.level === 'warn').length, 0);
    }));

  test('a query reads only the snippet records it returns', () =>
    withStore(async ({ dir, store, reopen, logs }) => {
      const buildId = await addLibrary(store, '/docs/koa', koa);
      const hits = await store.search('/docs/koa', '', 'how do I write middleware', 5);
      const returned = new Set(hits.map((h) => h.snippet.id));
      // Damage the last bytes of the snippet part (the postings part follows it): the record of
      // the last snippet, unless returned.
      const served = await store.getSnippets('/docs/koa', '');
      const last = served[served.length - 1];
      assert.ok(!returned.has(last.id));
      const file = segFile(dir, buildId);
      const bytes = await readFile(file);
      bytes[HEADER_BYTES + bytes.readDoubleLE(16) + bytes.readDoubleLE(24) - 2] ^= 0x20;
      await writeFile(file, bytes);
      const again = await reopen();
      assert.deepEqual(
        (await again.search('/docs/koa', '', 'how do I write middleware', 5)).map((h) => h.snippet.id),
        hits.map((h) => h.snippet.id),
      );
      assert.deepEqual(again.segmentStats, { opened: 1, rebuilt: 0 }, 'the damaged record was not read');
      // Reading it (getSnippets aside, a search returning it) finds the damage and rebuilds.
      const words = last.title || last.content.slice(0, 60);
      const found = await again.search('/docs/koa', '', words, 2000);
      assert.ok(found.some((h) => h.snippet.id === last.id && h.snippet.content === last.content));
      assert.equal(again.segmentStats.rebuilt, 1);
      assert.ok(logs.some((l) => l.level === 'warn' && /rebuilding the index segment/.test(l.message) && l.fields?.reason === 'corrupt'));
    }));

  test('postings are read by term when a query needs them: a damaged list is found by the query that reads it, and the segment rebuilt', () =>
    withStore(async ({ dir, store, reopen, logs }) => {
      const buildId = await addLibrary(store, '/docs/koa', koa);
      const before = await answers(store, '/docs/koa');
      const otherQuestion = 'set a cookie signed';
      const other = JSON.stringify(await store.search('/docs/koa', '', otherQuestion, 10));
      await store.close();
      // The file's own description: the index part's JSON, the postings part after the snippets.
      const file = segFile(dir, buildId);
      const bytes = await readFile(file);
      const indexLength = bytes.readDoubleLE(16);
      const postingsBase = HEADER_BYTES + indexLength + bytes.readDoubleLE(24);
      assert.equal(postingsBase + bytes.readDoubleLE(144), bytes.length);
      const metaLength = bytes.readUInt32LE(HEADER_BYTES);
      const meta = JSON.parse(bytes.toString('utf8', HEADER_BYTES + 4, HEADER_BYTES + 4 + metaLength)) as {
        arrays: Array<{ name: string; offset: number; length: number }>;
        paged: Array<{ name: string; offset: number; length: number }>;
      };
      const terms = segmentTerms(bytes, meta.arrays);
      assert.ok(!meta.arrays.some((a) => a.name.endsWith('.docs') || a.name.endsWith('.tfw')), 'the index part holds no postings');
      for (const name of ['prose.items', 'code.items', 'own.items', 'crumbs.bytes']) {
        assert.ok(!meta.arrays.some((a) => a.name === name) && meta.paged.some((a) => a.name === name), `${name} is read by list`);
      }
      // Damage the first section posting of "middleware" (its weight's last byte).
      const term = terms.indexOf(stem('middleware'));
      assert.ok(term >= 0);
      const start = meta.arrays.find((a) => a.name === 'bm25.start')!;
      const first = bytes.readInt32LE(HEADER_BYTES + start.offset + 4 * term);
      const tfw = meta.paged.find((a) => a.name === 'bm25.tfw')!;
      bytes[postingsBase + tfw.offset + 8 * first + 7] ^= 0x01;
      await writeFile(file, bytes);

      const again = await reopen();
      assert.equal(JSON.stringify(await again.search('/docs/koa', '', otherQuestion, 10)), other);
      assert.deepEqual(again.segmentStats, { opened: 1, rebuilt: 0 }, 'opening reads no postings; a question without the word reads not its list');
      assert.equal(await answers(again, '/docs/koa'), before);
      assert.deepEqual(again.segmentStats, { opened: 1, rebuilt: 1 });
      const warned = logs.filter((l) => l.level === 'warn' && /rebuilding the index segment/.test(l.message));
      assert.equal(warned.length, 1);
      assert.equal(warned[0].fields?.reason, 'corrupt');
      assert.match(String(warned[0].fields?.detail), /postings of term \d+ \(bm25\) are damaged/);
    }));

  for (const [name, damage, reason] of [
    ['truncated', async (f: string) => truncate(f, (await readFile(f)).length - 1000), 'corrupt'],
    ['bit-flipped in its index part', async (f: string) => flipBit(f, HEADER_BYTES + 5000), 'corrupt'],
    ['cut to half its header', async (f: string) => truncate(f, HEADER_BYTES / 2), 'corrupt'],
    // 2: the format before this one (4; 3 was never released), as files of it are on disk.
    ['of the previous format (2)', async (f: string) => patchU32(f, 8, 2), 'old-format'],
    ['missing', async (f: string) => unlink(f), 'missing'],
  ] as const) {
    test(`a segment ${name} is rebuilt with a warning, answers unchanged`, () =>
      withStore(async ({ dir, store, reopen, logs }) => {
        const buildId = await addLibrary(store, '/docs/koa', koa);
        const before = await answers(store, '/docs/koa');
        const file = segFile(dir, buildId);
        const good = await readFile(file);
        await store.close();
        await damage(file);

        // A reader cannot write: it rebuilds in memory and leaves the file alone.
        const reader = await reopen('reader');
        assert.equal(await answers(reader, '/docs/koa'), before);
        assert.deepEqual(reader.segmentStats, { opened: 0, rebuilt: 1 });

        const writer = await reopen('writer');
        assert.equal(await answers(writer, '/docs/koa'), before);
        assert.deepEqual(writer.segmentStats, { opened: 0, rebuilt: 1 });
        const warned = logs.filter((l) => l.level === 'warn' && /rebuilding the index segment/.test(l.message));
        assert.equal(warned.length, 2);
        assert.ok(warned.every((l) => l.fields?.reason === reason && l.fields?.buildId === buildId));
        assert.deepEqual(await readFile(file), good, 'the rebuilt segment is the same file');

        const third = await reopen('writer');
        assert.equal(await answers(third, '/docs/koa'), before);
        assert.deepEqual(third.segmentStats, { opened: 1, rebuilt: 0 });
      }));
  }

  test('a segment swapped for another build’s file is rebuilt (the catalog’s checksum differs)', () =>
    withStore(async ({ dir, store, reopen }) => {
      const a = await addLibrary(store, '/docs/koa', koa);
      const b = await addLibrary(store, '/docs/small', [sampleSnippet({ content: 'about the aardvark' })]);
      const before = await answers(store, '/docs/small');
      await store.close();
      await writeFile(segFile(dir, b), await readFile(segFile(dir, a)));
      const again = await reopen();
      assert.equal(await answers(again, '/docs/small'), before);
      assert.deepEqual(again.segmentStats, { opened: 0, rebuilt: 1 });
    }));

  test('a finalized build keeps no snippets in the database: a pack beside its segment is the segment’s source', () =>
    withStore(async ({ dir, store, reopen }) => {
      const buildId = await addLibrary(store, '/docs/koa', koa);
      const served = await store.getSnippets('/docs/koa', '');
      const before = await answers(store, '/docs/koa');
      await store.flush();
      const counts = await queryFile(dir, `SELECT (SELECT COUNT(*) FROM snippets), (SELECT COUNT(*) FROM build_snippets), (SELECT pack_file FROM builds WHERE id = '${buildId}')`);
      assert.deepEqual(counts, [[0, 0, `${buildId}.pack`]]);
      assert.ok(existsSync(join(dir, SEGMENT_DIR, `${buildId}.pack`)));
      const again = await reopen();
      assert.deepEqual(await again.getSnippets('/docs/koa', ''), served, 'every field round-trips');
      // The segment is rebuilt from that record.
      await again.close();
      await unlink(segFile(dir, buildId));
      const third = await reopen();
      assert.equal(await answers(third, '/docs/koa'), before);
      assert.deepEqual(third.segmentStats, { opened: 0, rebuilt: 1 });
    }));

  test('a data directory from before segments: its snippet rows serve, then move to a pack', () =>
    withStore(async ({ dir, store, reopen, logs }) => {
      const buildId = await addLibrary(store, '/docs/koa', koa);
      const served = await store.getSnippets('/docs/koa', '');
      const before = await answers(store, '/docs/koa');
      await store.close();
      // Put the build back as an older version left it: snippet rows, no segment recorded.
      const SQL = await loadSqlJs();
      const db = new SQL.Database(await readFile(join(dir, 'refdesk.sqlite')));
      const stmt = db.prepare(
        `INSERT INTO snippets (id, build_id, seq, type, title, description, language, code, content, breadcrumb, page_title, source_path, source_url, anchor, line_start, line_end, tokens)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      served.forEach((s, seq) =>
        stmt.run([s.id, buildId, seq, s.type, s.title, s.description, s.language, s.code, s.content, JSON.stringify(s.breadcrumb), s.pageTitle, s.sourcePath, s.sourceUrl ?? null, s.anchor ?? null, s.lineStart, s.lineEnd, s.tokens]),
      );
      stmt.free();
      db.run('DELETE FROM build_snippets');
      db.run('UPDATE builds SET segment_file = NULL, segment_format = NULL, segment_checksum = NULL, pack_file = NULL');
      await writeFile(join(dir, 'refdesk.sqlite'), db.export());
      db.close();
      await unlink(segFile(dir, buildId));
      await unlink(join(dir, SEGMENT_DIR, `${buildId}.pack`));

      const again = await reopen();
      assert.deepEqual(await again.getSnippets('/docs/koa', ''), served);
      assert.equal(await answers(again, '/docs/koa'), before);
      assert.deepEqual(again.segmentStats, { opened: 0, rebuilt: 1 });
      assert.ok(logs.some((l) => l.fields?.reason === 'missing'));
      await again.flush();
      assert.deepEqual(await queryFile(dir, `SELECT (SELECT COUNT(*) FROM snippets), (SELECT COUNT(*) FROM build_snippets), (SELECT pack_file FROM builds WHERE id = '${buildId}')`), [[0, 0, `${buildId}.pack`]]);
      const third = await reopen();
      assert.deepEqual(await third.getSnippets('/docs/koa', ''), served);
      assert.equal(await answers(third, '/docs/koa'), before);
      assert.deepEqual(third.segmentStats, { opened: 1, rebuilt: 0 });
    }));

  test('snippets added while a build is being finalized are not lost: the finalize is refused, the next one serves them', () =>
    withStore(async ({ dir, store }) => {
      await store.upsertLibrary({ id: '/docs/race', title: 'race', source: { kind: 'upload', spec: {} } });
      const b = await store.beginBuild('/docs/race', '', null);
      await store.addSnippets(b, [sampleSnippet({ content: 'about the aardvark' })]);
      const finalizing = store.finalizeBuild(b);
      await store.addSnippets(b, [sampleSnippet({ content: 'about the bumblebee' })]);
      await assert.rejects(finalizing, (err: Error & { code?: string }) => err.code === 'invalid_request' && /finalize it again/.test(err.message));
      assert.equal(existsSync(segFile(dir, b)), false);
      await store.finalizeBuild(b);
      assert.ok((await store.search('/docs/race', '', 'bumblebee', 5)).some((h) => h.snippet.content === 'about the bumblebee'));
      assert.deepEqual((await store.getSnippets('/docs/race', '')).map((s) => s.content), ['about the aardvark', 'about the bumblebee']);
    }));

  test('under a tiny memory budget the least recently used segment is closed; answers stay right', () =>
    withStore(
      async ({ store, reopen }) => {
        await addLibrary(store, '/docs/koa', koa);
        await addLibrary(store, '/docs/small', [sampleSnippet({ content: 'about the aardvark' })]);
        const koaAnswers = await answers(store, '/docs/koa');
        const again = await reopen();
        for (let i = 0; i < 3; i++) {
          assert.equal(await answers(again, '/docs/koa'), koaAnswers);
          assert.equal((await again.search('/docs/small', '', 'aardvark', 5)).length, 1);
        }
        // Each switch of library opened the other segment again: nothing was rebuilt.
        assert.deepEqual(again.segmentStats, { opened: 6, rebuilt: 0 });
        // Concurrent questions to both libraries evict each other's segment between its opening
        // and its use: each is opened again, never rebuilt, and every answer is right.
        const mixed = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 ? again.search('/docs/small', '', 'aardvark', 5) : again.search('/docs/koa', '', QUESTIONS[0], 60))),
        );
        const koaFirst = JSON.stringify(JSON.parse(koaAnswers)[0]);
        mixed.forEach((hits, i) => (i % 2 ? assert.equal(hits.length, 1) : assert.equal(JSON.stringify(hits), koaFirst)));
        assert.equal(again.segmentStats.rebuilt, 0);

        const roomy = await reopen('writer', { segmentCacheBytes: 64 * 1024 * 1024 });
        for (let i = 0; i < 3; i++) {
          await answers(roomy, '/docs/koa');
          await roomy.search('/docs/small', '', 'aardvark', 5);
        }
        assert.deepEqual(roomy.segmentStats, { opened: 2, rebuilt: 0 });
      },
      { segmentCacheBytes: 1 },
    ));

  test('segment files go with their builds: replaced, deleted library, orphans at open', () =>
    withStore(async ({ dir, store, reopen, logs }) => {
      const first = await addLibrary(store, '/docs/koa', koa);
      await store.search('/docs/koa', '', 'middleware', 5);
      const second = await addLibrary(store, '/docs/koa', koa.slice(0, 20));
      assert.equal(existsSync(segFile(dir, first)), false, 'the replaced build’s segment is removed');
      assert.ok(existsSync(segFile(dir, second)));
      assert.ok((await store.search('/docs/koa', '', 'middleware', 50)).every((h) => koa.slice(0, 20).some((s) => s.content === h.snippet.content)));

      // A failed build leaves no segment.
      const failed = await store.beginBuild('/docs/koa', '', null);
      await store.addSnippets(failed, koa.slice(0, 3));
      await store.failBuild(failed);
      assert.equal(existsSync(segFile(dir, failed)), false);
      assert.equal(existsSync(join(dir, SEGMENT_DIR, `${failed}.staging`)), false, 'nor its staging file');

      assert.equal(await store.deleteLibrary('/docs/koa'), true);
      assert.equal(existsSync(segFile(dir, second)), false, 'a deleted library’s segments are removed');
      assert.equal(existsSync(join(dir, SEGMENT_DIR, `${second}.pack`)), false, 'and its packs');

      // A segment no build records (a crash between writing and recording it) is removed at open.
      const kept = await addLibrary(store, '/docs/small', [sampleSnippet({ content: 'about the aardvark' })]);
      await writeFile(join(dir, SEGMENT_DIR, 'orphan.seg'), 'x');
      await writeFile(join(dir, SEGMENT_DIR, `${kept}.seg.tmp-12345`), 'x');
      await writeFile(join(dir, SEGMENT_DIR, 'orphan.pack'), 'x');
      await writeFile(join(dir, SEGMENT_DIR, `${kept}.pack.tmp-12345`), 'x');
      await writeFile(join(dir, SEGMENT_DIR, 'interrupted.staging'), 'x');
      const again = await reopen();
      assert.deepEqual(readdirSync(join(dir, SEGMENT_DIR)).sort(), [`${kept}.pack`, `${kept}.seg`]);
      assert.ok(logs.some((l) => /segment files no build uses/.test(l.message)));
      assert.equal((await again.search('/docs/small', '', 'aardvark', 5)).length, 1);

      // removeSegments is the function library deletion calls; missing files are fine.
      assert.deepEqual(await removeSegments(join(dir, SEGMENT_DIR), [kept, 'never-written', '../escape']), [`${kept}.seg`]);
    }));
});

async function flipBit(file: string, at: number): Promise<void> {
  const bytes = await readFile(file);
  bytes[at] ^= 0x01;
  await writeFile(file, bytes);
}

async function patchU32(file: string, at: number, value: number): Promise<void> {
  const bytes = await readFile(file);
  bytes.writeUInt32LE(value, at);
  await writeFile(file, bytes);
}
