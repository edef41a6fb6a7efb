/**
 * The embedded store's catalog in memory: every library record (with its served versions and
 * state), loaded once when the store opens and kept current by the store's write paths, so that
 * `listLibraries()` and `getLibrary()` read no sql.js rows per request (over 1,000 libraries,
 * reading them cost about 270 ms a request at load 35: sql.js's `getAsObject` per row).
 *
 * The store tells the cache which libraries a write changed (`touch`): a library's record depends
 * on its row, its served versions and its newest job, so every write of those touches it. A
 * touched record is read again from the database at the next read (one library's rows, a few
 * statements), a deleted one is dropped. Records are frozen, shared by every caller: nobody can
 * change the cache by changing what it returned.
 */
import type { LibraryRecord } from '../../core/contracts.ts';
import { freezeLibraryRecord } from '../../core/store-rules.ts';

/** Reads library records from the database: all of them (null) or the one with this id. */
export type LibraryLoader = (id: string | null) => LibraryRecord[];

export class CatalogCache {
  private records: Map<string, LibraryRecord> | null = null;
  /** All records sorted by id, while no library changed since it was made. */
  private sorted: readonly LibraryRecord[] | null = null;
  private readonly stale = new Set<string>();
  /** Counts for tests and reports: full loads and single-library reloads. */
  readonly stats = { loads: 0, reloads: 0 };

  constructor(private readonly load: LibraryLoader) {}

  /** Every library, sorted by id (a new array each call; the records are shared and frozen). */
  all(): LibraryRecord[] {
    this.refresh();
    this.sorted ??= [...this.records!.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return [...this.sorted];
  }

  one(id: string): LibraryRecord | null {
    this.refresh();
    return this.records!.get(id) ?? null;
  }

  /** These libraries changed (or were added, renamed or deleted): read again at the next read. */
  touch(...ids: string[]): void {
    if (!this.records) return;
    for (const id of ids) this.stale.add(id);
    this.sorted = null;
  }

  /** Forgets everything (the store closed, or its database was replaced). */
  clear(): void {
    this.records = null;
    this.sorted = null;
    this.stale.clear();
  }

  private refresh(): void {
    if (!this.records) {
      this.records = new Map(this.load(null).map((r) => [r.id, freezeLibraryRecord(r)]));
      this.stale.clear();
      this.sorted = null;
      this.stats.loads++;
      return;
    }
    if (this.stale.size === 0) return;
    for (const id of this.stale) {
      const [fresh] = this.load(id);
      if (fresh) this.records.set(id, freezeLibraryRecord(fresh));
      else this.records.delete(id);
      this.stats.reloads++;
    }
    this.stale.clear();
    this.sorted = null;
  }
}
