/**
 * Index segments: one immutable file per finalized build, `<dataDir>/segments/<buildId>.seg`,
 * holding the build's lexical index (core/search/index-data.ts) as typed arrays and its
 * snippets as records read one by one. Queries read the index part once and a snippet only
 * when they return it.
 *
 * Layout (little-endian):
 *   header, HEADER_BYTES: magic, format version, part lengths, counts, sha256 of the index and
 *     snippet parts, the fingerprint of the search parameters the index was computed with, the
 *     postings part's length (format 2);
 *   index part: u32 length of a JSON description (the arrays: name, type, offset, length; the
 *     views' document counts), the JSON, then each typed array at an offset aligned to 8. The
 *     dictionary and the page paths (format 4) are arrays too: each string's UTF-8 bytes one
 *     after another (`terms.bytes`, `pages.bytes`) and their offsets (`terms.start`,
 *     `pages.start`), decoded one string at a time when a query looks a word up (a binary search
 *     of about 17 strings) or names a page. Opening a small segment no longer parses a JSON
 *     dictionary (about half of its CPU, and the thousands of strings that stayed on the heap
 *     for as long as the segment was kept);
 *   snippet part: the snippets as JSON records, one after another. Their offsets and crc32s are
 *     arrays of the index part, so a record read alone is checked alone;
 *   postings part (format 2): the postings of the three BM25F views (sections, parents, pages),
 *     each view's documents then its weights, term after term, at offsets aligned to 8. Each
 *     term's list is read when a query asks for it (two reads), checked against its crc32 (an
 *     array of the index part, as are the terms' upper bounds for MaxScore) and kept in a small
 *     cache of the segment's (POSTINGS_CACHE_BYTES). The index part, read whole when the segment
 *     is opened, no longer holds the postings, by far the largest arrays of a large library.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { SearchHit, StoredSnippet } from '../../core/contracts.ts';
import { assembleRanked, type ContextSnippet, type RankedHit } from '../../core/context-assembly.ts';
import { removeBuildFiles, removeUnkeptFiles } from './build-files.ts';
import { termUpperBounds, type Bm25fData, type PostingList } from '../../core/search/bm25f.ts';
import { positionFinder, type IndexData, type Ragged, type Words } from '../../core/search/index-data.ts';
import { openLexicalIndex, type Bm25Params, type LexicalIndex } from '../../core/search/lexical-index.ts';
import { fsyncDirectory, tempFileName, writeFileAtomic } from './atomic-write.ts';

export const SEGMENT_MAGIC = 'RDKSEG\r\n';
/**
 * The format this code writes and reads; a file of another format is rebuilt. 4: the dictionary
 * and page paths as UTF-8 tables instead of JSON (3 was a reverted layout of postings by block,
 * wip/scale-5: files of it may exist, so its number is not reused).
 */
export const SEGMENT_FORMAT = 4;
/** Bytes of term postings a segment keeps read (least recently used out); counted in its `bytes`. */
export const POSTINGS_CACHE_BYTES = 16 * 1024 * 1024;
/** The BM25F views whose postings lie in the postings part. */
const PAGED_VIEWS = ['bm25', 'parentBm25', 'pageBm25'] as const;
type PagedView = (typeof PAGED_VIEWS)[number];
/**
 * The lists also read one by one (a section's prose and code words for phrases, a snippet's own
 * words, a section's heading path), with a crc32 per list in the index part.
 */
const PAGED_ROWS = ['prose', 'code', 'own', 'crumbs'] as const;
type PagedRow = (typeof PAGED_ROWS)[number];
const rowItems = (name: PagedRow) => (name === 'crumbs' ? 'crumbs.bytes' : `${name}.items`);
export const HEADER_BYTES = 256;
export const SEGMENT_DIR = 'segments';
const EXT = '.seg';

/** Why a segment cannot be used: it is rebuilt from the store's snippets. */
export class SegmentError extends Error {
  constructor(
    readonly reason: 'missing' | 'old-format' | 'corrupt',
    message: string,
  ) {
    super(message);
    this.name = 'SegmentError';
  }
}

/** A build's index and snippets as queries use them. */
export interface ServedSegment {
  readonly buildId: string;
  readonly index: LexicalIndex;
  /** Memory it holds, in bytes (what the cache budget counts). */
  readonly bytes: number;
  /** The ids of its snippets, in document order (every snippet: `snippets(ids)`). */
  readonly ids?: ArrayLike<number>;
  /**
   * The snippet with this id, read from the file; throws SegmentError when its record is damaged.
   * Still works once closed (evicted while a query used it): the file is opened for the read.
   */
  snippet(id: number): StoredSnippet | undefined;
  /**
   * The snippets with these ids, in their order (undefined for an unknown id): records lying
   * next to each other in the file (a section's snippets) are read with one read.
   */
  snippets(ids: readonly number[]): Array<StoredSnippet | undefined>;
  close(): void;
  /**
   * Releases the open file and keeps everything decoded (the index, its list cache): reads open
   * the file each until `resume`. Absent on a segment that holds no file (memorySegment).
   */
  park?(): void;
  /** Holds the file open again after `park`; false when it cannot be (closed, or the file is gone). */
  resume?(): boolean;
}

