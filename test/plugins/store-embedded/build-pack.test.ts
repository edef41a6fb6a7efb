import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { StoredSnippet } from '../../../core/contracts.ts';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';
import { snippetHead } from '../../../core/store-rules.ts';
import {
  PACK_BLOCK_SNIPPETS,
  PACK_PARSE_BYTES,
  PackError,
  StagingFile,
  batchesOf,
  readPack,
  readPackHeads,
  readPackSync,
  readStaging,
  readStagingLines,
  readStagingSync,
  writePack,
  writePackFromStaging,
  writePackJson,
} from '../../../plugins/store-embedded/build-pack.ts';
import type { EmbeddedStore } from '../../../plugins/store-embedded/embedded-store.ts';
import { SEGMENT_DIR } from '../../../plugins/store-embedded/segment.ts';
import { STAGING_SLICE_SNIPPETS } from '../../../plugins/store-embedded/builds.ts';
import { loadSqlJs } from '../../../plugins/store-embedded/sqlite.ts';
import { tempDataDir, withReopenableStore } from './helpers.ts';

/** Snippets with every field set, some of them multi-byte and with newlines. */
function snippets(n: number, from = 1): StoredSnippet[] {
  return Array.from({ length: n }, (_, i) => ({
    ...sampleSnippet({ content: `snippet ${i} — naïve 日本語\nsecond line`, code: i % 3 === 0 ? `fn${i}()` : '', tokens: 5 + (i % 7) }),
    ...(i % 2 ? { sourceUrl: `https://example.test/${i}`, anchor: `a-${i}` } : {}),
    id: from + i,
    seq: i,
  })) as StoredSnippet[];
}

/** Counts the turns of the event loop (a setImmediate chain) until stop(): `turns` is the count so far. */
function countTurns(): { readonly turns: number; stop(): void } {
  let turns = 0;
  let spinning = true;
  const spin = () => {
    turns++;
    if (spinning) setImmediate(spin);
  };
  setImmediate(spin);
  return {
    get turns() {
      return turns;
    },
    stop: () => void (spinning = false),
  };
}

async function collect(gen: AsyncIterable<StoredSnippet[]>): Promise<StoredSnippet[]> {
  const out: StoredSnippet[] = [];
  for await (const b of gen) out.push(...b);
  return out;
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const data = await tempDataDir();
  mkdirSync(data.dir, { recursive: true });
  try {
    await fn(data.dir);
  } finally {
    await data.remove();
  }
}

/** The byte offset of block `i` of a pack (its index is JSON before a 16-byte trailer). */
async function blockOffset(path: string, i: number): Promise<number> {
  const bytes = await readFile(path);
  const at = bytes.readDoubleLE(bytes.length - 16);
  const length = bytes.readUInt32LE(bytes.length - 8);
  return (JSON.parse(bytes.toString('utf8', at, at + length)) as { blocks: { offset: number }[] }).blocks[i].offset;
}

/** The end of block 0 of a pack (the next block's offset, or the block index's). */
async function blockEnd(path: string): Promise<number> {
  const bytes = await readFile(path);
  const at = bytes.readDoubleLE(bytes.length - 16);
  const length = bytes.readUInt32LE(bytes.length - 8);
  const { blocks } = JSON.parse(bytes.toString('utf8', at, at + length)) as { blocks: { offset: number; length: number }[] };
  return blocks[0].offset + blocks[0].length;
}

async function flipByte(path: string, at: number): Promise<void> {
  const bytes = await readFile(path);
  bytes[at] ^= 0xff;
  await writeFile(path, bytes);
}

