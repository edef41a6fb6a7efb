/**
 * A build's snippets outside sql.js, at any size (issue 17, scale).
 *
 * - **Staging** (`<dataDir>/segments/<buildId>.staging`): while a build runs, `addSnippets`
 *   appends its snippets to this file as JSON lines (one StoredSnippet a line, in order). They
 *   no longer sit in sql.js's WASM memory (2 GiB at most, about 1 GB for a million snippets) and
 *   are not exported with the database at every flush. A staging file lives as long as its build
 *   is being built; at open, every staging file is removed (the builds being built when the
 *   process stopped are discarded by the store's recovery).
 * - **Pack** (`<dataDir>/segments/<buildId>.pack`): a finalized build's snippets, the copy its
 *   index segment is rebuilt from (a missing, old-format or damaged segment). Written streamed
 *   from the staging file in blocks of at most PACK_BLOCK_SNIPPETS snippets (each block the gzip
 *   of a JSON array), so no step holds the whole build as one string (V8's limit is about 536 M
 *   characters: the one-string pack broke past about 660,000 snippets). Layout:
 *
 *     magic "RDKPACK\n" (8 bytes), u32 format, u32 0,
 *     the blocks, one after another,
 *     the block index: JSON { count, blocks: [{ offset, length, count, crc }] } (crc: crc32 of the
 *       block's compressed bytes),
 *     trailer (16 bytes): f64 offset of the index, u32 its length, u32 its crc32.
 *
 *   Each block is checked alone (crc32, then gzip's own check); a damaged one throws PackError,
 *   never a crash. Builds finalized before packs keep their snippets in sql.js (build_snippets,
 *   or snippet rows), read as before and moved to a pack when their segment is next rebuilt.
 */
import { closeSync, createReadStream, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { crc32, gunzip as gunzipCb, gunzipSync, gzip as gzipCb } from 'node:zlib';
import { join } from 'node:path';
import type { SnippetHead, StoredSnippet } from '../../core/contracts.ts';
import { snippetHead } from '../../core/store-rules.ts';
import { UnreadableBuildFileError } from '../../core/stored-docs.ts';
import { readdirOrEmpty, unlinkIfPresent } from '../../core/missing-files.ts';
import { fsyncDirectory } from './atomic-write.ts';
import { removeBuildFiles, removeUnkeptFiles } from './build-files.ts';

export const PACK_MAGIC = 'RDKPACK\n';
/** The pack format this code writes and reads. */
export const PACK_FORMAT = 1;
/** Snippets per block at most (about 0.8 MB of JSON for generated snippets, 150 KB compressed). */
export const PACK_BLOCK_SNIPPETS = 1000;
const PACK_EXT = '.pack';
const STAGING_EXT = '.staging';
const HEAD_BYTES = 16;
const TRAILER_BYTES = 16;
const gzipAsync = promisify(gzipCb);
const gunzipAsync = promisify(gunzipCb);

/** A pack that cannot be read: missing, of another format, or damaged. */
export class PackError extends UnreadableBuildFileError {
  override name = 'PackError';
}

export const packFileName = (buildId: string) => `${buildId}${PACK_EXT}`;
export const stagingFileName = (buildId: string) => `${buildId}${STAGING_EXT}`;

interface BlockRef {
  offset: number;
  length: number;
  count: number;
  crc: number;
}

// ---------------------------------------------------------------------------------------------
// Staging
// ---------------------------------------------------------------------------------------------

/** The snippets of one build being built, appended to its staging file. */
export class StagingFile {
  /** Snippets staged so far; the next one's seq. */
  count = 0;
  /** Sum of their tokens. */
  tokens = 0;
  private fd: number | null;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w');
  }

  /** Appends snippets (already numbered: id and seq); synchronous, so appends never interleave. */
  append(snippets: readonly StoredSnippet[]): void {
    if (this.fd === null) throw new Error(`The staging file ${this.path} is closed.`);
    let text = '';
    for (const s of snippets) {
      text += `${JSON.stringify(s)}\n`;
      // Bounded pieces: a batch of any size never makes one huge string.
      if (text.length > 4_000_000) {
        writeSync(this.fd, text);
        text = '';
      }
      this.tokens += s.tokens ?? 0;
    }
    if (text) writeSync(this.fd, text);
    this.count += snippets.length;
  }

  /** Closes and removes the file (the build was finalized, failed or deleted). */
  async discard(): Promise<void> {
    this.close();
    await unlinkIfPresent(this.path);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** The snippets of a staging file, in order, in batches of at most `batch`. */
export async function* readStaging(path: string, batch = PACK_BLOCK_SNIPPETS): AsyncGenerator<StoredSnippet[]> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  let out: StoredSnippet[] = [];
  for await (const line of lines) {
    if (!line) continue;
    out.push(JSON.parse(line) as StoredSnippet);
    if (out.length >= batch) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
}

/**
 * The lines of a staging file as written (each one snippet's JSON), in order, in batches of at
 * most `batch`: what the pack is made of, without parsing each snippet and serializing it again
 * (finalize runs on the event loop; python's 19,636 snippets are 10 MB of JSON).
 */
export async function* readStagingLines(path: string, batch = PACK_BLOCK_SNIPPETS): AsyncGenerator<string[]> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  let out: string[] = [];
  for await (const line of lines) {
    if (!line) continue;
    out.push(line);
    if (out.length >= batch) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
}

/** Every snippet of a staging file, read synchronously in pieces (a worker thread's input). */
export function readStagingSync(path: string): StoredSnippet[] {
  const out: StoredSnippet[] = [];
  eachStagedSync(path, (s) => out.push(s));
  return out;
}

/**
 * The snippets of a staging file one by one, in order, read synchronously in pieces of 8 MB; at
 * most `limit` (a file still appended to is read again up to what an earlier pass read).
 */
export function eachStagedSync(path: string, visit: (s: StoredSnippet) => void, limit = Infinity): void {
  const fd = openSync(path, 'r');
  let seen = 0;
  try {
    const buf = Buffer.alloc(8 << 20);
    let rest = '';
    let position = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, position);
      if (n === 0) break;
      position += n;
      // Split on the last newline in bytes: a UTF-8 sequence never spans a '\n' byte.
      const cut = buf.lastIndexOf(10, n - 1);
      if (cut < 0) {
        rest += buf.toString('utf8', 0, n);
        continue;
      }
      const text = rest + buf.toString('utf8', 0, cut);
      rest = buf.toString('utf8', cut + 1, n);
      for (const line of text.split('\n')) {
        if (!line) continue;
        if (seen++ >= limit) return;
        visit(JSON.parse(line) as StoredSnippet);
      }
    }
    if (rest && seen < limit) visit(JSON.parse(rest) as StoredSnippet);
  } finally {
    closeSync(fd);
  }
}

