/**
 * A node's memory of values read per request (an API key by hash, a setting by key), so that a
 * request costs no database round trip. The change feed drops entries (`forget`, `clear`); a
 * read that was in flight when an entry was dropped does not store what it read (it may predate
 * the change), so a change is never hidden by a slower read. At most `max` entries: beyond it the
 * memory starts over (unknown API keys sent by clients must not grow it without bound). An entry
 * older than `maxAgeMs` is read again: the bound on how long a change the feed never delivered
 * (a node cut off for longer than the feed keeps its rows) can go unseen. When that read fails
 * (the database is out of reach), the old value is served and kept for another `maxAgeMs`, so an
 * outage does not fail every request that memory could answer.
 */
export interface ReadCacheOptions {
  max?: number;
  maxAgeMs?: number;
  /** Milliseconds of a monotonic clock (tests pass their own). */
  now?: () => number;
}

export class ReadCache<K, V> {
  private readonly entries = new Map<K, { value: V; at: number }>();
  /** Bumped by every drop: a read started before it does not store its result. */
  private generation = 0;
  private readonly max: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  readonly stats = { hits: 0, misses: 0 };

  constructor(options: ReadCacheOptions = {}) {
    this.max = options.max ?? 10_000;
    this.maxAgeMs = options.maxAgeMs ?? 60_000;
    this.now = options.now ?? (() => performance.now());
  }

  async get(key: K, read: (key: K) => Promise<V>): Promise<V> {
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.at < this.maxAgeMs) {
      this.stats.hits++;
      return entry.value;
    }
    this.stats.misses++;
    const generation = this.generation;
    const at = this.now();
    let value: V;
    try {
      value = await read(key);
    } catch (e) {
      if (!entry || generation !== this.generation) throw e;
      entry.at = at;
      return entry.value;
    }
    if (generation === this.generation) {
      if (this.entries.size >= this.max) this.entries.clear();
      this.entries.set(key, { value, at });
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
