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
 * Without the extension the store has no vector index (buildVectors() is null) and core keeps
 * vectors in files beside the data directory, as with the embedded store.
 */
import { createHash } from 'node:crypto';
import type { BuildVectorStore, StoredVectorsMeta } from '../../core/contracts.ts';
import type { PgDatabase } from './database.ts';

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

export class PgVectors implements BuildVectorStore {
  private readonly indexed = new Set<number>();
  /** Whether `hnsw.iterative_scan` exists (pgvector 0.8+): a filtered HNSW scan then still fills its LIMIT. */
  private iterative: boolean | null = null;

  constructor(private readonly database: PgDatabase) {}

  /** Whether the database has pgvector and the vectors table (migration 002 applied, not skipped). */
  static async available(database: PgDatabase): Promise<boolean> {
    const rows = await database.query(
      "SELECT 1 FROM pg_extension WHERE extname = 'vector' AND to_regclass('snippet_vectors') IS NOT NULL",
    );
    return rows.length > 0;
  }

  async write(buildId: string, input: { model: string; dimensions: number; hashes: string[]; vectors: Float32Array[] }): Promise<string> {
    const dims = input.dimensions;
    if (!Number.isInteger(dims) || dims <= 0) throw new Error(`vectors of ${dims} dimensions cannot be stored`);
    if (input.hashes.length !== input.vectors.length) throw new Error('one text hash per vector is needed');
    const checksum = checksumOf(input.model, dims, input.vectors);
    await this.ensureIndex(dims);
    await this.database.tx(async (c) => {
      const { rowCount } = await c.query('SELECT 1 FROM builds WHERE id = $1 FOR UPDATE', [buildId]);
      if (!rowCount) throw new Error(`build ${buildId} does not exist (its library may have been deleted)`);
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
    });
    return checksum;
  }

  async meta(buildId: string): Promise<StoredVectorsMeta | null> {
    const [r] = await this.database.query<{ embedding_model: string; embedding_dimensions: number; embedding_checksum: string; embedding_hashes: string[] }>(
      'SELECT embedding_model, embedding_dimensions, embedding_checksum, embedding_hashes FROM builds WHERE id = $1 AND embedding_checksum IS NOT NULL',
      [buildId],
    );
    if (!r || !Array.isArray(r.embedding_hashes)) return null;
    return { model: r.embedding_model, dimensions: r.embedding_dimensions, count: r.embedding_hashes.length, checksum: r.embedding_checksum, hashes: r.embedding_hashes };
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
    await this.database.tx(async (c) => {
      await c.query('DELETE FROM snippet_vectors WHERE build_id = $1', [buildId]);
      await c.query('UPDATE builds SET embedding_model = NULL, embedding_dimensions = NULL, embedding_checksum = NULL, embedding_hashes = NULL WHERE id = $1', [buildId]);
    });
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