/** At open: removes every staging file (no build is being built before recovery runs). */
export async function removeStagingFiles(dir: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdirOrEmpty(dir)) {
    if (!name.endsWith(STAGING_EXT)) continue;
    if (await unlinkIfPresent(join(dir, name))) removed.push(name);
  }
  return removed;
}

// ---------------------------------------------------------------------------------------------
// Packs
// ---------------------------------------------------------------------------------------------

/**
 * Writes a pack from snippets given in batches (any number, any size): each block is compressed
 * by async zlib (off the event loop) and written at once, so memory holds one block at a time.
 * Written under a temporary name, fsynced and renamed. Returns the file name and counts.
 */
export function writePack(dir: string, buildId: string, batches: AsyncIterable<readonly StoredSnippet[]> | Iterable<readonly StoredSnippet[]>): Promise<{ file: string; count: number; blocks: number; bytes: number }> {
  return writePackJson(dir, buildId, serialized(batches));
}

async function* serialized(batches: AsyncIterable<readonly StoredSnippet[]> | Iterable<readonly StoredSnippet[]>): AsyncGenerator<string[]> {
  for await (const batch of batches) yield batch.map((s) => JSON.stringify(s));
}

/**
 * writePack from snippets already serialized (each `JSON.stringify` of one StoredSnippet, as a
 * staging file holds them: readStagingLines); the same bytes as writePack of the parsed snippets.
 */
export function writePackJson(dir: string, buildId: string, batches: AsyncIterable<readonly string[]> | Iterable<readonly string[]>): Promise<{ file: string; count: number; blocks: number; bytes: number }> {
  return writePackBlocks(dir, buildId, jsonBlocks(batches));
}

/** A block's JSON array before compression (bytes or text) and its number of snippets. */
interface RawBlock {
  json: Buffer | string;
  count: number;
}

