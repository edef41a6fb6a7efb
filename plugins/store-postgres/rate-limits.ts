/**
 * Shared rate-limit counters of the PostgreSQL store (core/contracts.ts RateLimitCounters) over
 * `rate_limit_counters(client, window_start, count)` (migration 001): each node's limiter
 * (server/access/rate-limit.ts) adds its own counts in small batches and reads the totals back
 * in the same statement.
 */
import type { RateLimitCount, RateLimitCounters } from '../../core/contracts.ts';
import { PgRole } from './database.ts';

/** Same bucket and window → one row (ON CONFLICT may touch a row once per statement). */
function merge(batch: readonly RateLimitCount[]): RateLimitCount[] {
  const byKey = new Map<string, RateLimitCount>();
  for (const c of batch) {
    if (!Number.isSafeInteger(c.windowStart) || !Number.isSafeInteger(c.count) || c.count < 0) {
      throw new TypeError(`rate limit count of ${c.client}: window ${c.windowStart} and count ${c.count} must be whole numbers (count >= 0)`);
    }
    const key = `${c.windowStart}\n${c.client}`;
    const had = byKey.get(key);
    byKey.set(key, { ...c, count: (had?.count ?? 0) + c.count });
  }
  // One order on every node, so two nodes' batches lock rows in the same order (no deadlock).
  return [...byKey.values()].sort((a, b) => a.windowStart - b.windowStart || (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));
}

export class PgRateLimits extends PgRole implements RateLimitCounters {
  async addCounts(batch: readonly RateLimitCount[]): Promise<RateLimitCount[]> {
    const rows = merge(batch);
    if (rows.length === 0) return [];
    const out = await this.query<{ client: string; ms: string; count: string }>(
      `INSERT INTO rate_limit_counters AS r (client, window_start, count)
       SELECT c, to_timestamp(w / 1000.0), n FROM unnest($1::text[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS t(c, w, n, o) ORDER BY o
       ON CONFLICT (client, window_start) DO UPDATE SET count = r.count + EXCLUDED.count
       RETURNING client, (extract(epoch FROM window_start) * 1000)::bigint AS ms, count`,
      [rows.map((r) => r.client), rows.map((r) => r.windowStart), rows.map((r) => r.count)],
    );
    return out.map((r) => ({ client: r.client, windowStart: Number(r.ms), count: Number(r.count) }));
  }

  async pruneCounts(before: number): Promise<void> {
    await this.query('DELETE FROM rate_limit_counters WHERE window_start < to_timestamp($1 / 1000.0)', [before]);
  }
}
