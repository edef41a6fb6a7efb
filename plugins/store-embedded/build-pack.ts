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
import type { StoredSnippet } from '../../core/contracts.ts';
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
export async function writePackJson(dir: string, buildId: string, batches: AsyncIterable<readonly string[]> | Iterable<readonly string[]>): Promise<{ file: string; count: number; blocks: number; bytes: number }> {
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
    let pending: string[] = [];
    let count = 0;
    const flushBlock = async () => {
      if (pending.length === 0) return;
      const bytes = await gzipAsync(`[${pending.join(',')}]`);
      blocks.push({ offset: position, length: bytes.length, count: pending.length, crc: crc32(bytes) });
      await write(bytes);
      pending = [];
    };
    for await (const batch of batches) {
      for (const json of batch) {
        pending.push(json);
        count++;
        if (pending.length >= PACK_BLOCK_SNIPPETS) await flushBlock();
      }
    }
    await flushBlock();
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

/** A pack's snippets, block by block, inflated off the event loop (async zlib). */
export async function* readPack(path: string): AsyncGenerator<StoredSnippet[]> {
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
      yield parseBlock(json, path, blocks[i], i);
    }
  } finally {
    closeSync(fd);
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