async function* jsonBlocks(batches: AsyncIterable<readonly string[]> | Iterable<readonly string[]>): AsyncGenerator<RawBlock> {
  let pending: string[] = [];
  for await (const batch of batches) {
    for (const json of batch) {
      pending.push(json);
      if (pending.length >= PACK_BLOCK_SNIPPETS) {
        yield { json: `[${pending.join(',')}]`, count: pending.length };
        pending = [];
      }
    }
  }
  if (pending.length > 0) yield { json: `[${pending.join(',')}]`, count: pending.length };
}

/** Bytes read from a staging file at a time when its blocks are cut (stagingBlocks). */
const STAGING_READ_BYTES = 1 << 20;
const NEWLINE = 0x0a;

/**
 * The pack blocks of a staging file, cut from its bytes (finalize, on the event loop): a block
 * is `[`, its lines with each newline turned into a comma, the last one into `]`. JSON escapes
 * every newline inside a string and no UTF-8 sequence holds the byte 0x0a, so a newline byte is
 * always a line's end: these are the bytes of `[${lines.join(',')}]` (writePackJson), made with
 * no string per line, no joined string and no re-encoding on the main heap (round 7 of issue 17's
 * stalls: decoding python's 10 MB staging file into line strings and joining them was finalize's
 * main-thread work and garbage). Blank lines (a staging file never has them) are skipped, as
 * readStagingLines skips them; a last line without its newline is a line.
 */
export async function* stagingBlocks(path: string, batch = PACK_BLOCK_SNIPPETS): AsyncGenerator<RawBlock> {
  const fh = await open(path, 'r');
  try {
    let parts: Buffer[] = [];
    let partBytes = 0;
    let count = 0;
    let lineBytes = 0; // bytes of the line being read, in earlier reads
    const block = (): RawBlock => {
      const json = Buffer.allocUnsafe(partBytes + 1);
      json[0] = 0x5b; // [
      let at = 1;
      for (const p of parts) at += p.copy(json, at);
      for (let i = json.indexOf(NEWLINE, 1); i !== -1; i = json.indexOf(NEWLINE, i + 1)) json[i] = 0x2c; // ,
      json[json.length - 1] = 0x5d; // ] (the last line's newline)
      const out = { json, count };
      parts = [];
      partBytes = 0;
      count = 0;
      return out;
    };
    const take = (chunk: Buffer, from: number, to: number) => {
      if (to > from) {
        parts.push(chunk.subarray(from, to));
        partBytes += to - from;
      }
    };
    for (;;) {
      const buffer = Buffer.allocUnsafe(STAGING_READ_BYTES);
      const { bytesRead } = await fh.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      let from = 0; // the first byte of this read not yet taken
      let lineStart = 0; // where the line being read starts in this read
      for (let nl = chunk.indexOf(NEWLINE, 0); nl !== -1; nl = chunk.indexOf(NEWLINE, nl + 1)) {
        const blank = lineBytes === 0 && nl === lineStart;
        lineStart = nl + 1;
        if (blank) {
          take(chunk, from, nl); // the lines before it
          from = nl + 1;
          continue;
        }
        lineBytes = 0;
        if (++count >= batch) {
          take(chunk, from, nl + 1);
          from = nl + 1;
          yield block();
        }
      }
      // The lines ended in this read and not yet in a block, and the start of the next one.
      take(chunk, from, bytesRead);
      lineBytes += bytesRead - lineStart;
    }
    if (lineBytes > 0) {
      take(Buffer.from('\n'), 0, 1);
      count++;
    }
    if (count > 0) yield block();
  } finally {
    await fh.close();
  }
}

/** writePack of a staging file (finalize): its blocks cut from its bytes (stagingBlocks); writePackJson's bytes. */
export function writePackFromStaging(dir: string, buildId: string, stagingPath: string): Promise<{ file: string; count: number; blocks: number; bytes: number }> {
  return writePackBlocks(dir, buildId, stagingBlocks(stagingPath));
}

