/**
 * Rate limits: a fixed window per client (an API key, or the address of an anonymous client),
 * with the limit of the key's plan or the anonymous limit (config `rateLimits`).
 *
 * One node (the embedded store): state lives in this process's memory and resets when the
 * server restarts.
 *
 * Several nodes on one store (a store with RateLimitCounters: PostgreSQL, issue 24): each node
 * still decides every request from memory (no database round trip per request), and flushes
 * its counts in small batches (every `flushMs`, 250 ms, or as soon as `flushEvery`, 50, requests
 * are pending, and at once on a client's first request in a window), reading back the window's
 * total over all nodes in the same statement. A node then admits a client's request when its
 * own count plus the other nodes' last-read count is under the limit.
 *
 * Tolerance: the other nodes' requests are seen one flush late, so a client spreading requests
 * over N nodes can get at most the limit plus what each node admits between two of its
 * flushes: one flush interval of requests per node (at most `flushEvery` plus those arriving
 * during the flush's round trip). On one node the limit is exact.
 *
 * The database down: fail open. Requests are decided on the node's own count plus the last
 * total it read (so one node alone still enforces the limit), the unflushed counts are kept
 * and added when the database is back (while their window lasts), and one warning is logged
 * per outage. A rate limit is not worth refusing service for; a database outage shows on
 * /api/ready.
 */
import type { Clock, Logger, RateLimitCount, RateLimitCounterHost, RateLimitCounters } from '../../core/contracts.ts';
import type { RateLimitConfig, RateLimitRule } from '../../core/config.ts';

export type { RateLimitConfig, RateLimitRule };

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix time (seconds) when the window resets. */
  resetAt: number;
  /** Seconds until the window resets (at least 1). */
  retryAfter: number;
}

interface Window {
  start: number;
  /** Requests this node admitted in the window. */
  count: number;
  /** How many of them the shared counters have. */
  flushed: number;
  /** The other nodes' requests in the window, as last read. */
  others: number;
  /** Counted or asked about since the last flush (its total is read at the next one). */
  dirty: boolean;
}

export interface SharedRateLimitOptions {
  /** The store's shared counters (null or absent: this node counts alone). */
  counters?: RateLimitCounters | null;
  logger?: Logger;
  /** Longest time between flushes while requests are pending (ms). */
  flushMs?: number;
  /** Flush as soon as this many requests are pending. */
  flushEvery?: number;
}

/** The store's shared counters, when it has them (core/contracts.ts RateLimitCounters). */
export function rateLimitCountersOf(store: object): RateLimitCounters | null {
  const c = (store as Partial<RateLimitCounterHost>).rateLimitCounters;
  return c && typeof c.addCounts === 'function' ? c : null;
}

export class RateLimiter {
  private readonly windows = new Map<string, Window>();
  private readonly counters: RateLimitCounters | null;
  private readonly logger: Logger | undefined;
  private readonly flushMs: number;
  private readonly flushEvery: number;
  private pending = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  /** The flush that follows the one under way, for counts added meanwhile (flush). */
  private followUp: Promise<void> | null = null;
  private failing = false;
  private prunedBefore = 0;

  constructor(
    private readonly config: RateLimitConfig,
    private readonly clock: Clock,
    shared: SharedRateLimitOptions = {},
  ) {
    this.counters = shared.counters ?? null;
    this.logger = shared.logger;
    this.flushMs = shared.flushMs ?? 250;
    this.flushEvery = shared.flushEvery ?? 50;
  }

  /** The rule of a plan; an unknown plan (removed from config) falls back to the default plan. */
  ruleFor(plan: string | null): RateLimitRule {
    if (plan === null) return this.config.anonymous;
    return this.config.plans[plan] ?? this.config.plans[this.config.defaultPlan] ?? this.config.anonymous;
  }

