/** In-memory copies of served builds (snippets by id and their lexical index), LRU-bounded. */
import type { StoredSnippet } from '../../core/contracts.ts';
import type { LexicalIndex } from '../../core/search/lexical-index.ts';

export interface CachedBuild {
  buildId: string;
  /** Frozen snippets in seq order. */
  snippets: readonly StoredSnippet[];
  byId: Map<number, StoredSnippet>;
  /** Built on the first search of the build. */
  index: LexicalIndex | null;
}

export class BuildCache {
  private readonly entries = new Map<string, CachedBuild>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(buildId: string): CachedBuild | undefined {
    const entry = this.entries.get(buildId);
    if (entry) {
      // Most recently used goes last.
      this.entries.delete(buildId);
      this.entries.set(buildId, entry);
    }
    return entry;
  }

  set(entry: CachedBuild): void {
    this.entries.delete(entry.buildId);
    this.entries.set(entry.buildId, entry);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  delete(buildId: string): void {
    this.entries.delete(buildId);
  }

  clear(): void {
    this.entries.clear();
  }
}