async function writePackBlocks(dir: string, buildId: string, source: AsyncIterable<RawBlock>): Promise<{ file: string; count: number; blocks: number; bytes: number }> {
  const file = packFileName(buildId);
  const path = join(dir, file);
  const tmp = `${path}.tmp-${process.pid}`;
  const fh = await open(tmp, 'w', 0o644);
  try {
    let position = 0;
    const write = async (bytes: Uint8Array) => {
      let off = 0;
      while (off < bytes.length) {
        const { bytesWritten } = await fh.write(bytes, off, bytes.length - off, position);
        off += bytesWritten;
        position += bytesWritten;
      }
    };
    const head = Buffer.alloc(HEAD_BYTES);
    head.write(PACK_MAGIC, 0, 'latin1');
    head.writeUInt32LE(PACK_FORMAT, 8);
    await write(head);
    const blocks: BlockRef[] = [];
    let count = 0;
    for await (const block of source) {
      const bytes = await gzipAsync(block.json);
      blocks.push({ offset: position, length: bytes.length, count: block.count, crc: crc32(bytes) });
      count += block.count;
      await write(bytes);
    }
    const index = Buffer.from(JSON.stringify({ count, blocks }));
    const trailer = Buffer.alloc(TRAILER_BYTES);
    trailer.writeDoubleLE(position, 0);
    trailer.writeUInt32LE(index.length, 8);
    trailer.writeUInt32LE(crc32(index), 12);
    await write(index);
    await write(trailer);
    await fh.sync();
    await fh.close();
    await rename(tmp, path);
    await fsyncDirectory(dir);
    return { file, count, blocks: blocks.length, bytes: position };
  } catch (err) {
    await fh.close().catch(() => {});
    await unlinkIfPresent(tmp).catch(() => false);
    throw err;
  }
}

/** Splits an array into batches for writePack. */
export function* batchesOf<T>(items: readonly T[], size = PACK_BLOCK_SNIPPETS): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** Reads a pack's head, block index and trailer; the fd stays open for the blocks. */
function openPack(path: string): { fd: number; count: number; blocks: BlockRef[] } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new PackError('missing', `the snippet pack ${path} is missing`);
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const head = Buffer.alloc(HEAD_BYTES);
    if (size < HEAD_BYTES + TRAILER_BYTES || readSync(fd, head, 0, HEAD_BYTES, 0) !== HEAD_BYTES || head.toString('latin1', 0, 8) !== PACK_MAGIC) {
      throw new PackError('corrupt', `${path} is not a snippet pack`);
    }
    const format = head.readUInt32LE(8);
    if (format !== PACK_FORMAT) throw new PackError('old-format', `${path} is a snippet pack of format ${format} (this version reads ${PACK_FORMAT})`);
    const trailer = Buffer.alloc(TRAILER_BYTES);
    readSync(fd, trailer, 0, TRAILER_BYTES, size - TRAILER_BYTES);
    const at = trailer.readDoubleLE(0);
    const length = trailer.readUInt32LE(8);
    if (!(at >= HEAD_BYTES) || at + length + TRAILER_BYTES !== size) throw new PackError('corrupt', `${path}: the block index is out of place (a truncated or damaged file)`);
    const index = Buffer.alloc(length);
    readSync(fd, index, 0, length, at);
    if (crc32(index) !== trailer.readUInt32LE(12)) throw new PackError('corrupt', `${path}: the block index fails its checksum`);
    const parsed = JSON.parse(index.toString('utf8')) as { count: number; blocks: BlockRef[] };
    return { fd, count: parsed.count, blocks: parsed.blocks };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function readBlock(fd: number, path: string, b: BlockRef, i: number): Buffer {
  const bytes = Buffer.alloc(b.length);
  if (readSync(fd, bytes, 0, b.length, b.offset) !== b.length || crc32(bytes) !== b.crc) {
    throw new PackError('corrupt', `${path}: block ${i} fails its checksum`);
  }
  return bytes;
}

function parseBlock(json: Buffer, path: string, b: BlockRef, i: number): StoredSnippet[] {
  const list = JSON.parse(json.toString('utf8')) as StoredSnippet[];
  if (!Array.isArray(list) || list.length !== b.count) throw new PackError('corrupt', `${path}: block ${i} holds ${list?.length} snippets, its index says ${b.count}`);
  return list;
}

/**
 * Bytes of a block's JSON that readPack parses at a time on the event loop, with a turn of the
 * event loop between two pieces: a whole block (1,000 snippets, about 0.5 MB of JSON for
 * python's) took 12 - 22 ms of `JSON.parse` under load (issue 17's stalls, round 6).
 */
export const PACK_PARSE_BYTES = 64 * 1024;
/** How every snippet after a block's first one starts (an object with at least one key). */
const SNIPPET_START = Buffer.from(',{"');
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * parseBlock in pieces of about PACK_PARSE_BYTES, the event loop turning between them (readPack,
 * on the main thread): each piece is cut before a `,{"`. Inside a JSON string every `"` is
 * escaped, so those bytes are never in a string; a snippet holds no object (its one array, the
 * heading path, holds strings), so they start a snippet of the block's array. A cut anywhere else (a block written some other way) leaves a
 * piece whose brackets do not balance, which JSON.parse rejects: then, or when the counts do not
 * add up, the block is parsed whole, as before. The same snippets as parseBlock.
 */
