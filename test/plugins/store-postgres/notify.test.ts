/**
 * Issue 24, the change feed between nodes (plugins/store-postgres/notify.ts) on Debian's
 * PostgreSQL server: two PgDatabase nodes on one database see each other's changes over
 * LISTEN/NOTIFY (with polling slowed down so only LISTEN can deliver), a killed listener
 * backend reconnects and polling covers the gap, LISTEN turned off leaves polling alone to
 * deliver, and each change arrives once per node whichever way comes first.
 *
 * The waits are generous deadlines (the machine is shared and loaded), not speed checks: the
 * delivery path is what each test pins down.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { PgDatabase } from '../../../plugins/store-postgres/database.ts';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { testNodes, waitFor } from './pg-node.ts';

type Change = [topic: string, id: string, node: string];

function record(db: PgDatabase): Change[] {
  const seen: Change[] = [];
  db.changes.on('change', (topic: string, id: string, node: string) => seen.push([topic, id, node]));
  return seen;
}

const DEADLINE = 5_000;
const NEVER = 3_600_000;

describe('store-postgres change feed on Debian PostgreSQL', { skip: postgresSkipReason() }, () => {
  let server: TestPostgres;
  const nodes = testNodes();
  let n = 0;
  const fresh = () => server.createDatabase(`feed${++n}`);

  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await nodes.closeAll();
    await server?.stop();
  });

  test('LISTEN/NOTIFY: each node gets the other\'s changes (polling slowed down to an hour), never its own twice', async () => {
    const url = await fresh();
    const a = await nodes.open(url, { pollMs: NEVER });
    const b = await nodes.open(url, { pollMs: NEVER });
    assert.ok(a.changeFeed?.isListening && b.changeFeed?.isListening, 'both listen');
    const seenA = record(a);
    const seenB = record(b);
    await a.publish('settings', 'providers');
    await b.publish('apiKey', 'key_1');
    await waitFor(() => seenB.length >= 2 && seenA.length >= 2, DEADLINE, 'both changes on both nodes');
    // Each node emits its own change at once and the other's when it arrives.
    const both = [
      ['apiKey', 'key_1', b.nodeId],
      ['settings', 'providers', a.nodeId],
    ];
    assert.deepEqual([...seenA].sort(), both);
    assert.deepEqual([...seenB].sort(), both);
    // The row of each change is in the log polling reads.
    const rows = await a.query<{ topic: string; id: string; node: string }>('SELECT topic, id, node FROM changes ORDER BY seq');
    assert.deepEqual(rows, [
      { topic: 'settings', id: 'providers', node: a.nodeId },
      { topic: 'apiKey', id: 'key_1', node: b.nodeId },
    ]);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(seenA.length + seenB.length, 4, 'nothing delivered twice');
  });

  test('a killed listener backend reconnects, and polling delivers what happened meanwhile', async () => {
    const url = await fresh();
    const a = await nodes.open(url, { pollMs: NEVER });
    const b = await nodes.open(url, { pollMs: 200 });
    const seenB = record(b);
    const pid = b.changeFeed!.listenerPid;
    assert.ok(pid, 'B listens');
    const killed = await a.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
    assert.equal(killed[0].ok, true);
    await waitFor(() => !b.changeFeed!.isListening, DEADLINE, 'B notices its listener is gone');
    // Published while B's listener is down (its first reconnect waits 250 ms).
    await a.publish('library', '/acme/widgets');
    await waitFor(() => seenB.length === 1, DEADLINE, 'the change made during the gap');
    assert.deepEqual(seenB, [['library', '/acme/widgets', a.nodeId]]);
    await waitFor(() => b.changeFeed!.isListening, DEADLINE, 'B listening again');
    assert.notEqual(b.changeFeed!.listenerPid, pid, 'on a new backend');
    assert.ok(
      b.log.some((l) => l.level === 'warn' && /change feed connection lost/.test(l.message)),
      'the loss is logged',
    );
    // Over LISTEN again: B polls every 200 ms too, but the change must come exactly once.
    await a.publish('job', 'job_9');
    await waitFor(() => seenB.length === 2, DEADLINE, 'the change after reconnection');
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(seenB, [
      ['library', '/acme/widgets', a.nodeId],
      ['job', 'job_9', a.nodeId],
    ]);
  });

  test('with LISTEN off (a pooler in transaction mode), polling alone delivers', async () => {
    const url = await fresh();
    const a = await nodes.open(url, { pollMs: NEVER });
    const b = await nodes.open(url, { listen: false, pollMs: 200 });
    assert.equal(b.changeFeed!.isListening, false);
    const listeners = await a.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '% listener'`,
    );
    assert.equal(listeners[0].n, 1, 'only A holds a LISTEN connection');
    const seenB = record(b);
    for (let i = 0; i < 3; i++) await a.publish('session', `s${i}`);
    await waitFor(() => seenB.length === 3, DEADLINE, 'three changes by polling');
    assert.deepEqual(
      seenB.map((c) => c[1]),
      ['s0', 's1', 's2'],
    );
  });

  test('a change whose row commits late (a lower seq visible after a higher one) is still delivered by polling', async () => {
    const url = await fresh();
    const a = await nodes.open(url, { pollMs: NEVER });
    const b = await nodes.open(url, { listen: false, pollMs: NEVER });
    const seenB = record(b);
    // A writer that took seq 1 and commits after another writer's seq 2 (as concurrent publishes can).
    const slow = new pg.Client({ connectionString: url });
    await slow.connect();
    try {
      await slow.query('BEGIN');
      await slow.query(`INSERT INTO changes (topic, id, node) VALUES ('library', 'late', 'other-node')`);
      await a.publish('library', 'early');
      await b.changeFeed!.pollNow();
      assert.deepEqual(seenB, [['library', 'early', a.nodeId]]);
      await slow.query('COMMIT');
    } finally {
      await slow.end();
    }
    await b.changeFeed!.pollNow();
    assert.deepEqual(seenB, [
      ['library', 'early', a.nodeId],
      ['library', 'late', 'other-node'],
    ]);
    await b.changeFeed!.pollNow();
    assert.equal(seenB.length, 2, 'not delivered again');
  });

  test('the database going away and coming back: polling and the listener recover, a change published meanwhile is sent later', async () => {
    const url = await fresh();
    const a = await nodes.open(url, { pollMs: 200 });
    const b = await nodes.open(url, { pollMs: 200 });
    const seenB = record(b);
    await server.halt();
    try {
      await waitFor(() => !b.changeFeed!.isListening, DEADLINE, 'B notices the outage');
      // Committed just before the outage: publishing does not fail the caller, it is sent later.
      await a.publish('settings', 'x');
      assert.ok(a.log.some((l) => /a change could not be published/.test(l.message)));
      await new Promise((r) => setTimeout(r, 500)); // a few failed polls and reconnects
    } finally {
      await server.restart();
    }
    await waitFor(() => b.changeFeed!.isListening, 15_000, 'B listening again');
    await a.publish('settings', 'y');
    await waitFor(() => seenB.some((c) => c[1] === 'y'), DEADLINE, 'a change after the outage');
    await waitFor(() => seenB.some((c) => c[1] === 'x'), DEADLINE, 'the change published during the outage');
    assert.ok(b.log.some((l) => /change feed poll failed/.test(l.message)), 'the failed poll is logged once');
    assert.equal(b.log.filter((l) => /change feed poll failed/.test(l.message)).length, 1, 'not once per poll');
  });
});
