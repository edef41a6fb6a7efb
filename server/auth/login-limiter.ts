/**
 * Failed sign-ins, per account and client address (so one attacker cannot lock the operator out
 * from everywhere): each failure delays the answer a little more (from the second: 250 ms,
 * doubling, at most 4 s), and 10 failures within 15 minutes lock that account-and-address out
 * (429 `login_locked` with Retry-After) until the oldest of them is 15 minutes old. A success
 * clears the count. Kept in this process's memory: no write per request (a restart clears it).
 */
import type { Clock } from '../../core/contracts.ts';

export const LOCK_AFTER_FAILURES = 10;
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
const MAX_TRACKED = 10_000;

export class LoginLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly clock: Clock) {}

  private recent(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((t) => now - t < FAILURE_WINDOW_MS);
    if (list.length === 0) this.failures.delete(key);
    else this.failures.set(key, list);
    return list;
  }

  /** Seconds until this key may try again, or 0 when it is not locked. */
  lockedFor(key: string): number {
    const now = this.clock.now().getTime();
    const list = this.recent(key, now);
    if (list.length < LOCK_AFTER_FAILURES) return 0;
    const oldest = list[list.length - LOCK_AFTER_FAILURES];
    return Math.max(1, Math.ceil((oldest + FAILURE_WINDOW_MS - now) / 1000));
  }

  /** Records a failure; returns how long to delay its answer (ms). */
  fail(key: string): number {
    const now = this.clock.now().getTime();
    const list = this.recent(key, now);
    list.push(now);
    this.failures.set(key, list);
    if (this.failures.size > MAX_TRACKED) this.sweep(now);
    return list.length <= 1 ? 0 : Math.min(4000, 250 * 2 ** (list.length - 2));
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }

  private sweep(now: number): void {
    for (const k of [...this.failures.keys()]) this.recent(k, now);
    // Still too many: drop the oldest keys (Map keeps insertion order).
    for (const k of this.failures.keys()) {
      if (this.failures.size <= MAX_TRACKED) break;
      this.failures.delete(k);
    }
  }
}
