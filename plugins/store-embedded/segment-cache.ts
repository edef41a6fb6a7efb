/**
 * The open segments, least recently used first out, within a memory budget (bytes of their
 * index parts) and a count (each holds an open file). The segment in use is never evicted, so a
 * segment larger than the whole budget is still served, alone.
 *
 * With `park` set, the count bounds the open files only: a segment past it has its file closed
 * (ServedSegment.park) and stays decoded while the memory budget allows, and its next `get`
 * opens the file again (resume) instead of reading and decoding the segment anew. Library search
 * re-ranks by the documentation of a few of up to 1,000 libraries a request (core/library-search.ts):
 * with 16 open at most, each of those searches opened a small segment again (0.7 - 2.3 ms of CPU).
 */
import type { ServedSegment } from './segment.ts';

export class SegmentCache {
  private readonly entries = new Map<string, ServedSegment>();
  /** The entries whose file is closed (park). */
  private readonly parked = new Set<string>();
  private used = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxCount: number,
    private readonly park = false,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Bytes held by the open segments. */
  get bytes(): number {
    return this.used;
  }

  /** Segments holding their file open. */
  get openFiles(): number {
    return this.entries.size - this.parked.size;
  }

  has(buildId: string): boolean {
    return this.entries.has(buildId);
  }

  get(buildId: string): ServedSegment | undefined {
    const entry = this.entries.get(buildId);
    if (!entry) return undefined;
    if (this.parked.has(buildId)) {
      // A file that cannot be opened again (removed): the entry goes, the caller opens anew.
      if (!entry.resume?.()) {
        this.delete(buildId);
        return undefined;
      }
      this.parked.delete(buildId);
    }
    // Most recently used goes last.
    this.entries.delete(buildId);
    this.entries.set(buildId, entry);
    this.trim(buildId);
    return entry;
  }

  set(entry: ServedSegment): void {
    this.delete(entry.buildId);
    this.entries.set(entry.buildId, entry);
    this.used += entry.bytes;
    this.trim(entry.buildId);
  }

  private trim(keep: string): void {
    const maxCount = Math.max(1, this.maxCount);
    if (!this.park) {
      for (const [id, old] of this.entries) {
        if (this.entries.size <= 1 || (this.used <= this.maxBytes && this.entries.size <= maxCount)) break;
        if (id === keep) continue;
        this.drop(id, old);
      }
      return;
    }
    for (const [id, old] of this.entries) {
      if (this.entries.size <= 1 || this.used <= this.maxBytes) break;
      if (id !== keep) this.drop(id, old);
    }
    // The least recently used past the count release their files (or go, holding no park).
    for (const [id, old] of this.entries) {
      if (this.openFiles <= maxCount) break;
      if (id === keep || this.parked.has(id)) continue;
      if (old.park) {
        old.park();
        this.parked.add(id);
      } else this.drop(id, old);
    }
  }

  private drop(id: string, entry: ServedSegment): void {
    this.entries.delete(id);
    this.parked.delete(id);
    this.used -= entry.bytes;
    entry.close();
  }

  delete(buildId: string): void {
    const entry = this.entries.get(buildId);
    if (entry) this.drop(buildId, entry);
  }

  clear(): void {
    for (const e of this.entries.values()) e.close();
    this.entries.clear();
    this.parked.clear();
    this.used = 0;
  }
}