export function segmentFileName(buildId: string): string {
  return `${buildId}${EXT}`;
}

/** The fingerprint of the parameters an index was computed with: another set means a rebuild. */
export function paramsFingerprint(params: Bm25Params): Buffer {
  return createHash('sha256').update(JSON.stringify(params)).digest();
}

type ArrayKind = 'f64' | 'i32' | 'u32' | 'u8';
type Typed = Float64Array | Int32Array | Uint32Array | Uint8Array;
const KINDS: Record<ArrayKind, { bytes: number; make: (b: ArrayBuffer, off: number, n: number) => Typed }> = {
  f64: { bytes: 8, make: (b, o, n) => new Float64Array(b, o, n) },
  i32: { bytes: 4, make: (b, o, n) => new Int32Array(b, o, n) },
  u32: { bytes: 4, make: (b, o, n) => new Uint32Array(b, o, n) },
  u8: { bytes: 1, make: (b, o, n) => new Uint8Array(b, o, n) },
};
function kindOf(a: Typed): ArrayKind {
  if (a instanceof Float64Array) return 'f64';
  if (a instanceof Int32Array) return 'i32';
  if (a instanceof Uint32Array) return 'u32';
  return 'u8';
}

/** The typed arrays of an index, by name. */
function arraysOf(data: IndexData): Record<string, Typed> {
  const out: Record<string, Typed> = {
    ids: data.ids,
    secStart: data.secStart,
    pageOf: data.pageOf,
    secTokens: data.secTokens,
    hasCode: data.hasCode,
    prior: data.prior,
    parFirst: data.parFirst,
    parLast: data.parLast,
    parDepth: data.parDepth,
    vocab: data.vocab,
    ...stringArrays('terms', data.terms),
    ...stringArrays('pages', data.pagePaths),
    'crumbs.start': data.crumbs.start,
    'crumbs.bytes': data.crumbs.bytes,
  };
  const ragged = (name: string, r: Ragged) => {
    out[`${name}.start`] = r.start;
    out[`${name}.items`] = r.items;
  };
  ragged('links', data.links);
  ragged('head', data.head);
  ragged('code', data.code);
  ragged('prose', data.prose);
  ragged('parHead', data.parHead);
  ragged('own', data.own);
  const bm = (name: string, b: Bm25fData) => {
    out[`${name}.idf`] = b.idf;
    out[`${name}.start`] = b.start;
    out[`${name}.docs`] = b.docs;
    out[`${name}.tfw`] = b.tfw;
  };
  // encodeSegment moves the postings (docs, tfw) to the postings part.
  bm('bm25', data.bm25);
  bm('parentBm25', data.parentBm25);
  bm('pageBm25', data.pageBm25);
  return out;
}

/** A list of strings as arrays: their UTF-8 bytes one after another and where each starts. */
function stringArrays(name: string, words: Words): Record<string, Typed> {
  const parts: Buffer[] = [];
  const start = new Uint32Array(words.length + 1);
  for (let i = 0; i < words.length; i++) {
    const b = Buffer.from(words.at(i)!, 'utf8');
    parts.push(b);
    start[i + 1] = start[i] + b.length;
  }
  return { [`${name}.start`]: start, [`${name}.bytes`]: new Uint8Array(Buffer.concat(parts, start[words.length])) };
}

/** Strings kept as UTF-8 bytes (stringArrays), each decoded when asked for. */
class StringTable implements Words {
  readonly length: number;
  private readonly buf: Buffer;

