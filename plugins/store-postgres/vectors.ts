/**
 * Build vectors in pgvector (issue 24), when the server has the `vector` extension and migration
 * 002 created `snippet_vectors`: the store's own vector index (BuildStore.buildVectors), so every
 * node searches every build's vectors in the database. Rows: (build_id, ordinal = the snippet's
 * seq, model, dimensions, embedding); the build's model, dimension, checksum and the text hash of
 * each row go in `builds` (embedding_model, embedding_dimensions, and migration 004's
 * embedding_checksum and embedding_hashes). Queried by cosine distance with the per-dimension
 * partial HNSW index (docs/scale-out.md): a dimension the migration did not index gets its index
 * when the first build using it is written; past 4,000 dimensions (pgvector's halfvec limit) the
 * query is an exact scan. A build's vectors are deleted with the build (ON DELETE CASCADE).
 *
 * Without the extension (PgRowVectors below), a build's vectors are a flat matrix of normalised
 * float32 rows (core/vector-index.ts's `flat` file) kept in `vector_chunks` pieces (migration
 * 009), like its index segment: any node fetches them once to its cache directory
 * (`<buildId>.vec`, SHA-256 checked, under the disk budget of segment-cache.ts) and searches them
 * in memory, as the embedded store searches its flat file.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { BuildVectorStore, StoredVectorsMeta } from '../../core/contracts.ts';
import { flatIndex, normalise, type VectorIndex } from '../../core/vector-index.ts';
import type { PgDatabase } from './database.ts';
import type { PgSegmentCache } from './segment-cache.ts';
import { SegmentRowsError, downloadPieces, uploadPieces, type Run } from './segment-rows.ts';

/** pgvector's HNSW limits: `vector` up to 2,000 dimensions, `halfvec` up to 4,000. */
const VECTOR_HNSW_MAX = 2000;
const HALFVEC_HNSW_MAX = 4000;
/** Rows per INSERT. */
const WRITE_BATCH = 500;

/** The cast a dimension's index and queries use, or null for an exact scan. */
function castOf(dims: number): string | null {
  if (dims <= VECTOR_HNSW_MAX) return `vector(${dims})`;
  if (dims <= HALFVEC_HNSW_MAX) return `halfvec(${dims})`;
  return null;
}