  /** Counts one request of `client` against `rule`. */
  consume(client: string, rule: RateLimitRule): RateLimitDecision {
    const now = this.clock.now().getTime();
    const windowMs = this.config.windowSeconds * 1000;
    let w = this.windows.get(client);
    const fresh = !w || now >= w.start + windowMs;
    if (!w || fresh) {
      if (this.windows.size > 10_000) this.sweep(now, windowMs);
      w = { start: Math.floor(now / windowMs) * windowMs, count: 0, flushed: 0, others: 0, dirty: false };
      this.windows.set(client, w);
    }
    const allowed = w.count + w.others < rule.requests;
    if (allowed) w.count++;
    if (this.counters) {
      w.dirty = true;
      this.pending++;
      // A client's first request in a window reads what the other nodes counted already.
      if (fresh || this.pending >= this.flushEvery) this.flushSoon(0);
      else this.flushSoon(this.flushMs);
    }
    return { ...this.decision(w, rule, now, windowMs), allowed };
  }

  /** Where `client` stands in its current window, without counting a request. */
  peek(client: string, rule: RateLimitRule): RateLimitDecision {
    const now = this.clock.now().getTime();
    const windowMs = this.config.windowSeconds * 1000;
    const w = this.windows.get(client);
    const live = w && now < w.start + windowMs ? w : { start: Math.floor(now / windowMs) * windowMs, count: 0, others: 0 };
    return this.decision(live, rule, now, windowMs);
  }

  /**
   * Sends the pending counts and reads the totals back (no-op without shared counters). Never
   * throws: a failure keeps the counts for the next flush.
   */
  flush(): Promise<void> {
    if (!this.counters) return Promise.resolve();
    if (this.flushing) {
      // Counts added during a flush go out in one more flush right after it, and the caller
      // waits for that one: the flush under way may have read its batch before them, or may be
      // failing (the database was down when it started and is back now).
      this.followUp ??= this.flushing.then(() => {
        this.followUp = null;
        return this.flush();
      });
      return this.followUp;
    }
    this.flushing = this.flushOnce().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private decision(w: Pick<Window, 'start' | 'count' | 'others'>, rule: RateLimitRule, now: number, windowMs: number): RateLimitDecision {
    const resetMs = w.start + windowMs;
    const used = w.count + w.others;
    return {
      allowed: used < rule.requests,
      limit: rule.requests,
      remaining: Math.max(0, rule.requests - used),
      resetAt: Math.ceil(resetMs / 1000),
      retryAfter: Math.max(1, Math.ceil((resetMs - now) / 1000)),
    };
  }

  private flushSoon(ms: number): void {
    if (this.timer && ms > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, ms);
    this.timer.unref();
  }

  private async flushOnce(): Promise<void> {
    const counters = this.counters!;
    const now = this.clock.now().getTime();
    const windowMs = this.config.windowSeconds * 1000;
    const sent = new Map<string, { w: Window; upTo: number }>();
    const batch: RateLimitCount[] = [];
    for (const [client, w] of this.windows) {
      if (!w.dirty || now >= w.start + windowMs) continue;
      w.dirty = false;
      sent.set(client, { w, upTo: w.count });
      batch.push({ client, windowStart: w.start, count: w.count - w.flushed });
    }
    this.pending = 0;
    if (batch.length === 0) return;
    try {
      const totals = await counters.addCounts(batch);
      for (const t of totals) {
        const s = sent.get(t.client);
        if (!s || s.w.start !== t.windowStart || this.windows.get(t.client) !== s.w) continue;
        s.w.flushed = s.upTo;
        s.w.others = Math.max(0, t.count - s.upTo);
      }
      if (this.failing) this.logger?.info('rate limits: shared counters reachable again');
      this.failing = false;
    } catch (e) {
      // Fail open (module comment): keep the counts, retry with the next flush.
      for (const { w } of sent.values()) w.dirty = true;
      if (!this.failing) this.logger?.warn('rate limits: cannot reach the shared counters; counting on this node until they are back', { error: (e as Error).message });
      this.failing = true;
      this.flushSoon(this.flushMs);
      return;
    }
    // Windows before the previous one are over on every node (clocks a window apart aside).
    const before = Math.floor(now / windowMs) * windowMs - windowMs;
    if (before > this.prunedBefore) {
      this.prunedBefore = before;
      await counters.pruneCounts(before).catch((e: Error) => this.logger?.debug('rate limits: pruning old windows failed', { error: e.message }));
    }
  }

  private sweep(now: number, windowMs: number): void {
    for (const [k, w] of this.windows) if (now >= w.start + windowMs) this.windows.delete(k);
  }
}