  constructor(
    private readonly start: Uint32Array,
    bytes: Uint8Array,
  ) {
    this.length = start.length - 1;
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  at(i: number): string | undefined {
    if (!(i >= 0 && i < this.length)) return undefined;
    return this.buf.toString('utf8', this.start[i], this.start[i + 1]);
  }
}

interface Meta {
  n: { bm25: number; parentBm25: number; pageBm25: number };
  arrays: Array<{ name: string; kind: ArrayKind; offset: number; length: number }>;
  /** Arrays of the postings part: offsets from its start. */
  paged: Array<{ name: string; kind: ArrayKind; offset: number; length: number }>;
}

/** Each list's crc32 over its items' bytes. */
function rowCrcs(start: Int32Array, items: Typed): Uint32Array {
  const rows = start.length - 1;
  const out = new Uint32Array(Math.max(0, rows));
  const bytes = new Uint8Array(items.buffer, items.byteOffset, items.byteLength);
  const width = items.BYTES_PER_ELEMENT;
  for (let k = 0; k < rows; k++) out[k] = crc32(bytes.subarray(width * start[k], width * start[k + 1]));
  return out;
}

/** Each term's crc32 over its documents' bytes then its weights' bytes. */
function termCrcs(b: Bm25fData): Uint32Array {
  const terms = b.start.length - 1;
  const out = new Uint32Array(terms);
  const docBytes = new Uint8Array(b.docs.buffer, b.docs.byteOffset, b.docs.byteLength);
  const tfwBytes = new Uint8Array(b.tfw.buffer, b.tfw.byteOffset, b.tfw.byteLength);
  for (let t = 0; t < terms; t++) {
    const lo = b.start[t];
    const hi = b.start[t + 1];
    out[t] = crc32(tfwBytes.subarray(8 * lo, 8 * hi), crc32(docBytes.subarray(4 * lo, 4 * hi)));
  }
  return out;
}

const align8 = (n: number) => (n + 7) & ~7;

/**
 * Where everything of a segment goes: the arrays of the index part and of the postings part, the
 * index part's description, its length and the postings part's. It depends on the arrays'
 * lengths only, so `snipStart` and `snipCrc` (arrays of the index part) can be filled after the
 * plan is made, while the snippet records are written (writeSegmentStreamed).
 */
interface SegmentPlan {
  arrays: Record<string, Typed>;
  pagedArrays: Record<string, Typed>;
  meta: Meta;
  metaBytes: Buffer;
  /** Where the first array of the index part starts (after the description). */
  base: number;
  indexLength: number;
  postingsLength: number;
  snipStart: Float64Array;
  snipCrc: Uint32Array;
}

function planSegment(data: IndexData, snippets: number): SegmentPlan {
  const snipStart = new Float64Array(snippets + 1);
  const snipCrc = new Uint32Array(snippets);
  const arrays: Record<string, Typed> = { ...arraysOf(data), snipStart, snipCrc };
  const pagedArrays: Record<string, Typed> = {};
  for (const view of PAGED_VIEWS) {
    const b = data[view];
    pagedArrays[`${view}.docs`] = b.docs;
    pagedArrays[`${view}.tfw`] = b.tfw;
    delete arrays[`${view}.docs`];
    delete arrays[`${view}.tfw`];
    arrays[`${view}.ub`] = termUpperBounds(b);
    arrays[`${view}.crc`] = termCrcs(b);
  }
  for (const name of PAGED_ROWS) {
    const items = arrays[rowItems(name)];
    pagedArrays[rowItems(name)] = items;
    delete arrays[rowItems(name)];
    arrays[`${name}.crc`] = rowCrcs(arrays[`${name}.start`] as Int32Array, items);
  }
  let pagedAt = 0;
  const paged = Object.entries(pagedArrays).map(([name, a]) => {
    const entry = { name, kind: kindOf(a), offset: pagedAt, length: a.length };
    pagedAt = align8(pagedAt + a.byteLength);
    return entry;
  });
  const meta: Meta = {
    n: { bm25: data.bm25.n, parentBm25: data.parentBm25.n, pageBm25: data.pageBm25.n },
    arrays: [],
    paged,
  };
  // Offsets depend on the JSON's length, which depends on the offsets: lay the arrays out after
  // a JSON written with placeholder offsets of the final width, then fix them.
  let at = 0;
  const layout = Object.entries(arrays).map(([name, a]) => {
    const entry = { name, kind: kindOf(a), offset: at, length: a.length };
    at = align8(at + a.byteLength);
    return entry;
  });
  meta.arrays = layout;
  let metaBytes = Buffer.from(JSON.stringify(meta));
  let base = align8(4 + metaBytes.length);
  for (;;) {
    meta.arrays = layout.map((e) => ({ ...e, offset: e.offset + base }));
    metaBytes = Buffer.from(JSON.stringify(meta));
    const next = align8(4 + metaBytes.length);
    if (next <= base) break;
    base = next;
  }
  return { arrays, pagedArrays, meta, metaBytes, base, indexLength: base + at, postingsLength: pagedAt, snipStart, snipCrc };
}

const bytesOf = (a: Typed) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** The index part as pieces, one after another (the description, each array, zeros between them). */
function* indexPieces(plan: SegmentPlan): Generator<Uint8Array> {
  const head = Buffer.alloc(plan.base);
  head.writeUInt32LE(plan.metaBytes.length, 0);
  plan.metaBytes.copy(head, 4);
  yield head;
  let at = plan.base;
  for (const e of plan.meta.arrays) {
    if (e.offset > at) yield new Uint8Array(e.offset - at);
    const a = plan.arrays[e.name];
    yield bytesOf(a);
    at = e.offset + a.byteLength;
  }
  if (plan.indexLength > at) yield new Uint8Array(plan.indexLength - at);
}

/** The postings part as pieces (each array, then zeros to the next multiple of 8). */
function* postingPieces(plan: SegmentPlan): Generator<Uint8Array> {
  for (const e of plan.meta.paged) {
    const a = plan.pagedArrays[e.name];
    yield bytesOf(a);
    const pad = align8(a.byteLength) - a.byteLength;
    if (pad > 0) yield new Uint8Array(pad);
  }
}

function headerOf(plan: SegmentPlan, data: IndexData, snippets: number, indexHash: Buffer, snippetHash: Buffer, params: Bm25Params): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(SEGMENT_MAGIC, 0, 'latin1');
  header.writeUInt32LE(SEGMENT_FORMAT, 8);
  header.writeUInt32LE(HEADER_BYTES, 12);
  header.writeDoubleLE(plan.indexLength, 16);
  header.writeDoubleLE(plan.snipStart[snippets], 24);
  header.writeUInt32LE(snippets, 32);
  header.writeUInt32LE(data.secStart.length - 1, 36);
  header.writeUInt32LE(data.terms.length, 40);
  indexHash.copy(header, 48);
  snippetHash.copy(header, 80);
  paramsFingerprint(params).copy(header, 112);
  header.writeDoubleLE(plan.postingsLength, 144);
  return header;
}

