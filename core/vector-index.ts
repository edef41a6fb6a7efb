/**
 * The vector index of one library version (issue 21): a small contract with two implementations,
 * so that another index can replace them.
 *
 * - `vectra`: the index the design names (one JSON file, `index.json`, loaded whole). It fails
 *   past about 60k vectors (V8's string limit) and its load time grows with the JSON it parses.
 * - `flat`: a Float32 matrix in one binary file (`vectors.f32`, rows of `dimensions` floats),
 *   read in one call and searched by a dot product over every row.
 *
 * Vectors are normalised before they are written, so cosine similarity is a dot product. Each
 * index checks the checksum its writer recorded (sha256 of its file) when it is opened: a damaged
 * file is refused (VectorIndexError), never served.
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as Vectra from 'vectra';
import { lazyModule } from './lazy-module.ts';

/** vectra costs about 0.4 s to import: loaded when a vectra index is first written or opened. */
const vectra = lazyModule<typeof Vectra>('vectra');

export type VectorIndexKind = 'flat' | 'vectra';

/** A hit of a vector query: the row (the snippet's position in its build) and its cosine. */
export interface VectorHit {
  position: number;
  score: number;
}

/** An opened vector index: query only (indexes are written once, per build). */
export interface VectorIndex {
  /** A file index, or the store's own (BuildStore.buildVectors, queried in the database). */
  readonly kind: VectorIndexKind | 'store';
  readonly dimensions: number;
  readonly size: number;
  /** The k rows most similar to `vector` (any length-`dimensions` vector; normalised here), best first. */
  query(vector: Float32Array, k: number): Promise<VectorHit[]>;
}

/** A vector index file that cannot be used (missing, damaged, another dimension). */
export class VectorIndexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VectorIndexError';
  }
}

/**
 * A version whose vectors hold more floats than this (count x dimensions) goes into the flat
 * matrix; a smaller one into vectra. Measured on python (11,788 snippets; scripts/bench/
 * vector-index.ts, docs/providers-vectors.part.md): vectra's load (one JSON parse) took 2.9 s at
 * 256 dimensions and 4.7 s at 1,536 against 0.7 s and 1.0 s for the flat file, and its write 12-17 s
 * against 0.3-2 s; 1,000 x 256 vectors loaded in ~50 ms. Past this size vectra only costs.
 */
export const VECTRA_MAX_FLOATS = 1000 * 256;

/** The index kind for a version of `count` vectors of `dimensions`. */
export function chooseVectorIndex(count: number, dimensions: number, vectraMaxFloats = VECTRA_MAX_FLOATS): VectorIndexKind {
  return count * dimensions <= vectraMaxFloats ? 'vectra' : 'flat';
}

/** A unit-length copy of a vector (a zero vector stays zero). */
export function normalise(v: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  const out = new Float32Array(v.length);
  const norm = Math.sqrt(sum);
  if (norm === 0 || !Number.isFinite(norm)) return out;
  for (let i = 0; i < v.length; i++) out[i] = v[i] / norm;
  return out;
}

const FLAT_FILE = 'vectors.f32';
const VECTRA_FILE = 'index.json';

/** Writes `vectors` (all of `dimensions` floats) as an index of this kind into `dir` (which exists). Returns its checksum. */
export async function writeVectorIndex(kind: VectorIndexKind, dir: string, dimensions: number, vectors: readonly Float32Array[]): Promise<string> {
  for (const v of vectors) if (v.length !== dimensions) throw new VectorIndexError(`a vector has ${v.length} dimensions; the index has ${dimensions}`);
  if (kind === 'flat') {
    const matrix = new Float32Array(vectors.length * dimensions);
    vectors.forEach((v, i) => matrix.set(normalise(v), i * dimensions));
    const bytes = new Uint8Array(matrix.buffer, matrix.byteOffset, matrix.byteLength);
    await writeFile(join(dir, FLAT_FILE), bytes);
    return sha256(bytes);
  }
  const index = new (vectra().LocalIndex)(dir);
  await index.createIndex({ version: 1, deleteIfExists: true });
  await index.beginUpdate();
  for (let i = 0; i < vectors.length; i++) await index.insertItem({ id: String(i), vector: Array.from(normalise(vectors[i])), metadata: {} });
  await index.endUpdate();
  return sha256(await readFile(join(dir, VECTRA_FILE)));
}