describe('build packs (build-pack.ts)', () => {
  test('a pack round-trips every field, in blocks, read async and sync; a staging file too', () =>
    withDir(async (dir) => {
      const list = snippets(2 * PACK_BLOCK_SNIPPETS + 17);
      const written = await writePack(dir, 'b1', batchesOf(list, 333));
      assert.equal(written.count, list.length);
      assert.equal(written.blocks, 3);
      const path = join(dir, written.file);
      assert.deepEqual(readPackSync(path), list);
      assert.deepEqual(await collect(readPack(path)), list);

      const staging = new StagingFile(join(dir, 'b2.staging'));
      staging.append(list.slice(0, 10));
      staging.append(list.slice(10));
      staging.close();
      assert.equal(staging.count, list.length);
      assert.equal(staging.tokens, list.reduce((n, s) => n + s.tokens, 0));
      assert.deepEqual(readStagingSync(staging.path), list);
      assert.deepEqual(await collect(readStaging(staging.path)), list);
      // An empty build packs to an empty pack.
      assert.deepEqual(readPackSync(join(dir, (await writePack(dir, 'empty', [])).file)), []);
    }));

  test('a pack written from the staging file\'s lines as they are (finalize) has the bytes of one written from the parsed snippets', () =>
    withDir(async (dir) => {
      const list = snippets(PACK_BLOCK_SNIPPETS + 250);
      // Fields JSON spells more than one way when not made by JSON.stringify: escapes, a lone
      // surrogate, control characters, integer-like and other keys, numbers.
      list[3] = { ...list[3], content: 'quote " backslash \\ tab \t nul \u0000 lone \ud800 end \u2028', title: '</script>' };
      list[7] = { ...list[7], breadcrumb: ['2', '10', 'a.b'], tokens: 1e21 };
      const staging = new StagingFile(join(dir, 'b.staging'));
      staging.append(list.slice(0, 400));
      staging.append(list.slice(400));
      staging.close();
      const fromSnippets = await writePack(dir, 'parsed', readStaging(staging.path, 300));
      const fromLines = await writePackJson(dir, 'lines', readStagingLines(staging.path, 300));
      assert.deepEqual({ ...fromLines, file: '' }, { ...fromSnippets, file: '' });
      assert.equal(fromLines.blocks, 2);
      assert.ok((await readFile(join(dir, fromLines.file))).equals(await readFile(join(dir, fromSnippets.file))), 'the same bytes');
      assert.deepEqual(readPackSync(join(dir, fromLines.file)), list);
    }));

  test('a pack cut from the staging file\'s bytes (finalize) has the bytes of one written from the parsed snippets: reads of 1 MiB, blank lines, no last newline', () =>
    withDir(async (dir) => {
      // 2.9 MB of staging: lines cross the 1 MiB reads, three blocks.
      const list = snippets(2 * PACK_BLOCK_SNIPPETS + 600).map((s, i) => ({ ...s, description: `${i} ${'x'.repeat(i % 997)} é` }));
      list[5] = { ...list[5], content: 'quote " backslash \\ lone \ud800 line\nbreak \u2028 end' };
      const staging = new StagingFile(join(dir, 'b.staging'));
      staging.append(list.slice(0, 1234));
      staging.append(list.slice(1234));
      staging.close();
      const expected = await readFile(join(dir, (await writePack(dir, 'parsed', batchesOf(list, 333))).file));
      const cut = await writePackFromStaging(dir, 'cut', staging.path);
      assert.deepEqual({ ...cut, file: '' }, { count: list.length, blocks: 3, bytes: expected.length, file: '' });
      assert.ok((await readFile(join(dir, cut.file))).equals(expected), 'the same bytes');
      // Blank lines are skipped and a last line without its newline is a line, as readStagingLines reads them.
      const lines = list.map((s) => JSON.stringify(s));
      await writeFile(join(dir, 'odd.staging'), `\n${lines.slice(0, 999).join('\n')}\n\n\n${lines.slice(999).join('\n')}`);
      assert.ok((await readFile(join(dir, (await writePackFromStaging(dir, 'odd', join(dir, 'odd.staging'))).file))).equals(expected));
      await writeFile(join(dir, 'empty.staging'), '');
      assert.deepEqual(readPackSync(join(dir, (await writePackFromStaging(dir, 'empty', join(dir, 'empty.staging'))).file)), []);
    }));

  test('finalize\'s pack takes the staging file\'s bytes as they are: no line is decoded to a string and encoded again', () =>
    withDir(async (dir) => {
      // A byte that is not UTF-8 (0xff) survives only if the bytes are never decoded (decoding makes it U+FFFD, ef bf bd).
      const line = Buffer.concat([Buffer.from(JSON.stringify(snippets(1)[0]).replace('"Section"', '"Sec')), Buffer.from([0xff]), Buffer.from('tion"\n')]);
      await writeFile(join(dir, 'raw.staging'), line);
      const path = join(dir, (await writePackFromStaging(dir, 'raw', join(dir, 'raw.staging'))).file);
      const block = gunzipSync((await readFile(path)).subarray(16, await blockEnd(path)));
      assert.ok(block.equals(Buffer.concat([Buffer.from('['), line.subarray(0, line.length - 1), Buffer.from(']')])), 'the block is [ + the line\'s bytes + ]');
    }));

  test('readPack parses a block in pieces of about PACK_PARSE_BYTES, the event loop turning between them; the same snippets, whatever the keys', () =>
    withDir(async (dir) => {
      const list = snippets(PACK_BLOCK_SNIPPETS + 10).map((s, i) => ({ ...s, description: 'd'.repeat(200 + (i % 50)) }));
      const path = join(dir, (await writePack(dir, 'b', batchesOf(list))).file);
      const blockBytes = gunzipSync((await readFile(path)).subarray(16, await blockEnd(path))).length;
      assert.ok(blockBytes > 4 * PACK_PARSE_BYTES, `a block of ${blockBytes} bytes`);
      // Which turn of the event loop each JSON.parse of a block's text runs in.
      const loop = countTurns();
      const parses: Array<{ chars: number; turn: number }> = [];
      const parse = JSON.parse;
      JSON.parse = (text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
        if (typeof text === 'string' && text.length > 10_000) parses.push({ chars: text.length, turn: loop.turns });
        return parse(text, reviver);
      };
      let read: StoredSnippet[];
      try {
        read = await collect(readPack(path));
      } finally {
        JSON.parse = parse;
        loop.stop();
      }
      assert.deepEqual(read, list);
      const longest = Math.max(...list.map((s) => JSON.stringify(s).length));
      assert.ok(parses.length >= 4, `${parses.length} parses`);
      assert.ok(parses.every((p) => p.chars <= PACK_PARSE_BYTES + longest + 2), `pieces of at most ${PACK_PARSE_BYTES} bytes and a snippet: ${parses.map((p) => p.chars)}`);
      assert.equal(new Set(parses.map((p) => p.turn)).size, parses.length, 'one piece a turn');
      // A block whose snippets hold objects (',{"' inside a snippet: not written by this code) is read whole, the same.
      const nested = list.map((s) => ({ ...s, breadcrumb: [...s.breadcrumb], nested: Array.from({ length: 30 }, (_, k) => ({ id: k })) }));
      const pack3 = join(dir, (await writePackJson(dir, 'nested', [nested.map((s) => JSON.stringify(s))])).file);
      assert.deepEqual(await collect(readPack(pack3)), nested);
    }));

  test('readPackHeads reads the heads from the blocks\' bytes without parsing the snippets\' text; the heads readPack gives, whatever the fields hold', () =>
    withDir(async (dir) => {
      const list = snippets(PACK_BLOCK_SNIPPETS + 300).map((s, i) => ({ ...s, content: `TEXT-MARK ${i} ${'t'.repeat(300)}` }));
      // Values JSON escapes, and bytes that look like the cuts inside strings.
      list[1] = { ...list[1], title: 'a "quoted", {"id":1} title \\ é \u2028', breadcrumb: ['x],"y', '{"', ''], sourcePath: 'dir\\file ],"z.md' };
      list[2] = { ...list[2], breadcrumb: [], title: '' };
      list[3] = { ...list[3], id: 2 ** 40, seq: 3, title: '日本語' };
      const path = join(dir, (await writePack(dir, 'b', batchesOf(list))).file);
      const parses: string[] = [];
      const parse = JSON.parse;
      JSON.parse = (text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
        parses.push(String(text));
        return parse(text, reviver);
      };
      let heads;
      try {
        heads = [];
        for await (const block of readPackHeads(path)) heads.push(...block);
      } finally {
        JSON.parse = parse;
      }
      assert.deepEqual(heads, list.map(snippetHead));
      assert.equal(parses.filter((t) => t.includes('TEXT-MARK')).length, 0, 'no snippet text parsed');
      // A block that does not read that way (a snippet without a title) is parsed: the same heads.
      const odd = list.slice(0, 50).map((s, i) => (i === 7 ? { ...s, title: undefined } : s));
      const oddPath = join(dir, (await writePackJson(dir, 'odd', [odd.map((s) => JSON.stringify(s))])).file);
      const oddHeads = [];
      for await (const block of readPackHeads(oddPath)) oddHeads.push(...block);
      assert.deepEqual(oddHeads, (await collect(readPack(oddPath))).map(snippetHead));
      // A damaged block is the PackError readPack gives.
      await flipByte(path, (await blockOffset(path, 1)) + 20);
      await assert.rejects(async () => {
        for await (const _ of readPackHeads(path));
      }, (e: unknown) => e instanceof PackError && e.reason === 'corrupt');
    }));

  test('a damaged, truncated, foreign or missing pack is a PackError naming what is wrong', () =>
    withDir(async (dir) => {
      const path = join(dir, (await writePack(dir, 'b', batchesOf(snippets(2500)))).file);
      const good = await readFile(path);
      await flipByte(path, (await blockOffset(path, 1)) + 40);
      assert.throws(() => readPackSync(path), (e: unknown) => e instanceof PackError && e.reason === 'corrupt' && /block 1/.test(e.message));
      await assert.rejects(collect(readPack(path)), (e: unknown) => e instanceof PackError && e.reason === 'corrupt');
      await writeFile(path, good.subarray(0, good.length - 100));
      assert.throws(() => readPackSync(path), (e: unknown) => e instanceof PackError && e.reason === 'corrupt');
      const otherFormat = Buffer.from(good);
      otherFormat.writeUInt32LE(99, 8);
      await writeFile(path, otherFormat);
      assert.throws(() => readPackSync(path), (e: unknown) => e instanceof PackError && e.reason === 'old-format');
      await writeFile(path, 'not a pack at all, just some text');
      assert.throws(() => readPackSync(path), (e: unknown) => e instanceof PackError && e.reason === 'corrupt');
      await unlink(path);
      assert.throws(() => readPackSync(path), (e: unknown) => e instanceof PackError && e.reason === 'missing');
    }));
});