/**
 * The bytes of a segment file, as chunks written one after another. `snippets` in the order the
 * index numbers them (data.ids).
 */
export function encodeSegment(data: IndexData, snippets: readonly StoredSnippet[], params: Bm25Params): { chunks: Uint8Array[]; checksum: string; size: number } {
  if (snippets.length !== data.ids.length) throw new Error('encodeSegment: the snippets do not match the index.');
  const records = snippets.map((s) => Buffer.from(JSON.stringify(s)));
  const plan = planSegment(data, records.length);
  records.forEach((r, i) => {
    plan.snipStart[i + 1] = plan.snipStart[i] + r.length;
    plan.snipCrc[i] = crc32(r);
  });
  const index = [...indexPieces(plan)];
  const indexHash = createHash('sha256');
  for (const piece of index) indexHash.update(piece);
  const snippetHash = createHash('sha256');
  for (const r of records) snippetHash.update(r);
  const header = headerOf(plan, data, records.length, indexHash.digest(), snippetHash.digest(), params);
  return {
    chunks: [header, ...index, ...records, ...postingPieces(plan)],
    checksum: checksumOf(header),
    size: HEADER_BYTES + plan.indexLength + plan.snipStart[records.length] + plan.postingsLength,
  };
}

/** One pass over a build's snippets, in index order (a file read again: segment-build.ts). */
export type StoredSnippetPass = (visit: (s: StoredSnippet) => void) => void;

/**
 * writeSegment without the snippets in memory: the same file, byte for byte, written in place.
 * The layout depends only on the arrays' lengths, so the snippet records are written first at
 * their offset, one pass over `eachSnippet` (which must give the snippets of `data.ids`, in
 * order), filling their offsets and crc32s; then the index part, the postings part and the
 * header, each from the arrays as they are (no buffer of the whole file or of a part). Atomic as
 * writeSegment (temporary file, fsync, rename, fsync of the directory).
 */
export async function writeSegmentStreamed(
  dir: string,
  buildId: string,
  data: IndexData,
  eachSnippet: StoredSnippetPass,
  params: Bm25Params,
): Promise<{ file: string; checksum: string; format: number; size: number }> {
  await mkdir(dir, { recursive: true });
  const file = segmentFileName(buildId);
  const path = join(dir, file);
  const tmp = tempFileName(path);
  const count = data.ids.length;
  const plan = planSegment(data, count);
  const fd = openSync(tmp, 'w', 0o644);
  let header: Buffer;
  try {
    const writeAt = (piece: Uint8Array, position: number) => {
      let done = 0;
      while (done < piece.length) done += writeSync(fd, piece, done, piece.length - done, position + done);
    };
    // The snippet records, in pieces of about 4 MB.
    const snippetHash = createHash('sha256');
    let position = HEADER_BYTES + plan.indexLength;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = () => {
      if (pendingBytes === 0) return;
      const piece = Buffer.concat(pending, pendingBytes);
      writeAt(piece, position);
      position += piece.length;
      pending = [];
      pendingBytes = 0;
    };
    let i = 0;
    eachSnippet((s) => {
      if (i >= count || s.id !== data.ids[i]) throw new Error(`writeSegmentStreamed: snippet ${i} (id ${s.id}) is not the index's (${data.ids[i]}).`);
      const r = Buffer.from(JSON.stringify(s));
      plan.snipStart[i + 1] = plan.snipStart[i] + r.length;
      plan.snipCrc[i] = crc32(r);
      snippetHash.update(r);
      pending.push(r);
      pendingBytes += r.length;
      if (pendingBytes >= 4 << 20) flush();
      i++;
    });
    flush();
    if (i !== count) throw new Error(`writeSegmentStreamed: ${i} snippets, the index has ${count}.`);
    const indexHash = createHash('sha256');
    position = HEADER_BYTES;
    for (const piece of indexPieces(plan)) {
      indexHash.update(piece);
      writeAt(piece, position);
      position += piece.length;
    }
    position = HEADER_BYTES + plan.indexLength + plan.snipStart[count];
    for (const piece of postingPieces(plan)) {
      writeAt(piece, position);
      position += piece.length;
    }
    header = headerOf(plan, data, count, indexHash.digest(), snippetHash.digest(), params);
    writeAt(header, 0);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    await unlink(tmp).catch(() => {});
    throw err;
  }
  closeSync(fd);
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await fsyncDirectory(dir);
  return { file, checksum: checksumOf(header), format: SEGMENT_FORMAT, size: HEADER_BYTES + plan.indexLength + plan.snipStart[count] + plan.postingsLength };
}

