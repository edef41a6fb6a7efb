/**
 * The open segments, least recently used first out, within a memory budget (bytes of their
 * index parts) and a count (each holds an open file). The segment in use is never evicted, so a
 * segment larger than the whole budget is still served, alone.
 */
import type { ServedSegment } from './segment.ts';

export class SegmentCache {
  private readonly entries = new Map<string, ServedSegment>();
  private used = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxCount: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Bytes held by the open segments. */
  get bytes(): number {
    return this.used;
  }

  has(buildId: string): boolean {
    return this.entries.has(buildId);
  }

  get(buildId: string): ServedSegment | undefined {
    const entry = this.entries.get(buildId);
    if (entry) {
      // Most recently used goes last.
      this.entries.delete(buildId);
      this.entries.set(buildId, entry);
    }
    return entry;
  }

  set(entry: ServedSegment): void {
    this.delete(entry.buildId);
    this.entries.set(entry.buildId, entry);
    this.used += entry.bytes;
    for (const [id, old] of this.entries) {
      if (this.entries.size <= 1 || (this.used <= this.maxBytes && this.entries.size <= Math.max(1, this.maxCount))) break;
      if (id === entry.buildId) continue;
      this.entries.delete(id);
      this.used -= old.bytes;
      old.close();
    }
  }

  delete(buildId: string): void {
    const entry = this.entries.get(buildId);
    if (!entry) return;
    this.entries.delete(buildId);
    this.used -= entry.bytes;
    entry.close();
  }

  clear(): void {
    for (const e of this.entries.values()) e.close();
    this.entries.clear();
    this.used = 0;
  }
}
