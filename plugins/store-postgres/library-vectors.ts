/**
 * Library-search vectors on PostgreSQL (core/contracts.ts LibraryVectorStore; migration 010):
 * one row per library in `library_vectors` (model, dimension, float32 bytes), so the vector the
 * node that embedded a library wrote ranks that library on every node (core/library-vectors.ts).
 *
 * Each node keeps every row in memory (a vector of 1,536 dimensions is 6 KiB: 10,000 libraries
 * are 60 MiB at most; usual ones far less): library search reads none per request. A write
 * publishes `library` on the change feed; a node that hears it reads that library's row again at
 * its next use (a read in flight meanwhile does not count as current). As a bound for a change
 * the feed never delivered, everything is read again after LIBRARY_VECTORS_REREAD_MS. When the
 * database cannot be read, the vectors in memory keep being used (none yet: library search stays
 * lexical), and the read is tried again at the next use.
 */
import type { LibraryVectorStore } from '../../core/contracts.ts';
import { type PgDatabase, PgRole } from './database.ts';

/** Every row is read again this long after the last full read (the change feed covers changes). */
export const LIBRARY_VECTORS_REREAD_MS = 5 * 60_000;

interface Entry {
  libraryId: string;
  model: string;
  vector: Float32Array;
  /** The row's write time (ms): part of the tag. */
  at: number;
}

interface Row {
  library_id: string;
  model: string;
  dimensions: number;
  vector: Buffer;
  at: string;
}

const SELECT = `SELECT library_id, model, dimensions, vector, (extract(epoch FROM updated_at) * 1000)::bigint::text AS at FROM library_vectors`;

function entryOf(r: Row): Entry | null {
  if (r.vector.byteLength !== 4 * r.dimensions) return null;
  const copy = new Uint8Array(r.vector.byteLength);
  copy.set(r.vector);
  return { libraryId: r.library_id, model: r.model, vector: new Float32Array(copy.buffer), at: Number(r.at) };
}

function bytesOf(v: Float32Array): Buffer {
  const b = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) b.writeFloatLE(v[i], i * 4);
  return b;
}

export class PgLibraryVectors extends PgRole implements LibraryVectorStore {
  private all: Map<string, Entry> | null = null;
  private loadedAt = 0;
  /** Libraries the change feed named since their row was read. */
  private readonly stale = new Set<string>();
  private loading: Promise<void> | null = null;
  /** Full and partial reads so far (for tests: a warm read runs none). */
  reads = 0;

  constructor(database: PgDatabase) {
    super(database);
    database.changes.on('change', (topic: string, id: string) => {
      if (topic === 'library' && this.all) this.stale.add(id);
    });
  }

  async putLibraryVector(v: { libraryId: string; model: string; vector: Float32Array }): Promise<void> {
    if (v.vector.length === 0) throw new Error('an empty vector cannot be stored');
    await this.query(
      `INSERT INTO library_vectors (library_id, model, dimensions, vector, updated_at) VALUES ($1, $2, $3, $4, clock_timestamp())
       ON CONFLICT (library_id) DO UPDATE SET model = EXCLUDED.model, dimensions = EXCLUDED.dimensions, vector = EXCLUDED.vector, updated_at = EXCLUDED.updated_at`,
      [v.libraryId, v.model, v.vector.length, bytesOf(v.vector)],
    );
    await this.database.publish('library', v.libraryId);
  }

  async getLibraryVectors(libraryIds: readonly string[]): Promise<Array<{ libraryId: string; model: string; vector: Float32Array }>> {
    const all = await this.current();
    const out: Array<{ libraryId: string; model: string; vector: Float32Array }> = [];
    for (const id of libraryIds) {
      const e = all.get(id);
      if (e) out.push({ libraryId: e.libraryId, model: e.model, vector: e.vector });
    }
    return out;
  }

  async libraryVectorsTag(): Promise<string> {
    const all = await this.current();
    return [...all.values()]
      .map((e) => `${e.libraryId}\u0000${e.model}\u0000${e.at}`)
      .sort()
      .join('\n');
  }

  /** The rows in memory, read again where the change feed named a library or the last full read is old. */
  private async current(): Promise<Map<string, Entry>> {
    this.requireOpen();
    try {
      if (!this.all || Date.now() - this.loadedAt > LIBRARY_VECTORS_REREAD_MS) await (this.loading ??= this.loadAll().finally(() => (this.loading = null)));
      else if (this.stale.size > 0) await this.loadStale();
    } catch (e) {
      this.logger.debug('library vectors could not be read: the ones in memory are used', { error: (e as Error).message });
    }
    return this.all ?? new Map();
  }

  private async loadAll(): Promise<void> {
    // Changes heard from now on are read again at the next use (this read may have missed them).
    this.stale.clear();
    const started = Date.now();
    this.reads++;
    const rows = await this.query<Row>(SELECT);
    const all = new Map<string, Entry>();
    for (const r of rows) {
      const e = entryOf(r);
      if (e) all.set(e.libraryId, e);
    }
    this.all = all;
    this.loadedAt = started;
  }

  private async loadStale(): Promise<void> {
    const ids = [...this.stale];
    this.stale.clear();
    this.reads++;
    let rows: Row[];
    try {
      rows = await this.query<Row>(`${SELECT} WHERE library_id = ANY($1::text[])`, [ids]);
    } catch (e) {
      for (const id of ids) this.stale.add(id);
      throw e;
    }
    const all = this.all!;
    for (const id of ids) all.delete(id);
    for (const r of rows) {
      const e = entryOf(r);
      if (e) all.set(e.libraryId, e);
    }
  }
}