/**
 * The checksum the catalog records for a segment: over the header's part hashes, fingerprint
 * and the postings part's length (the postings are checked term by term with crc32s of the
 * index part).
 */
function checksumOf(header: Buffer): string {
  return createHash('sha256').update(header.subarray(48, 152)).digest('hex');
}

/** Writes a segment file atomically (temporary file, fsync, rename). */
export async function writeSegment(
  dir: string,
  buildId: string,
  data: IndexData,
  snippets: readonly StoredSnippet[],
  params: Bm25Params,
): Promise<{ file: string; checksum: string; format: number; size: number }> {
  await mkdir(dir, { recursive: true });
  const { chunks, checksum, size } = encodeSegment(data, snippets, params);
  const file = segmentFileName(buildId);
  await writeFileAtomic(join(dir, file), chunks);
  return { file, checksum, format: SEGMENT_FORMAT, size };
}

/**
 * Opens a segment: checks the header, reads the index part whole (checked against its sha256)
 * and keeps the file open to read snippets from. Throws SegmentError (missing, old-format,
 * corrupt) when it cannot be used. `anyParams`: a segment of other search parameters is opened
 * too, only to read its snippets (a store without another copy of them rebuilds it from those).
 */
export function openSegment(path: string, buildId: string, params: Bm25Params, expectedChecksum: string | null, anyParams = false): ServedSegment {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SegmentError('missing', `segment file ${path} is missing`);
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const header = Buffer.alloc(HEADER_BYTES);
    if (readFully(fd, header, 0) < HEADER_BYTES || header.toString('latin1', 0, 8) !== SEGMENT_MAGIC) {
      throw new SegmentError('corrupt', `segment file ${path} has no segment header`);
    }
    const format = header.readUInt32LE(8);
    if (format !== SEGMENT_FORMAT) throw new SegmentError('old-format', `segment file ${path} has format ${format}; this version reads ${SEGMENT_FORMAT}`);
    if (!anyParams && !paramsFingerprint(params).equals(header.subarray(112, 144))) {
      throw new SegmentError('old-format', `segment file ${path} was computed with other search parameters`);
    }
    const indexLength = header.readDoubleLE(16);
    const snippetLength = header.readDoubleLE(24);
    const postingsLength = header.readDoubleLE(144);
    const described = HEADER_BYTES + indexLength + snippetLength + postingsLength;
    if (![indexLength, snippetLength, postingsLength].every((n) => Number.isSafeInteger(n) && n >= 0) || described !== size) {
      throw new SegmentError('corrupt', `segment file ${path} is ${size} bytes; its header describes ${described}`);
    }
    if (expectedChecksum !== null && checksumOf(header) !== expectedChecksum) {
      throw new SegmentError('corrupt', `segment file ${path} is not the one the catalog recorded (checksum differs)`);
    }
    const index = Buffer.allocUnsafeSlow(indexLength);
    if (readFully(fd, index, HEADER_BYTES) < indexLength) throw new SegmentError('corrupt', `segment file ${path} is truncated`);
    if (!createHash('sha256').update(index).digest().equals(header.subarray(48, 80))) {
      throw new SegmentError('corrupt', `segment file ${path}: the index part does not match its checksum`);
    }
    const base = HEADER_BYTES + indexLength;
    let open = true;
    /** Released by park (its file closed, its decoded parts kept); resume opens the file again. */
    let parked = false;
    let identity = '';
    /** Reads the file at `position` into buf (the file is opened for the read once closed); the bytes read. */
    const readAt = (buf: Uint8Array, position: number): number => {
      if (open) return readFully(fd, buf, position);
      let once: number;
      try {
        once = openSync(path, 'r');
      } catch {
        throw new SegmentError('missing', `segment file ${path} is gone`);
      }
      try {
        return readFully(once, buf, position);
      } finally {
        closeSync(once);
      }
    };
    const postingCache = new PostingCache(Math.min(POSTINGS_CACHE_BYTES, postingsLength));
    const pbase = base + snippetLength;
    /** Where an array of the postings part lies, checked against the part and the expected kind and length. */
    const pagedEntry = (meta: Meta, name: string, kind: ArrayKind, length: number) => {
      const e = meta.paged.find((x) => x.name === name);
      if (!e || e.kind !== kind || e.length !== length || e.offset % 8 !== 0 || e.offset + length * KINDS[kind].bytes > postingsLength) {
        throw new SegmentError('corrupt', `segment file ${path}: array ${name} of the postings part is missing or lies outside it`);
      }
      return e;
    };
    const readers: PagedReaders = {
      postings(view, meta, arrays) {
        const start = arrays[`${view}.start`];
        const crc = arrays[`${view}.crc`];
        const total = start[start.length - 1];
        if (!crc || crc.length !== start.length - 1) throw new SegmentError('corrupt', `segment file ${path}: the postings of ${view} are not described`);
        const docsAt = pagedEntry(meta, `${view}.docs`, 'i32', total);
        const tfwAt = pagedEntry(meta, `${view}.tfw`, 'f64', total);
        return (t: number): PostingList => {
          const key = `${view}\u0000${t}`;
          const cached = postingCache.get(key) as PostingList | undefined;
          if (cached) return cached;
          const lo = start[t];
          const n = start[t + 1] - lo;
          const docs = new Int32Array(n);
          const tfw = new Float64Array(n);
          const docBytes = new Uint8Array(docs.buffer);
          const tfwBytes = new Uint8Array(tfw.buffer);
          if (
            readAt(docBytes, pbase + docsAt.offset + 4 * lo) < docBytes.length ||
            readAt(tfwBytes, pbase + tfwAt.offset + 8 * lo) < tfwBytes.length ||
            crc32(tfwBytes, crc32(docBytes)) !== crc[t]
          ) {
            throw new SegmentError('corrupt', `segment file ${path}: the postings of term ${t} (${view}) are damaged`);
          }
          const list = { docs, tfw };
          postingCache.set(key, list, docBytes.length + tfwBytes.length);
          return list;
        };
      },
      row(name, meta, arrays) {
        const start = arrays[`${name}.start`];
        const crc = arrays[`${name}.crc`];
        const kind: ArrayKind = name === 'crumbs' ? 'u8' : 'i32';
        if (!crc || crc.length !== start.length - 1) throw new SegmentError('corrupt', `segment file ${path}: the lists of ${name} are not described`);
        const at = pagedEntry(meta, rowItems(name), kind, start[start.length - 1]);
        const width = KINDS[kind].bytes;
        return (k: number) => {
          const key = `${name}\u0000${k}`;
          const cached = postingCache.get(key) as Int32Array | Uint8Array | undefined;
          if (cached) return cached;
          const lo = start[k];
          const n = start[k + 1] - lo;
          const row = kind === 'u8' ? new Uint8Array(n) : new Int32Array(n);
          const bytes = new Uint8Array(row.buffer);
          if (readAt(bytes, pbase + at.offset + width * lo) < bytes.length || crc32(bytes) !== crc[k]) {
            throw new SegmentError('corrupt', `segment file ${path}: list ${k} of ${name} is damaged`);
          }
          postingCache.set(key, row, bytes.length + 64);
          return row;
        };
      },
    };
    const { data, snipStart, snipCrc } = decodeIndex(index, path, readers);
    if (data.terms.length !== header.readUInt32LE(40)) throw new SegmentError('corrupt', `segment file ${path}: its dictionary does not match its header`);
    const lexical = openLexicalIndex(data, params);
    const ids = data.ids;
    const positionOf = positionFinder(ids);
    const snippets = (wanted: readonly number[]): Array<StoredSnippet | undefined> => {
      const out: Array<StoredSnippet | undefined> = new Array(wanted.length);
      const at: Array<{ k: number; i: number }> = [];
      wanted.forEach((id, k) => {
        const i = positionOf(id);
        if (i >= 0) at.push({ k, i });
      });
      at.sort((a, b) => a.i - b.i);
      for (let r = 0; r < at.length; ) {
        // A run of records next to each other (or the same record asked twice): one read.
        let e = r + 1;
        while (e < at.length && at[e].i - at[e - 1].i <= 1) e++;
        const from = snipStart[at[r].i];
        const buf = Buffer.allocUnsafe(snipStart[at[e - 1].i + 1] - from);
        const got = readAt(buf, base + from);
        for (let x = r; x < e; x++) {
          const i = at[x].i;
          const rec = buf.subarray(snipStart[i] - from, snipStart[i + 1] - from);
          if (snipStart[i + 1] - from > got || crc32(rec) !== snipCrc[i]) {
            throw new SegmentError('corrupt', `segment file ${path}: snippet record ${i} is damaged`);
          }
          out[at[x].k] = freezeSnippet(JSON.parse(rec.toString('utf8')) as StoredSnippet);
        }
        r = e;
      }
      return out;
    };
    return {
      buildId,
      index: lexical,
      bytes: indexLength + postingCache.capacity,
      ids,
      snippet: (id) => snippets([id])[0],
      snippets,
      close() {
        parked = false;
        postingCache.clear();
        if (!open) return;
        open = false;
        closeSync(fd);
      },
      park() {
        if (!open) return;
        identity = fileIdentity(fd);
        open = false;
        parked = true;
        closeSync(fd);
      },
      resume() {
        if (open) return true;
        if (!parked) return false;
        let again: number;
        try {
          again = openSync(path, 'r');
        } catch {
          return false;
        }
        // The same file only (a segment rewritten under its name meanwhile is opened anew).
        if (fileIdentity(again) !== identity) {
          closeSync(again);
          return false;
        }
        fd = again;
        open = true;
        parked = false;
        return true;
      },
    };
  } catch (err) {
    closeSync(fd);
    if (err instanceof SegmentError) throw err;
    throw new SegmentError('corrupt', `segment file ${path} cannot be read: ${(err as Error).message}`);
  }
}