const literal = (v: Float32Array) => `[${Array.from(v, (x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;

function checksumOf(model: string, dimensions: number, vectors: readonly Float32Array[]): string {
  const h = createHash('sha256').update(`${model}\u0000${dimensions}\u0000${vectors.length}\u0000`);
  for (const v of vectors) h.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  return h.digest('hex');
}

/** How long a build's vectors record is trusted without a change on the feed (as the served build: segment-cache.ts). */
const VECTORS_RECORD_REREAD_MS = 60_000;
/** Build records kept per node. */
const VECTORS_RECORDS = 256;

/** What the builds row records of a build's vectors (both kinds of store keep them there). */
interface VectorsRecord {
  libraryId: string;
  meta: StoredVectorsMeta | null;
  /** The matrix in `vector_chunks` (PgRowVectors), null when the vectors are not kept there. */
  pieces: { chunks: number; bytes: number } | null;
}

/**
 * The vectors records of builds, kept per node: core asks for a version's vectors meta on every
 * question once an embedder is configured, and the meta holds one text hash per snippet (about
 * 0.5 MB for python), so it is read again only when the change feed names the build's library
 * (a write or removal of vectors publishes it) or after VECTORS_RECORD_REREAD_MS.
 */
class VectorsRecords {
  private readonly known = new Map<string, { record: VectorsRecord; at: number }>();
  /** Library changes heard: a read that began before one does not keep what it read. */
  private heard = 0;

  constructor(private readonly database: PgDatabase) {
    database.changes.on('change', (topic: string, id: string) => {
      if (topic !== 'library') return;
      this.heard++;
      for (const [buildId, k] of this.known) if (k.record.libraryId === id) this.known.delete(buildId);
    });
  }

  async get(buildId: string): Promise<VectorsRecord | null> {
    const hit = this.known.get(buildId);
    if (hit && Date.now() - hit.at < VECTORS_RECORD_REREAD_MS) {
      this.known.delete(buildId);
      this.known.set(buildId, hit);
      return hit.record;
    }
    const heard = this.heard;
    const [r] = await this.database.query<{
      library_id: string;
      embedding_model: string;
      embedding_dimensions: number;
      embedding_checksum: string | null;
      embedding_hashes: string[] | null;
      vectors_chunks: number | null;
      vectors_bytes: string | null;
    }>(
      'SELECT library_id, embedding_model, embedding_dimensions, embedding_checksum, embedding_hashes, vectors_chunks, vectors_bytes FROM builds WHERE id = $1',
      [buildId],
    );
    if (!r) return null;
    const meta =
      r.embedding_checksum !== null && Array.isArray(r.embedding_hashes)
        ? { model: r.embedding_model, dimensions: r.embedding_dimensions, count: r.embedding_hashes.length, checksum: r.embedding_checksum, hashes: r.embedding_hashes }
        : null;
    const record = { libraryId: r.library_id, meta, pieces: meta && r.vectors_chunks !== null ? { chunks: r.vectors_chunks, bytes: Number(r.vectors_bytes) } : null };
    this.known.delete(buildId);
    if (this.heard === heard) this.known.set(buildId, { record, at: Date.now() });
    while (this.known.size > VECTORS_RECORDS) this.known.delete(this.known.keys().next().value!);
    return record;
  }
}

/** Checks a build's vectors before they are written: a positive dimension, one text hash per vector. */
function checkInput(input: { dimensions: number; hashes: string[]; vectors: Float32Array[] }): void {
  const dims = input.dimensions;
  if (!Number.isInteger(dims) || dims <= 0) throw new Error(`vectors of ${dims} dimensions cannot be stored`);
  if (input.hashes.length !== input.vectors.length) throw new Error('one text hash per vector is needed');
}

/** Locks a build's row in a transaction; its library. Throws when the build is gone. */
async function lockBuild(c: { query(sql: string, params: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> }, buildId: string): Promise<string> {
  const { rows } = await c.query('SELECT library_id FROM builds WHERE id = $1 FOR UPDATE', [buildId]);
  if (!rows[0]) throw new Error(`build ${buildId} does not exist (its library may have been deleted)`);
  return String(rows[0].library_id);
}

/** Removes a build's vectors of either kind and its record of them, in one transaction; its library (null: the build is gone). */
async function removeVectors(database: PgDatabase, buildId: string): Promise<string | null> {
  return database.tx(async (c) => {
    const [row] = (await c.query('SELECT library_id FROM builds WHERE id = $1 FOR UPDATE', [buildId])).rows;
    if (!row) return null;
    if ((await c.query("SELECT to_regclass('snippet_vectors') IS NOT NULL AS yes")).rows[0].yes) await c.query('DELETE FROM snippet_vectors WHERE build_id = $1', [buildId]);
    await c.query('DELETE FROM vector_chunks WHERE build_id = $1', [buildId]);
    await c.query(
      'UPDATE builds SET embedding_model = NULL, embedding_dimensions = NULL, embedding_checksum = NULL, embedding_hashes = NULL, vectors_bytes = NULL, vectors_chunks = NULL WHERE id = $1',
      [buildId],
    );
    return String(row.library_id);
  });
}

export class PgVectors implements BuildVectorStore {
  private readonly indexed = new Set<number>();
  /** Whether `hnsw.iterative_scan` exists (pgvector 0.8+): a filtered HNSW scan then still fills its LIMIT. */
  private iterative: boolean | null = null;

  private readonly records: VectorsRecords;

  constructor(private readonly database: PgDatabase) {
    this.records = new VectorsRecords(database);
  }

  /** Whether the database has pgvector and the vectors table (migration 002 applied, not skipped). */
  static async available(database: PgDatabase): Promise<boolean> {
    const rows = await database.query(
      "SELECT 1 FROM pg_extension WHERE extname = 'vector' AND to_regclass('snippet_vectors') IS NOT NULL",
    );
    return rows.length > 0;
  }

  async write(buildId: string, input: { model: string; dimensions: number; hashes: string[]; vectors: Float32Array[] }): Promise<string> {
    checkInput(input);
    const dims = input.dimensions;
    const checksum = checksumOf(input.model, dims, input.vectors);
    await this.ensureIndex(dims);
    const libraryId = await this.database.tx(async (c) => {
      const library = await lockBuild(c, buildId);
      await c.query('DELETE FROM snippet_vectors WHERE build_id = $1', [buildId]);
      for (let at = 0; at < input.vectors.length; at += WRITE_BATCH) {
        const part = input.vectors.slice(at, at + WRITE_BATCH);
        await c.query(
          `INSERT INTO snippet_vectors (build_id, ordinal, model, dimensions, embedding)
           SELECT $1, o, $2, $3, e::vector FROM unnest($4::int[], $5::text[]) AS t(o, e)`,
          [buildId, input.model, dims, part.map((_, i) => at + i), part.map(literal)],
        );
      }
      await c.query(
        'UPDATE builds SET embedding_model = $2, embedding_dimensions = $3, embedding_checksum = $4, embedding_hashes = $5::jsonb WHERE id = $1',
        [buildId, input.model, dims, checksum, JSON.stringify(input.hashes)],
      );
      return library;
    });
    await this.database.publish('library', libraryId); // every node reads the build's vectors record again
    return checksum;
  }

  async meta(buildId: string): Promise<StoredVectorsMeta | null> {
    return (await this.records.get(buildId))?.meta ?? null;
  }

  async rows(buildId: string): Promise<Float32Array[]> {
    const rows = await this.database.query<{ ordinal: number; e: string }>('SELECT ordinal, embedding::text AS e FROM snippet_vectors WHERE build_id = $1 ORDER BY ordinal', [buildId]);
    return rows.map((r) => Float32Array.from(JSON.parse(r.e) as number[]));
  }

  async query(buildId: string, vector: Float32Array, k: number): Promise<Array<{ position: number; score: number }>> {
    const dims = vector.length;
    const limit = Math.max(0, Math.floor(k));
    if (dims === 0 || limit === 0) return [];
    const cast = castOf(dims);
    const distance = cast ? `embedding::${cast} <=> $1::${cast}` : 'embedding <=> $1::vector';
    const sql = `SELECT ordinal, ${distance} AS distance FROM snippet_vectors
      WHERE dimensions = ${dims} AND build_id = $2 ORDER BY ${distance} LIMIT ${limit}`;
    const params = [literal(vector), buildId];
    const iterative = await this.iterativeScan();
    const rows = await this.database.tx(async (c) => {
      if (iterative) await c.query("SET LOCAL hnsw.iterative_scan = 'relaxed_order'");
      return (await c.query<{ ordinal: number; distance: number }>(sql, params)).rows;
    });
    // relaxed_order may return rows slightly out of order: sort by distance here.
    return rows.map((r) => ({ position: r.ordinal, score: 1 - Number(r.distance) })).sort((a, b) => b.score - a.score);
  }

  async remove(buildId: string): Promise<void> {
    const libraryId = await removeVectors(this.database, buildId);
    if (libraryId) await this.database.publish('library', libraryId);
  }

  /** The partial HNSW index of a dimension (the migration made the common ones; others here, once). */
  private async ensureIndex(dims: number): Promise<void> {
    if (this.indexed.has(dims)) return;
    const cast = castOf(dims);
    if (cast) {
      const ops = cast.startsWith('halfvec') ? 'halfvec_cosine_ops' : 'vector_cosine_ops';
      await this.database.query(
        `CREATE INDEX IF NOT EXISTS snippet_vectors_hnsw_${dims} ON snippet_vectors USING hnsw ((embedding::${cast}) ${ops}) WHERE dimensions = ${dims}`,
      );
    }
    this.indexed.add(dims);
  }

  private async iterativeScan(): Promise<boolean> {
    if (this.iterative === null) {
      const [row] = await this.database.query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'");
      const [major, minor] = (row?.v ?? '0.0').split('.').map(Number);
      this.iterative = major > 0 || minor >= 8;
    }
    return this.iterative;
  }
}

/** Opened matrices kept in memory per node (a few versions at a time, as core/hybrid.ts keeps its indexes). */
const OPENED_MATRICES = 8;

interface VectorRowsRecord {
  dimensions: number;
  count: number;
  chunks: number;
  bytes: number;
  sha256: string;
}

/**
 * Build vectors without pgvector: each build's rows as a flat matrix in `vector_chunks` (migration
 * 009), fetched and checked like a segment, searched in memory by a dot product over every row
 * (core/vector-index.ts flatIndex). The checksum recorded (an answer's ETag holds it) is the
 * matrix's SHA-256, what a fetched or cached copy is checked against.
 */
export class PgRowVectors implements BuildVectorStore {
  /** Opened matrices by build and checksum, least recently used first. */
  private readonly opened = new Map<string, Promise<VectorIndex & { rows: Float32Array[] }>>();
  private readonly run: Run = (sql, params) => this.database.query(sql, params);
  private readonly records: VectorsRecords;

  constructor(
    private readonly database: PgDatabase,
    private readonly cache: PgSegmentCache,
  ) {
    this.records = new VectorsRecords(database);
  }

  /** Whether migration 009's table is there. */
  static async available(database: PgDatabase): Promise<boolean> {
    return (await database.query("SELECT 1 WHERE to_regclass('vector_chunks') IS NOT NULL")).length > 0;
  }

  async write(buildId: string, input: { model: string; dimensions: number; hashes: string[]; vectors: Float32Array[] }): Promise<string> {
    checkInput(input);
    const dims = input.dimensions;
    const matrix = new Float32Array(input.vectors.length * dims);
    input.vectors.forEach((v, i) => {
      if (v.length !== dims) throw new Error(`a vector has ${v.length} dimensions where ${dims} were expected`);
      matrix.set(normalise(v), i * dims);
    });
    const bytes = new Uint8Array(matrix.buffer, matrix.byteOffset, matrix.byteLength);
    const { rows, libraryId } = await this.database.tx(async (c) => {
      const library = await lockBuild(c, buildId);
      await c.query('DELETE FROM vector_chunks WHERE build_id = $1', [buildId]);
      const written = await uploadPieces(c, 'vector_chunks', buildId, bytes);
      await c.query(
        `UPDATE builds SET embedding_model = $2, embedding_dimensions = $3, embedding_checksum = $4, embedding_hashes = $5::jsonb,
           vectors_bytes = $6, vectors_chunks = $7 WHERE id = $1`,
        [buildId, input.model, dims, written.sha256, JSON.stringify(input.hashes), written.bytes, written.chunks],
      );
      return { rows: written, libraryId: library };
    });
    await this.forget(buildId);
    await this.database.publish('library', libraryId); // every node reads the build's vectors record again
    return rows.sha256;
  }

  async meta(buildId: string): Promise<StoredVectorsMeta | null> {
    return (await this.records.get(buildId))?.meta ?? null;
  }

  async rows(buildId: string): Promise<Float32Array[]> {
    const record = await this.record(buildId);
    return record ? (await this.open(buildId, record)).rows : [];
  }

  async query(buildId: string, vector: Float32Array, k: number): Promise<Array<{ position: number; score: number }>> {
    const record = await this.record(buildId);
    if (!record || vector.length !== record.dimensions || !(k > 0)) return [];
    return (await this.open(buildId, record)).query(vector, k);
  }

  async remove(buildId: string): Promise<void> {
    const libraryId = await removeVectors(this.database, buildId);
    await this.forget(buildId);
    if (libraryId) await this.database.publish('library', libraryId);
  }

  /** What the builds row records of a build's matrix (null: it has none here); from memory while the feed says nothing. */
  private async record(buildId: string): Promise<VectorRowsRecord | null> {
    const r = await this.records.get(buildId);
    if (!r?.meta || !r.pieces) return null;
    return { dimensions: r.meta.dimensions, count: r.meta.count, chunks: r.pieces.chunks, bytes: r.pieces.bytes, sha256: r.meta.checksum };
  }

  /** The build's matrix in memory: opened before, read from this node's cached file, or fetched first. */
  private open(buildId: string, record: VectorRowsRecord): Promise<VectorIndex & { rows: Float32Array[] }> {
    const key = `${buildId}\u0000${record.sha256}`;
    let entry = this.opened.get(key);
    if (entry) {
      this.opened.delete(key);
      this.cache.usedFile(this.cache.vectorsPathOf(buildId));
    } else {
      entry = this.load(buildId, record);
      entry.catch(() => this.opened.delete(key));
    }
    this.opened.set(key, entry);
    while (this.opened.size > OPENED_MATRICES) this.opened.delete(this.opened.keys().next().value!);
    return entry;
  }

  private async load(buildId: string, record: VectorRowsRecord): Promise<VectorIndex & { rows: Float32Array[] }> {
    const path = this.cache.vectorsPathOf(buildId);
    let bytes = await readFile(path).catch(() => null);
    if (!bytes || bytes.byteLength !== record.bytes || createHash('sha256').update(bytes).digest('hex') !== record.sha256) {
      // Not here, damaged, or of an earlier write: fetched (checked against the record) and cached.
      try {
        await this.cache.cacheFile(path, () => downloadPieces(this.run, 'vector_chunks', buildId, record, path));
      } catch (err) {
        if (!(err instanceof SegmentRowsError)) throw err;
        this.database.logger.error('store: the vectors of a build in the database are damaged', { buildId, detail: err.message });
        throw new Error(`The vectors of build ${buildId} in the database are damaged (${err.message}); run an embed job or refresh the library.`, { cause: err });
      }
      bytes = await readFile(path);
    }
    if (bytes.byteLength !== record.count * record.dimensions * 4) {
      throw new Error(`The vectors of build ${buildId} hold ${bytes.byteLength} bytes, not ${record.count} x ${record.dimensions} floats.`);
    }
    const copy = new Float32Array(bytes.byteLength / 4);
    new Uint8Array(copy.buffer).set(bytes);
    const rows: Float32Array[] = [];
    for (let i = 0; i < record.count; i++) rows.push(copy.subarray(i * record.dimensions, (i + 1) * record.dimensions));
    return Object.assign(flatIndex(copy, record.dimensions, record.count), { rows });
  }

  /** This node's copies of a build's vectors (rewritten or removed). */
  private async forget(buildId: string): Promise<void> {
    for (const key of [...this.opened.keys()]) if (key.startsWith(`${buildId}\u0000`)) this.opened.delete(key);
    await this.cache.dropFile(this.cache.vectorsPathOf(buildId));
  }
}
