/**
 * Issue 24, rate limits shared across nodes, on Debian's PostgreSQL server: the store's counters
 * (plugins/store-postgres/rate-limits.ts) add batches atomically from several nodes at once, and
 * two limiters (server/access/rate-limit.ts), one per node, share one client's budget within the
 * stated tolerance (one flush batch per node) where two unshared ones give twice the limit. With
 * the database down the limiter fails open on its own count, and flushes what it kept once the
 * database is back. Two real `refdesk serve` processes on one database share an anonymous
 * client's budget.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RateLimitConfig } from '../../../core/config.ts';
import { systemClock } from '../../../core/services.ts';
import { PgRateLimits } from '../../../plugins/store-postgres/rate-limits.ts';
import { RateLimiter, rateLimitCountersOf } from '../../../server/access/rate-limit.ts';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { testNodes } from './pg-node.ts';
import { memoryLogger } from '../store-embedded/helpers.ts';
import { makeDataDir, removeDataDir, startServer, stopAll, type RefdeskServer } from '../../e2e/refdesk-process.ts';

const LIMIT = 100;
const CONFIG: RateLimitConfig = { windowSeconds: 3600, anonymous: { requests: LIMIT }, defaultPlan: 'free', plans: { free: { requests: LIMIT } } };
const RULE = CONFIG.anonymous;
const FLUSH_EVERY = 10;
const HOUR = 3_600_000;
const windowNow = () => Math.floor(Date.now() / HOUR) * HOUR;
const tick = () => new Promise((r) => setTimeout(r, 2));

describe('store-postgres shared rate limits on Debian PostgreSQL', { skip: postgresSkipReason() }, () => {
  let server: TestPostgres;
  const nodes = testNodes();
  let n = 0;
  const fresh = () => server.createDatabase(`rl${++n}`);

  before(async () => {
    server = await startPostgres();
  });
  const dirs: string[] = [];
  after(async () => {
    await stopAll();
    await nodes.closeAll();
    await server?.stop();
    for (const d of dirs) removeDataDir(d);
  });

  const total = async (counters: PgRateLimits, client: string) => (await counters.addCounts([{ client, windowStart: windowNow(), count: 0 }]))[0].count;

  test('addCounts: batches from two nodes at once add up exactly; repeats in a batch merge; totals come back; old windows pruned', async () => {
    const url = await fresh();
    const a = new PgRateLimits(await nodes.open(url));
    const b = new PgRateLimits(await nodes.open(url));
    const w = windowNow();
    const batch = (k: number) => [
      { client: 'anon:10.0.0.1', windowStart: w, count: k },
      { client: 'key:k1', windowStart: w, count: 1 },
      { client: 'anon:10.0.0.1', windowStart: w, count: 1 },
    ];
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).addCounts(batch(2))));
    const totals = await a.addCounts([
      { client: 'anon:10.0.0.1', windowStart: w, count: 0 },
      { client: 'key:k1', windowStart: w, count: 0 },
      { client: 'key:unknown', windowStart: w, count: 0 },
    ]);
    assert.deepEqual(
      totals.sort((x, y) => x.client.localeCompare(y.client)),
      [
        { client: 'anon:10.0.0.1', windowStart: w, count: 60 },
        { client: 'key:k1', windowStart: w, count: 20 },
        { client: 'key:unknown', windowStart: w, count: 0 },
      ],
    );
    await a.addCounts([{ client: 'anon:old', windowStart: w - 2 * HOUR, count: 5 }]);
    await b.pruneCounts(w - HOUR);
    const rows = await (await nodes.open(url)).query<{ client: string }>('SELECT client FROM rate_limit_counters ORDER BY client');
    assert.deepEqual(
      rows.map((r) => r.client),
      ['anon:10.0.0.1', 'key:k1', 'key:unknown'],
    );
    await assert.rejects(a.addCounts([{ client: 'x', windowStart: w, count: -1 }]), /whole numbers/);
  });

  test('two nodes share one budget within one flush batch per node; unshared limiters would give twice the limit', async () => {
    const url = await fresh();
    const counters = [new PgRateLimits(await nodes.open(url)), new PgRateLimits(await nodes.open(url))];
    const shared = counters.map((c) => new RateLimiter(CONFIG, systemClock, { counters: c, flushEvery: FLUSH_EVERY, flushMs: 50 }));
    const alone = [0, 1].map(() => new RateLimiter(CONFIG, systemClock));
    const spread = async (limiters: RateLimiter[], client: string) => {
      let admitted = 0;
      for (let i = 0; i < 3 * LIMIT; i++) {
        if (limiters[i % 2].consume(client, RULE).allowed) admitted++;
        await tick();
      }
      await Promise.all(limiters.map((l) => l.flush()));
      return admitted;
    };
    const unshared = await spread(alone, 'anon:192.0.2.7');
    assert.equal(unshared, 2 * LIMIT, 'each node alone admits the whole limit');
    const admitted = await spread(shared, 'anon:192.0.2.8');
    assert.ok(admitted >= LIMIT, `the budget is usable (admitted ${admitted})`);
    assert.ok(admitted <= LIMIT + 2 * FLUSH_EVERY, `within the tolerance: admitted ${admitted} of ${LIMIT} (+${2 * FLUSH_EVERY})`);
    assert.equal(await total(counters[0], 'anon:192.0.2.8'), admitted, 'every admitted request is in the shared count');
    // After the flushes both nodes know the window is used up.
    for (const l of shared) {
      const d = l.consume('anon:192.0.2.8', RULE);
      assert.equal(d.allowed, false);
      assert.equal(d.remaining, 0);
    }
  });

  test('what one node used is left to the other: 60 on A leaves exactly 40 on B', async () => {
    const url = await fresh();
    const a = new RateLimiter(CONFIG, systemClock, { counters: new PgRateLimits(await nodes.open(url)) });
    const b = new RateLimiter(CONFIG, systemClock, { counters: new PgRateLimits(await nodes.open(url)) });
    for (let i = 0; i < 60; i++) assert.equal(a.consume('key:k2', RULE).allowed, true);
    await a.flush();
    let onB = 0;
    for (let i = 0; i < 80; i++) {
      if (b.consume('key:k2', RULE).allowed) onB++;
      await b.flush();
    }
    assert.equal(onB, 40);
    assert.equal(b.peek('key:k2', RULE).remaining, 0);
    assert.equal(a.peek('key:k2', RULE).remaining, 40, 'A has not read B\'s counts yet');
    a.consume('key:k2', RULE);
    await a.flush();
    assert.equal(a.peek('key:k2', RULE).remaining, 0, 'after its next flush it has');
  });

  test('the database down: fail open on the node\'s own count, one warning, counts flushed once it is back', async () => {
    const url = await fresh();
    const store = { rateLimitCounters: new PgRateLimits(await nodes.open(url)) };
    const logger = memoryLogger();
    const a = new RateLimiter({ ...CONFIG, anonymous: { requests: 5 } }, systemClock, { counters: rateLimitCountersOf(store), logger, flushMs: 20 });
    const rule = { requests: 5 };
    await server.halt();
    try {
      const decisions = [];
      for (let i = 0; i < 7; i++) {
        decisions.push(a.consume('anon:198.51.100.1', rule).allowed);
        await a.flush();
      }
      assert.deepEqual(decisions, [true, true, true, true, true, false, false], 'the node still enforces the limit on its own count');
      await new Promise((r) => setTimeout(r, 100)); // retries while down
      const warnings = logger.entries.filter((l) => l.level === 'warn');
      assert.equal(warnings.length, 1, JSON.stringify(logger.entries));
      assert.match(warnings[0].message, /cannot reach the shared counters/);
      assert.match(String(warnings[0].fields?.error), /Cannot reach PostgreSQL at 127\.0\.0\.1:\d+\/rl\d+/);
    } finally {
      await server.restart();
    }
    await a.flush();
    assert.equal(await total(store.rateLimitCounters, 'anon:198.51.100.1'), 5, 'the five admitted while down were added');
    assert.ok(logger.entries.some((l) => /reachable again/.test(l.message)));
    const b = new RateLimiter(CONFIG, systemClock, { counters: new PgRateLimits(await nodes.open(url)) });
    b.consume('anon:198.51.100.1', rule);
    await b.flush();
    assert.equal(b.consume('anon:198.51.100.1', rule).allowed, false, 'another node sees them');
  });

  test('two refdesk serve processes on one database: what a client used on A is refused on B', async () => {
    const url = await fresh();
    const configDir = mkdtempSync(join(tmpdir(), 'refdesk-rl-config-'));
    dirs.push(configDir);
    const config = join(configDir, 'refdesk.yaml');
    writeFileSync(config, 'extends: default\nrateLimits:\n  windowSeconds: 3600\n  anonymous:\n    requests: 5\n  defaultPlan: free\n  plans:\n    free:\n      requests: 600\n');
    const env = { DATABASE_URL: url, ENCRYPTION_KEY: randomBytes(32).toString('base64'), REFDESK_CONFIG: config };
    const started: RefdeskServer[] = [];
    for (let i = 0; i < 2; i++) {
      const dataDir = makeDataDir('refdesk-rl-node-');
      dirs.push(dataDir);
      started.push(await startServer(dataDir, 60_000, env));
    }
    const [a, b] = started;
    const search = (node: RefdeskServer) => fetch(`${node.base}/api/v2/libs/search?libraryName=widgets&query=spinner`).then((r) => r.status);
    try {
      const onA: number[] = [];
      for (let i = 0; i < 6; i++) onA.push(await search(a));
      assert.deepEqual(onA, [200, 200, 200, 200, 200, 429], 'one node alone: the limit is exact');
      // B's first request of the window is decided before B has read the shared count (the
      // stated tolerance); it reads it at once, and from then on B refuses too.
      const first = await search(b);
      assert.ok(first === 200 || first === 429, String(first));
      // Under load B's read of the shared count may take longer than one flush interval: ask
      // again a few times, but at most 3 more times, so that B alone (5 a window) would still
      // answer 200 if the count were not shared.
      let later = 0;
      for (let attempt = 0; attempt < 3 && later !== 429; attempt++) {
        await new Promise((r) => setTimeout(r, 1500));
        later = await search(b);
      }
      assert.equal(later, 429, 'B knows what the client used on A');
      assert.equal(await search(a), 429);
    } finally {
      for (const n of started) await n.stop();
    }
  });

  test('a store without shared counters (embedded) gets a limiter that counts alone', () => {
    assert.equal(rateLimitCountersOf({}), null);
    assert.equal(rateLimitCountersOf({ rateLimitCounters: {} }), null);
  });
});