/** A search of a served segment: the index's results with their snippets, best first. */
export function searchServedSegment(segment: ServedSegment, query: string, limit: number): SearchHit[] {
  const hits: SearchHit[] = [];
  const results = segment.index.search(query, limit);
  const snippets = segment.snippets(results.map((r) => r.id));
  for (let k = 0; k < results.length; k++) {
    const r = results[k];
    const snippet = snippets[k];
    if (snippet) hits.push(r.unit ? { snippet, score: r.score, unit: r.unit } : { snippet, score: r.score });
  }
  return hits;
}

/**
 * The context answer (core/context-assembly.ts) from a served segment, reading only the snippet
 * records the answer can use (assembleRanked), not every candidate's.
 */
export function assembleFromSegment(segment: ServedSegment, query: string, limit: number, budget: number): ContextSnippet[] {
  const ranked: RankedHit[] = segment.index.search(query, limit).map((r) =>
    r.unit ? { id: r.id, score: r.score, key: r.unit.key, unit: r.unit } : { id: r.id, score: r.score, key: segment.index.sectionKeyOf(r.id) ?? `\u0003${r.id}` },
  );
  return assembleRanked(ranked, (ids) => segment.snippets(ids), query, budget);
}

/** A segment held in memory (a reader that cannot write the file it rebuilt). */
export function memorySegment(buildId: string, data: IndexData, snippets: readonly StoredSnippet[], params: Bm25Params): ServedSegment {
  const byId = new Map(snippets.map((s) => [s.id, s]));
  return {
    buildId,
    index: openLexicalIndex(data, params),
    ids: data.ids,
    bytes: Object.values(arraysOf(data)).reduce((n, a) => n + a.byteLength, 0) + snippets.reduce((n, s) => n + 2 * (s.content.length + s.code.length) + 400, 0),
    snippet: (id) => byId.get(id),
    snippets: (ids) => ids.map((id) => byId.get(id)),
    close() {},
  };
}