describe('the embedded store with packs', () => {
  const withStore = withReopenableStore;

  async function addLibrary(store: EmbeddedStore, id: string, contents: string[]): Promise<string> {
    await store.upsertLibrary({ id, title: id, source: { kind: 'upload', spec: {} } });
    const b = await store.beginBuild(id, '', null);
    // In several calls, as an ingest adds them.
    for (const part of batchesOf(contents, 700)) await store.addSnippets(b, part.map((content) => sampleSnippet({ content })));
    await store.finalizeBuild(b);
    return b;
  }

  const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} paragraph ${i} about the ${i % 2 ? 'aardvark' : 'bumblebee'} number${i}`);

  test('a build of several blocks is served, its ids unique across builds and continuing the old sequence', () =>
    withStore(async ({ store, reopen }) => {
      await addLibrary(store, '/docs/one', words(2300, 'one'));
      const one = await store.getSnippets('/docs/one', '');
      assert.equal(one.length, 2300);
      assert.deepEqual(one.map((s) => s.seq), one.map((_, i) => i));
      const again = await reopen();
      await addLibrary(again, '/docs/two', words(5, 'two'));
      const two = await again.getSnippets('/docs/two', '');
      assert.ok(two[0].id > one[one.length - 1].id, 'ids continue after a reopen');
      assert.deepEqual(await again.getSnippets('/docs/one', ''), one);
      assert.equal((await again.getVersion('/docs/one', ''))?.totalSnippets, 2300);
      assert.ok((await again.search('/docs/one', '', 'number1234', 3)).some((h) => h.snippet.content.endsWith('number1234')));
    }));

  test('a long page\'s snippets are staged in slices, the event loop turning between them; concurrent batches keep their order', () =>
    withStore(async ({ store }) => {
      await store.upsertLibrary({ id: '/docs/long', title: 'long', source: { kind: 'upload', spec: {} } });
      const b = await store.beginBuild('/docs/long', '', null);
      const loop = countTurns();
      const long = words(10 * STAGING_SLICE_SNIPPETS, 'long').map((content) => sampleSnippet({ content }));
      try {
        await store.addSnippets(b, long);
      } finally {
        loop.stop();
      }
      assert.ok(loop.turns >= 9, `${loop.turns} turns of the event loop while ${long.length} snippets were staged`);
      // Batches given without waiting (a large one, then small ones) are staged in the order given.
      const more = [words(250, 'a'), words(3, 'b'), words(120, 'c'), words(1, 'd')].map((list) => list.map((content) => sampleSnippet({ content })));
      await Promise.all(more.map((list) => store.addSnippets(b, list)));
      const finalizing = store.finalizeBuild(b);
      await finalizing;
      const served = await store.getSnippets('/docs/long', '');
      assert.deepEqual(served.map((s) => s.content), [...long, ...more.flat()].map((s) => s.content));
      assert.deepEqual(served.map((s) => s.seq), served.map((_, i) => i));
      assert.ok(served.every((s, i) => i === 0 || s.id > served[i - 1].id), 'ids in order');
    }));

  test('a damaged pack block: the segment keeps serving, reading the snippets is a clear error, a rebuild fails clearly; never a crash', () =>
    withStore(async ({ dir, store, logs, reopen }) => {
      const b = await addLibrary(store, '/docs/big', words(2300, 'big'));
      await addLibrary(store, '/docs/other', words(3, 'other'));
      await store.close();
      const pack = join(dir, SEGMENT_DIR, `${b}.pack`);
      await flipByte(pack, (await blockOffset(pack, 2)) + 10);
      let s = await reopen();
      assert.ok((await s.search('/docs/big', '', 'number2200', 3)).length > 0, 'the segment answers without the pack');
      await assert.rejects(s.getSnippets('/docs/big', ''), (e: Error & { code?: string }) => e.code === 'internal_error' && e.message.includes(b) && /refresh the library/.test(e.message));
      // Without its segment the build cannot be rebuilt: a clear error, the store keeps serving the others.
      await s.close();
      await unlink(join(dir, SEGMENT_DIR, `${b}.seg`));
      s = await reopen();
      await assert.rejects(s.search('/docs/big', '', 'aardvark', 3), (e: Error & { code?: string }) => e.code === 'internal_error' && /cannot be read/.test(e.message));
      assert.equal((await s.search('/docs/other', '', 'aardvark', 3)).length > 0, true);
      assert.ok(logs.some((l) => l.level === 'error' && /stored snippets of a build cannot be read/.test(l.message)));
    }));

  test('a damaged segment is rebuilt from the pack (several blocks), answers unchanged', () =>
    withStore(async ({ dir, store, reopen }) => {
      const b = await addLibrary(store, '/docs/big', words(2300, 'big'));
      const before = JSON.stringify(await store.search('/docs/big', '', 'aardvark number77', 20));
      await store.close();
      await writeFile(join(dir, SEGMENT_DIR, `${b}.seg`), 'garbage');
      const s = await reopen();
      assert.equal(JSON.stringify(await s.search('/docs/big', '', 'aardvark number77', 20)), before);
      assert.deepEqual(s.segmentStats, { opened: 0, rebuilt: 1 });
    }));

  test('a build finalized by the previous format (one compressed record in build_snippets) is read, then moved to a pack', () =>
    withStore(async ({ dir, store, reopen }) => {
      const b = await addLibrary(store, '/docs/old', words(40, 'old'));
      const served = await store.getSnippets('/docs/old', '');
      const before = JSON.stringify(await store.search('/docs/old', '', 'bumblebee number3', 10));
      await store.close();
      // As schema 4 left it: the record in build_snippets, no pack, no segment.
      const SQL = await loadSqlJs();
      const db = new SQL.Database(await readFile(join(dir, 'refdesk.sqlite')));
      db.run('INSERT INTO build_snippets (build_id, data) VALUES (?, ?)', [b, gzipSync(JSON.stringify(served))]);
      db.run('UPDATE builds SET pack_file = NULL, segment_file = NULL, segment_checksum = NULL');
      await writeFile(join(dir, 'refdesk.sqlite'), db.export());
      db.close();
      await unlink(join(dir, SEGMENT_DIR, `${b}.pack`));
      await unlink(join(dir, SEGMENT_DIR, `${b}.seg`));

      const s = await reopen();
      assert.deepEqual(await s.getSnippets('/docs/old', ''), served, 'read from build_snippets');
      assert.equal(JSON.stringify(await s.search('/docs/old', '', 'bumblebee number3', 10)), before);
      assert.ok(existsSync(join(dir, SEGMENT_DIR, `${b}.pack`)), 'moved to a pack at the rebuild');
      await s.flush();
      const check = new SQL.Database(await readFile(join(dir, 'refdesk.sqlite')));
      assert.deepEqual(check.exec('SELECT (SELECT COUNT(*) FROM build_snippets), (SELECT pack_file FROM builds)')[0].values, [[0, `${b}.pack`]]);
      check.close();
      const third = await reopen();
      assert.deepEqual(await third.getSnippets('/docs/old', ''), served);
    }));
});