async function parseBlockInPieces(json: Buffer, path: string, b: BlockRef, i: number): Promise<StoredSnippet[]> {
  const end = json.length - 1;
  if (json.length <= PACK_PARSE_BYTES || json[0] !== OPEN_BRACKET || json[end] !== CLOSE_BRACKET) return parseBlock(json, path, b, i);
  const out: StoredSnippet[] = [];
  try {
    for (let start = 1; start < end; ) {
      let cut = json.indexOf(SNIPPET_START, start + PACK_PARSE_BYTES);
      if (cut === -1 || cut >= end) cut = end;
      const piece = JSON.parse(`[${json.toString('utf8', start, cut)}]`) as StoredSnippet[];
      for (const s of piece) out.push(s);
      start = cut + 1;
      if (start < end) await nextTurn();
    }
  } catch {
    return parseBlock(json, path, b, i);
  }
  return out.length === b.count ? out : parseBlock(json, path, b, i);
}

/**
 * A pack's snippets, block by block, inflated off the event loop (async zlib) and parsed in
 * pieces with turns of the event loop between them (parseBlockInPieces).
 */
export async function* readPack(path: string): AsyncGenerator<StoredSnippet[]> {
  for await (const { json, block, i } of inflatedBlocks(path)) yield await parseBlockInPieces(json, path, block, i);
}

/** A pack's blocks in order, each read, checked and inflated off the event loop (async zlib). */
async function* inflatedBlocks(path: string): AsyncGenerator<{ json: Buffer; block: BlockRef; i: number }> {
  const { fd, blocks } = openPack(path);
  try {
    for (let i = 0; i < blocks.length; i++) {
      const bytes = readBlock(fd, path, blocks[i], i);
      let json: Buffer;
      try {
        json = await gunzipAsync(bytes);
      } catch (err) {
        throw new PackError('corrupt', `${path}: block ${i} does not inflate (${(err as Error).message})`);
      }
      yield { json, block: blocks[i], i };
    }
  } finally {
    closeSync(fd);
  }
}

/** Main-thread time readPackHeads works before it gives the event loop a turn. */
const HEADS_SLICE_MS = 8;
const key = (name: string) => Buffer.from(`"${name}":`);
const ID_KEY = key('id');
const SEQ_KEY = key('seq');
const TITLE_KEY = key('title');
const BREADCRUMB_KEY = key('breadcrumb');
const SOURCE_PATH_KEY = key('sourcePath');
const NEXT_KEY = Buffer.from(',"');
const ARRAY_THEN_KEY = Buffer.from('],"');
const BACKSLASH = 0x5c;
const QUOTE = 0x22;

/**
 * The value of key `k` in one snippet's JSON (`{...}`, no nested object), parsed, or undefined
 * when the key is not there. `"k":` is never inside a string (every `"` there is escaped) and
 * `,"` never is either, so a value runs to the next `,"` (an array of strings: to the next
 * `],"`), or to the closing brace.
 */
function valueOf(snippet: Buffer, k: Buffer, array = false): unknown {
  const at = snippet.indexOf(k);
  if (at === -1) return undefined;
  const from = at + k.length;
  let to = array ? snippet.indexOf(ARRAY_THEN_KEY, from) : snippet.indexOf(NEXT_KEY, from);
  if (to === -1) to = snippet.length - 1;
  else if (array) to += 1;
  // A string without escapes is its bytes between the quotes: no JSON.parse needed.
  if (!array && snippet[from] === QUOTE && snippet[to - 1] === QUOTE && snippet.subarray(from + 1, to - 1).indexOf(BACKSLASH) === -1) {
    return snippet.toString('utf8', from + 1, to - 1);
  }
  return JSON.parse(snippet.toString('utf8', from, to));
}

/**
 * The heads of a block's snippets (snippetHead: id, seq, file, heading path, title) read from
 * its JSON's bytes without parsing the rest of each snippet (its text never becomes a string on
 * the main heap), or null when the block does not read that way (a snippet without one of the
 * keys, a value that is not JSON: then it is parsed whole). Snippets are cut before each `,{"`
 * (see parseBlockInPieces).
 */