type CachedList = PostingList | Int32Array | Uint8Array;

/** The term postings and lists a segment has read, least recently used out past `capacity` bytes. */
class PostingCache {
  private readonly lists = new Map<string, { list: CachedList; bytes: number }>();
  private used = 0;

  constructor(readonly capacity: number) {}

  get(key: string): CachedList | undefined {
    const e = this.lists.get(key);
    if (!e) return undefined;
    this.lists.delete(key);
    this.lists.set(key, e);
    return e.list;
  }

  /** A list larger than the whole capacity is not kept (its query holds it while it runs). */
  set(key: string, list: CachedList, bytes: number): void {
    if (bytes > this.capacity) return;
    this.lists.set(key, { list, bytes });
    this.used += bytes;
    for (const [k, e] of this.lists) {
      if (this.used <= this.capacity) break;
      this.lists.delete(k);
      this.used -= e.bytes;
    }
  }

  clear(): void {
    this.lists.clear();
    this.used = 0;
  }
}

interface PagedReaders {
  postings(view: PagedView, meta: Meta, arrays: Record<string, Typed>): (t: number) => PostingList;
  row(name: PagedRow, meta: Meta, arrays: Record<string, Typed>): (k: number) => Int32Array | Uint8Array;
}

function decodeIndex(index: Buffer, path: string, paged: PagedReaders): { data: IndexData; snipStart: Float64Array; snipCrc: Uint32Array } {
  const metaLength = index.readUInt32LE(0);
  const meta = JSON.parse(index.toString('utf8', 4, 4 + metaLength)) as Meta;
  const a: Record<string, Typed> = {};
  for (const e of meta.arrays) {
    const kind = KINDS[e.kind];
    if (!kind || e.offset % 8 !== 0 || e.offset + e.length * kind.bytes > index.length) {
      throw new SegmentError('corrupt', `segment file ${path}: array ${e.name} lies outside the index part`);
    }
    a[e.name] = kind.make(index.buffer as ArrayBuffer, index.byteOffset + e.offset, e.length);
  }
  const need = (name: string) => {
    const v = a[name];
    if (!v) throw new SegmentError('corrupt', `segment file ${path}: array ${name} is missing`);
    return v;
  };
  const ragged = (name: string): Ragged => ({ start: need(`${name}.start`) as Int32Array, items: need(`${name}.items`) as Int32Array });
  const pagedCrumbs = () => {
    need('crumbs.crc');
    return { start: need('crumbs.start') as Int32Array, bytes: new Uint8Array(0), row: paged.row('crumbs', meta, a) as (k: number) => Uint8Array };
  };
  const pagedRagged = (name: 'prose' | 'code' | 'own'): Ragged => {
    need(`${name}.start`);
    need(`${name}.crc`);
    return { start: need(`${name}.start`) as Int32Array, items: new Int32Array(0), row: paged.row(name, meta, a) as (k: number) => Int32Array };
  };
  if (!Array.isArray(meta.paged)) throw new SegmentError('corrupt', `segment file ${path}: the postings part is not described`);
  const bm = (name: PagedView): Bm25fData => {
    need(`${name}.start`);
    const ub = need(`${name}.ub`) as Float64Array;
    if (ub.length !== need(`${name}.start`).length - 1) throw new SegmentError('corrupt', `segment file ${path}: the upper bounds of ${name} do not match its terms`);
    return {
      n: meta.n[name],
      idf: need(`${name}.idf`) as Float64Array,
      start: need(`${name}.start`) as Int32Array,
      docs: new Int32Array(0),
      tfw: new Float64Array(0),
      ub,
      postings: paged.postings(name, meta, a),
    };
  };
  const strings = (name: string): StringTable => {
    const start = need(`${name}.start`);
    const bytes = need(`${name}.bytes`);
    if (!(start instanceof Uint32Array) || !(bytes instanceof Uint8Array) || start.length === 0 || start[0] !== 0 || start[start.length - 1] !== bytes.length) {
      throw new SegmentError('corrupt', `segment file ${path}: the strings of ${name} are not described`);
    }
    return new StringTable(start, bytes);
  };
  const data: IndexData = {
    terms: strings('terms'),
    pagePaths: strings('pages'),
    ids: need('ids') as Float64Array,
    secStart: need('secStart') as Int32Array,
    pageOf: need('pageOf') as Int32Array,
    secTokens: need('secTokens') as Float64Array,
    hasCode: need('hasCode') as Uint8Array,
    prior: need('prior') as Float64Array,
    links: ragged('links'),
    head: ragged('head'),
    code: pagedRagged('code'),
    prose: pagedRagged('prose'),
    crumbs: pagedCrumbs(),
    parFirst: need('parFirst') as Int32Array,
    parLast: need('parLast') as Int32Array,
    parDepth: need('parDepth') as Int32Array,
    parHead: ragged('parHead'),
    own: pagedRagged('own'),
    bm25: bm('bm25'),
    parentBm25: bm('parentBm25'),
    pageBm25: bm('pageBm25'),
    vocab: need('vocab') as Int32Array,
  };
  return { data, snipStart: need('snipStart') as Float64Array, snipCrc: need('snipCrc') as Uint32Array };
}

/** Device, inode, size and change time of an open file: another file under the same name differs. */
function fileIdentity(fd: number): string {
  const st = fstatSync(fd, { bigint: true });
  return `${st.dev}:${st.ino}:${st.size}:${st.ctimeNs}`;
}

function freezeSnippet(s: StoredSnippet): StoredSnippet {
  Object.freeze(s.breadcrumb);
  return Object.freeze(s);
}

/** Reads until `buf` is full or the file ends; returns the bytes read. */
function readFully(fd: number, buf: Uint8Array, position: number): number {
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/**
 * Removes the segment files of these builds (a deleted library, a replaced build). Missing
 * files are fine; returns the files removed.
 */
export function removeSegments(dir: string, buildIds: readonly string[]): Promise<string[]> {
  return removeBuildFiles(dir, buildIds, segmentFileName);
}

/**
 * Removes segment files no finalized build references and temporary files of interrupted
 * writes (a crash between writing a segment and recording it). Returns the names removed.
 */
export function removeOrphanSegments(dir: string, keep: ReadonlySet<string>): Promise<string[]> {
  return removeUnkeptFiles(dir, EXT, keep);
}
