/**
 * The rate limiter's flush to shared counters (server/access/rate-limit.ts): a caller that awaits
 * flush() while another flush is under way gets its counts sent, even when the flush under way
 * fails (the database was down when it started and is back now). Counters in memory whose
 * addCounts the test releases by hand; the PostgreSQL counters are tested on Debian's server in
 * test/plugins/store-postgres/rate-limits.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RateLimitConfig } from '../../core/config.ts';
import type { RateLimitCount, RateLimitCounters } from '../../core/contracts.ts';
import { systemClock } from '../../core/services.ts';
import { RateLimiter } from '../../server/access/rate-limit.ts';

const CONFIG: RateLimitConfig = { windowSeconds: 3600, anonymous: { requests: 100 }, defaultPlan: 'free', plans: { free: { requests: 100 } } };
const RULE = { requests: 100 };

/** Shared totals in memory; each addCounts waits until the test settles it (ok or failing). */
class HeldCounters implements RateLimitCounters {
  readonly totals = new Map<string, number>();
  readonly calls: Array<{ batch: RateLimitCount[]; settle: (ok: boolean) => void }> = [];

  addCounts(batch: readonly RateLimitCount[]): Promise<RateLimitCount[]> {
    return new Promise((resolve, reject) => {
      this.calls.push({
        batch: batch.map((c) => ({ ...c })),
        settle: (ok) => {
          if (!ok) return reject(new Error('Cannot reach the counters'));
          for (const c of batch) this.totals.set(c.client, (this.totals.get(c.client) ?? 0) + c.count);
          resolve(batch.map((c) => ({ ...c, count: this.totals.get(c.client)! })));
        },
      });
    });
  }

  async pruneCounts(): Promise<void> {}
}

const turn = () => new Promise((r) => setImmediate(r));

test('flush() during a failing flush sends the counts in a flush of its own before it resolves', async () => {
  const counters = new HeldCounters();
  const limiter = new RateLimiter(CONFIG, systemClock, { counters, flushMs: 60_000, flushEvery: 1_000 });
  for (let i = 0; i < 3; i++) limiter.consume('anon:203.0.113.9', RULE);
  const first = limiter.flush();
  await turn();
  assert.equal(counters.calls.length, 1, 'the first flush is under way');
  // Two more requests, then a caller waits for its counts to be sent.
  limiter.consume('anon:203.0.113.9', RULE);
  limiter.consume('anon:203.0.113.9', RULE);
  let done = false;
  const second = limiter.flush().then(() => (done = true));
  counters.calls[0].settle(false); // the flush under way fails: its three stay counted on this node
  await first;
  for (let i = 0; i < 5 && counters.calls.length < 2; i++) await turn();
  assert.equal(done, false, 'the caller waits for a flush that started after its counts');
  assert.equal(counters.calls.length, 2, 'one more flush follows');
  assert.deepEqual(counters.calls[1].batch.map((c) => c.count), [5], 'all five counts go out in it');
  counters.calls[1].settle(true);
  await second;
  assert.equal(counters.totals.get('anon:203.0.113.9'), 5);
  // Nothing else pending: a later flush sends nothing.
  await limiter.flush();
  assert.equal(counters.calls.length, 2);
});