/** Opens an index written by writeVectorIndex, checking its checksum and size. */
export async function openVectorIndex(kind: VectorIndexKind, dir: string, dimensions: number, size: number, checksum: string): Promise<VectorIndex> {
  if (kind === 'flat') {
    const bytes = await readOrRefuse(join(dir, FLAT_FILE));
    if (sha256(bytes) !== checksum) throw new VectorIndexError(`vector file ${join(dir, FLAT_FILE)} does not match its checksum`);
    if (bytes.byteLength !== size * dimensions * 4) throw new VectorIndexError(`vector file ${join(dir, FLAT_FILE)} holds ${bytes.byteLength} bytes, not ${size} x ${dimensions} floats`);
    return flatIndex(floatsOf(bytes), dimensions, size);
  }
  const file = join(dir, VECTRA_FILE);
  const bytes = await readOrRefuse(file);
  if (sha256(bytes) !== checksum) throw new VectorIndexError(`vector index ${file} does not match its checksum`);
  const index = new (vectra().LocalIndex)(dir);
  const stats = await index.getIndexStats();
  if (stats.items !== size) throw new VectorIndexError(`vector index ${file} holds ${stats.items} vectors, not ${size}`);
  return {
    kind: 'vectra',
    dimensions,
    size,
    async query(vector, k) {
      if (vector.length !== dimensions) return [];
      const found = await index.queryItems(Array.from(normalise(vector)), '', Math.max(1, Math.floor(k)));
      return found.map((r) => ({ position: Number(r.item.id), score: r.score }));
    },
  };
}

/**
 * The rows of an index written by writeVectorIndex (normalised), in order: what a refresh reuses
 * for unchanged snippets. Checks the checksum like openVectorIndex.
 */
export async function readVectorRows(kind: VectorIndexKind, dir: string, dimensions: number, size: number, checksum: string): Promise<Float32Array[]> {
  const file = join(dir, kind === 'flat' ? FLAT_FILE : VECTRA_FILE);
  const bytes = await readOrRefuse(file);
  if (sha256(bytes) !== checksum) throw new VectorIndexError(`vector file ${file} does not match its checksum`);
  const rows: Float32Array[] = [];
  if (kind === 'flat') {
    if (bytes.byteLength !== size * dimensions * 4) throw new VectorIndexError(`vector file ${file} holds ${bytes.byteLength} bytes, not ${size} x ${dimensions} floats`);
    const all = floatsOf(bytes);
    for (let i = 0; i < size; i++) rows.push(all.subarray(i * dimensions, (i + 1) * dimensions));
    return rows;
  }
  const data = JSON.parse(bytes.toString('utf8')) as { items?: Array<{ id?: unknown; vector?: unknown }> };
  const items = Array.isArray(data.items) ? data.items : [];
  for (const item of items) {
    const at = Number(item.id);
    if (!Number.isInteger(at) || at < 0 || at >= size || !Array.isArray(item.vector) || item.vector.length !== dimensions) {
      throw new VectorIndexError(`vector index ${file} holds an item that is not a row of ${dimensions} floats`);
    }
    rows[at] = Float32Array.from(item.vector as number[]);
  }
  for (let i = 0; i < size; i++) if (!rows[i]) throw new VectorIndexError(`vector index ${file} lacks row ${i}`);
  if (items.length !== size) throw new VectorIndexError(`vector index ${file} holds ${items.length} vectors, not ${size}`);
  return rows;
}

/** A flat matrix of normalised rows, searched by a dot product over every row. */
export function flatIndex(matrix: Float32Array, dimensions: number, size: number): VectorIndex {
  return {
    kind: 'flat',
    dimensions,
    size,
    async query(vector, k) {
      if (vector.length !== dimensions) return [];
      return topK(matrix, dimensions, size, normalise(vector), Math.max(1, Math.floor(k)));
    },
  };
}

/** The k best rows by dot product, best first (ties: the earlier row). */
function topK(matrix: Float32Array, dimensions: number, size: number, q: Float32Array, k: number): VectorHit[] {
  const best: VectorHit[] = [];
  for (let row = 0; row < size; row++) {
    let dot = 0;
    const base = row * dimensions;
    for (let j = 0; j < dimensions; j++) dot += matrix[base + j] * q[j];
    if (best.length === k && dot <= best[k - 1].score) continue;
    let at = best.length;
    while (at > 0 && best[at - 1].score < dot) at--;
    best.splice(at, 0, { position: row, score: dot });
    if (best.length > k) best.pop();
  }
  return best;
}

/** The file's bytes as floats (a view when aligned, else a copy). */
function floatsOf(bytes: Buffer): Float32Array {
  if (bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

async function readOrRefuse(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (e) {
    throw new VectorIndexError(`vector file ${file} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
