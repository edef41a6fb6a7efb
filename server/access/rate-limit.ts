/**
 * Rate limits: a fixed window per client (an API key, or the address of an anonymous client),
 * with the limit of the key's plan or the anonymous limit (config `rateLimits`). State lives in
 * this process's memory: it resets when the server restarts, and several servers each count
 * their own requests.
 */
import type { Clock } from '../../core/contracts.ts';
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
  count: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly config: RateLimitConfig,
    private readonly clock: Clock,
  ) {}

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
    if (!w || now >= w.start + windowMs) {
      if (this.windows.size > 10_000) this.sweep(now, windowMs);
      w = { start: Math.floor(now / windowMs) * windowMs, count: 0 };
      this.windows.set(client, w);
    }
    const resetMs = w.start + windowMs;
    const allowed = w.count < rule.requests;
    if (allowed) w.count++;
    return {
      allowed,
      limit: rule.requests,
      remaining: Math.max(0, rule.requests - w.count),
      resetAt: Math.ceil(resetMs / 1000),
      retryAfter: Math.max(1, Math.ceil((resetMs - now) / 1000)),
    };
  }

  /** Where `client` stands in its current window, without counting a request. */
  peek(client: string, rule: RateLimitRule): RateLimitDecision {
    const now = this.clock.now().getTime();
    const windowMs = this.config.windowSeconds * 1000;
    const w = this.windows.get(client);
    const live = w && now < w.start + windowMs ? w : { start: Math.floor(now / windowMs) * windowMs, count: 0 };
    const resetMs = live.start + windowMs;
    return {
      allowed: live.count < rule.requests,
      limit: rule.requests,
      remaining: Math.max(0, rule.requests - live.count),
      resetAt: Math.ceil(resetMs / 1000),
      retryAfter: Math.max(1, Math.ceil((resetMs - now) / 1000)),
    };
  }

  private sweep(now: number, windowMs: number): void {
    for (const [k, w] of this.windows) if (now >= w.start + windowMs) this.windows.delete(k);
  }
}
