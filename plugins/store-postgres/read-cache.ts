/**
 * A node's memory of values read per request (an API key by hash, a setting by key), so that a
 * request costs no database round trip. The change feed drops entries (`forget`, `clear`); a
 * read that was in flight when an entry was dropped does not store what it read (it may predate
 * the change), so a change is never hidden by a slower read. At most `max` entries: beyond it the
 * memory starts over (unknown API keys sent by clients must not grow it without bound).
 */
export class ReadCache<K, V> {
  private readonly entries = new Map<K, V>();
  /** Bumped by every drop: a read started before it does not store its result. */
  private generation = 0;
  readonly stats = { hits: 0, misses: 0 };

  constructor(private readonly max = 10_000) {}

  async get(key: K, read: (key: K) => Promise<V>): Promise<V> {
    if (this.entries.has(key)) {
      this.stats.hits++;
      return this.entries.get(key)!;
    }
    this.stats.misses++;
    const generation = this.generation;
    const value = await read(key);
    if (generation === this.generation) {
      if (this.entries.size >= this.max) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }

  forget(key: K): void {
    this.generation++;
    this.entries.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