async function headsOfBlock(json: Buffer, count: number, turnAfter: { at: number }): Promise<SnippetHead[] | null> {
  const end = json.length - 1;
  if (json[0] !== OPEN_BRACKET || json[end] !== CLOSE_BRACKET) return null;
  const out: SnippetHead[] = [];
  try {
    for (let start = 1; start < end; ) {
      let cut = json.indexOf(SNIPPET_START, start);
      if (cut === -1 || cut >= end) cut = end;
      const snippet = json.subarray(start, cut);
      const id = valueOf(snippet, ID_KEY);
      const seq = valueOf(snippet, SEQ_KEY);
      const title = valueOf(snippet, TITLE_KEY);
      const breadcrumb = valueOf(snippet, BREADCRUMB_KEY, true);
      const sourcePath = valueOf(snippet, SOURCE_PATH_KEY);
      if (typeof id !== 'number' || typeof seq !== 'number' || typeof title !== 'string' || typeof sourcePath !== 'string' || !Array.isArray(breadcrumb) || !breadcrumb.every((h) => typeof h === 'string')) {
        return null;
      }
      out.push({ id, seq, sourcePath, breadcrumb: breadcrumb as string[], title });
      start = cut + 1;
      if (performance.now() > turnAfter.at) {
        await nextTurn();
        turnAfter.at = performance.now() + HEADS_SLICE_MS;
      }
    }
  } catch {
    return null;
  }
  return out.length === count ? out : null;
}

/**
 * The heads of a pack's snippets (snippetHead of each, in order), block by block: each block
 * inflated off the event loop, its heads read from its bytes (headsOfBlock; a block that does
 * not read that way is parsed, in pieces), with a turn of the event loop every few milliseconds
 * of work. The self-retrieval check lists a build's sections from them (Store.getSnippetHeads):
 * python's 19,636 snippets are 10 MB of JSON, whose parse and garbage were the check's
 * main-thread work (issue 17's stalls, rounds 6 and 7).
 */
export async function* readPackHeads(path: string): AsyncGenerator<SnippetHead[]> {
  const turnAfter = { at: performance.now() + HEADS_SLICE_MS };
  for await (const { json, block, i } of inflatedBlocks(path)) {
    turnAfter.at = performance.now() + HEADS_SLICE_MS;
    yield (await headsOfBlock(json, block.count, turnAfter)) ?? (await parseBlockInPieces(json, path, block, i)).map(snippetHead);
  }
}

/** Every snippet of a pack, synchronously (a worker thread's input, a reader's rebuild). */
export function readPackSync(path: string): StoredSnippet[] {
  const out: StoredSnippet[] = [];
  eachPackedSync(path, (s) => out.push(s));
  return out;
}

/** The snippets of a pack one by one, in order, synchronously (one block inflated at a time). */
export function eachPackedSync(path: string, visit: (s: StoredSnippet) => void): void {
  const { fd, blocks } = openPack(path);
  try {
    blocks.forEach((b, i) => {
      let json: Buffer;
      try {
        json = gunzipSync(readBlock(fd, path, b, i));
      } catch (err) {
        if (err instanceof PackError) throw err;
        throw new PackError('corrupt', `${path}: block ${i} does not inflate (${(err as Error).message})`);
      }
      for (const s of parseBlock(json, path, b, i)) visit(s);
    });
  } finally {
    closeSync(fd);
  }
}

/** The snippets of a pack or of a staging file (told apart by the file name), synchronously. */
export function readSnippetsFileSync(path: string): StoredSnippet[] {
  return path.endsWith(PACK_EXT) ? readPackSync(path) : readStagingSync(path);
}

/**
 * The snippets of a pack or of a staging file one by one, in order (a pass of a streamed index
 * build); of a staging file, at most `limit`.
 */
export function eachSnippetInFileSync(path: string, visit: (s: StoredSnippet) => void, limit = Infinity): void {
  if (path.endsWith(PACK_EXT)) eachPackedSync(path, visit);
  else eachStagedSync(path, visit, limit);
}

/** Removes the packs of these builds; returns the files removed. */
export function removePacks(dir: string, buildIds: readonly string[]): Promise<string[]> {
  return removeBuildFiles(dir, buildIds, packFileName);
}

/** At open: removes packs (and their temporary files) no finalized build references. */
export function removeOrphanPacks(dir: string, keep: ReadonlySet<string>): Promise<string[]> {
  return removeUnkeptFiles(dir, PACK_EXT, keep);
}
