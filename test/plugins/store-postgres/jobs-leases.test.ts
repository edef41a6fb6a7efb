/**
 * The PostgreSQL store's shared job queue (plugins/store-postgres/jobs.ts, core/contracts.ts
 * JobQueue) on Debian's PostgreSQL server, with two (or three) PostgresStore instances on one
 * database standing for nodes: claims with SKIP LOCKED (each job once, oldest first), leases
 * renewed by the holder only, takeover after a lease expires (by the sweep and at open), the
 * fence on a stale node's writes and on its build's finalize (migration 005), cancel from any node.
 * Short leases (leaseMs 1500, heartbeatMs 300) keep the waits small.
 */
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobRecord } from '../../../core/contracts.ts';
import { lib } from '../../../core/testing/store-contracts/shared.ts';
import type { PostgresStore } from '../../../plugins/store-postgres/store.ts';
import { LEASE_EXPIRED_LOG_LINE } from '../../../plugins/store-postgres/jobs.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { freshDatabaseUrl, pgStore } from './helpers.ts';

const LEASE = { leaseMs: 1500, heartbeatMs: 300, pollMs: 200 };

const opened: { store: PostgresStore; remove(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) {
    await s.store.close().catch(() => {});
    await s.remove();
  }
});

/** `n` open stores (nodes) on one fresh database. */
async function nodes(n: number, options = LEASE): Promise<{ url: string; stores: PostgresStore[] }> {
  const url = await freshDatabaseUrl();
  const stores: PostgresStore[] = [];
  for (let i = 0; i < n; i++) stores.push(await node(url, options));
  return { url, stores };
}

async function node(url: string, options = LEASE): Promise<PostgresStore> {
  const s = await pgStore(url, options);
  opened.push(s);
  await s.store.open();
  return s.store;
}

async function queued(store: PostgresStore, n: number, libraryId = '/docs/koa'): Promise<JobRecord[]> {
  await store.upsertLibrary(lib(libraryId));
  const jobs: JobRecord[] = [];
  for (let i = 0; i < n; i++) jobs.push(await store.createJob({ libraryId, version: i === 0 ? '' : `v${i}`, kind: 'upload' }));
  return jobs;
}

async function row(store: PostgresStore, id: string): Promise<Record<string, unknown>> {
  const [r] = await store.database.query('SELECT state, claimed_by, attempts, lease_until, cancel_requested_at FROM jobs WHERE id = $1', [id]);
  return r;
}

/** Makes a job's lease expire now (what leaseMs of silence does), without waiting for it. */
async function expireLease(store: PostgresStore, id: string): Promise<void> {
  await store.database.query(`UPDATE jobs SET lease_until = clock_timestamp() - interval '1 millisecond' WHERE id = $1`, [id]);
}

describe('PostgreSQL store: the shared job queue', { skip: postgresSkipReason() }, () => {
  test('two nodes claiming at once: each of 10 jobs is claimed exactly once, leased to its claimer', async () => {
    const { stores } = await nodes(2);
    const jobs = await queued(stores[0], 10);
    const claimedBy = new Map<string, number>();
    const order: string[][] = [[], []];
    // Both nodes claim as fast as they can, several claims in flight each.
    await Promise.all(
      stores.flatMap((s, i) =>
        [0, 1, 2].map(async () => {
          for (let j = await s.claimNextJob!(); j; j = await s.claimNextJob!()) {
            assert.equal(claimedBy.has(j.id), false, `job ${j.id} claimed twice`);
            claimedBy.set(j.id, i);
            order[i].push(j.id);
            assert.equal(j.state, 'running');
          }
        }),
      ),
    );
    assert.deepEqual([...claimedBy.keys()].sort(), jobs.map((j) => j.id).sort());
    assert.equal(order[0].length + order[1].length, 10);
    for (const [id, i] of claimedBy) {
      const r = await row(stores[0], id);
      assert.equal(r.claimed_by, stores[i].database.nodeId);
      assert.equal(r.attempts, 1);
      assert.ok(r.lease_until instanceof Date);
    }
    assert.equal(await stores[1].claimNextJob!(), null, 'nothing left');
  });

  test('claimNextJob takes the oldest queued job first', async () => {
    const { stores } = await nodes(1);
    const jobs = await queued(stores[0], 4);
    const got: string[] = [];
    for (let j = await stores[0].claimNextJob!(); j; j = await stores[0].claimNextJob!()) got.push(j.id);
    assert.deepEqual(got, jobs.map((j) => j.id));
  });

  test('only the holder renews; a lease left to expire is swept back to the queue (log line, build discarded) and another node takes the job over', async () => {
    const { stores } = await nodes(2);
    const [a, b] = stores;
    const [job] = await queued(a, 1);
    const claimed = await a.claimNextJob!();
    assert.equal(claimed?.id, job.id);
    assert.deepEqual(await a.renewLease!(job.id), { held: true, cancelRequested: false });
    assert.deepEqual(await b.renewLease!(job.id), { held: false, cancelRequested: false }, 'B never held it');
    assert.equal(await b.sweepExpiredLeases!(), 0, 'a live lease is left alone');
    assert.equal(await b.claimNextJob!(), null);

    // A build staged by A's attempt (rows as the builds role writes them).
    await a.database.query(`INSERT INTO builds (id, library_id, version, job_id, state) VALUES ('build-a', '/docs/koa', '', $1, 'building')`, [job.id]);
    const [staged] = await a.database.query(`SELECT job_attempt FROM builds WHERE id = 'build-a'`);
    assert.equal(staged.job_attempt, 1, 'the build records the attempt that made it');

    // A stops renewing (a dead node): after leaseMs the lease has expired.
    await sleep(LEASE.leaseMs + 200);
    assert.equal(await b.sweepExpiredLeases!(), 1);
    const requeued = await b.getJob(job.id);
    assert.equal(requeued?.state, 'queued');
    assert.equal((await row(b, job.id)).claimed_by, null);
    assert.ok((await b.getJobLog(job.id)).some((l) => l.message === LEASE_EXPIRED_LOG_LINE && l.level === 'warn'));
    const [discarded] = await b.database.query(`SELECT state FROM builds WHERE id = 'build-a'`);
    assert.equal(discarded.state, 'failed', "the stale attempt's build is discarded");

    const taken = await b.claimNextJob!();
    assert.equal(taken?.id, job.id);
    assert.equal((await row(b, job.id)).attempts, 2);

    // A comes back: its lease is gone, and every write of its to the job is refused.
    assert.deepEqual(await a.renewLease!(job.id), { held: false, cancelRequested: false });
    await assert.rejects(a.updateJob(job.id, { state: 'succeeded' }), (e: { code?: string }) => e.code === 'library_busy');
    await assert.rejects(a.updateJob(job.id, { progress: { files: 99 } }), (e: { code?: string }) => e.code === 'library_busy');
    await assert.rejects(a.appendJobLog(job.id, 'info', 'stale line'), (e: { code?: string }) => e.code === 'library_busy');
    assert.equal((await b.getJob(job.id))?.state, 'running');
    assert.ok(!(await b.getJobLog(job.id)).some((l) => l.message === 'stale line'));
    assert.deepEqual(await b.renewLease!(job.id), { held: true, cancelRequested: false });
    const done = await b.updateJob(job.id, { state: 'succeeded' });
    assert.equal(done.state, 'succeeded');
    assert.equal((await row(b, job.id)).lease_until, null, 'an ended job holds no lease');
  });

  test("the database refuses to finalize a stale attempt's build, and finalizes the holder's", async () => {
    const { stores } = await nodes(2);
    const [a, b] = stores;
    const [job] = await queued(a, 1);
    await a.claimNextJob!();
    await a.database.query(`INSERT INTO builds (id, library_id, version, job_id, state) VALUES ('stale', '/docs/koa', '', $1, 'building')`, [job.id]);
    // A's lease expires before the sweep marks its build: a finalize racing the takeover.
    await expireLease(a, job.id);
    await assert.rejects(a.database.query(`UPDATE builds SET state = 'finalized' WHERE id = 'stale'`), /lost the job's lease/);
    assert.equal(await b.sweepExpiredLeases!(), 1);
    await b.claimNextJob!();
    await b.database.query(`INSERT INTO builds (id, library_id, version, job_id, state) VALUES ('fresh', '/docs/koa', '', $1, 'building')`, [job.id]);
    await b.database.query(`UPDATE builds SET state = 'finalized' WHERE id = 'fresh'`);
    // The stale build, even un-failed by hand, cannot be finalized over B's result.
    await a.database.query(`UPDATE builds SET state = 'building' WHERE id = 'stale'`);
    await assert.rejects(a.database.query(`UPDATE builds SET state = 'finalized' WHERE id = 'stale'`), /lost the job's lease/);
    // Builds without a leased job (a test's, a CLI's) are not fenced.
    await a.database.query(`INSERT INTO builds (id, library_id, version, job_id, state) VALUES ('plain', '/docs/koa', 'v9', NULL, 'building')`);
    await a.database.query(`UPDATE builds SET state = 'finalized' WHERE id = 'plain'`);
  });

  test('a node opening after another died queues its expired jobs again (recover at open); live leases are left alone', async () => {
    const { url, stores } = await nodes(1);
    const [a] = stores;
    const [dead, live] = await queued(a, 2);
    await a.claimNextJob!();
    await a.claimNextJob!();
    await expireLease(a, dead.id);
    const c = await node(url);
    assert.equal((await c.getJob(dead.id))?.state, 'queued');
    assert.equal((await c.getJob(live.id))?.state, 'running');
    assert.equal((await row(c, live.id)).claimed_by, a.database.nodeId);
  });

  test('cancel from any node: a queued job ends at once; a running one is asked through its holder\'s next renewal; a dead holder\'s job ends cancelled at the sweep', async () => {
    const { stores } = await nodes(2);
    const [a, b] = stores;
    const [first, second, third] = await queued(a, 3);
    const heard: string[] = [];
    const stop = a.watchJobs!((id) => heard.push(id));

    // Running on A, cancelled through B.
    assert.equal((await a.claimNextJob!())?.id, first.id);
    const asked = await b.requestCancel!(first.id);
    assert.equal(asked?.state, 'running');
    assert.ok((await row(b, first.id)).cancel_requested_at instanceof Date);
    assert.deepEqual(await a.renewLease!(first.id), { held: true, cancelRequested: true });
    const ended = await a.updateJob(first.id, { state: 'failed', error: { code: 'cancelled', message: 'Cancelled by an admin before it finished.' } });
    assert.equal(ended.error?.code, 'cancelled');
    assert.ok(heard.includes(first.id), 'the job change reached the watcher');
    stop();

    // Queued, cancelled through B: never claimed afterwards.
    const cancelled = await b.requestCancel!(third.id);
    assert.equal(cancelled?.state, 'failed');
    assert.deepEqual(cancelled?.error, { code: 'cancelled', message: 'Cancelled by an admin before it ran.' });
    assert.ok((await a.getJobLog(third.id)).some((l) => /cancelled by an admin before it ran/.test(l.message)));

    // Running on A, cancel asked, A dies: the sweep ends it cancelled instead of queueing it.
    assert.equal((await a.claimNextJob!())?.id, second.id);
    await b.requestCancel!(second.id);
    await expireLease(a, second.id);
    assert.equal(await b.sweepExpiredLeases!(), 1);
    const swept = await b.getJob(second.id);
    assert.equal(swept?.state, 'failed');
    assert.equal(swept?.error?.code, 'cancelled');
    assert.equal(await b.claimNextJob!(), null, 'no job left to run');

    // Ended and unknown jobs.
    assert.equal((await b.requestCancel!(first.id))?.state, 'failed');
    assert.equal(await b.requestCancel!('no-such-job'), null);
  });

  test('a job claimed by id (no runner) has its lease renewed by the store while it runs; released jobs go back to the queue', async () => {
    const { stores } = await nodes(2);
    const [a, b] = stores;
    const [byId, next] = await queued(a, 2);
    assert.equal((await a.claimJob(byId.id))?.state, 'running');
    await sleep(LEASE.leaseMs + 600);
    assert.equal(await b.sweepExpiredLeases!(), 0, 'the store kept renewing it');
    assert.equal((await b.getJob(byId.id))?.state, 'running');
    await a.updateJob(byId.id, { state: 'succeeded' });

    assert.equal((await a.claimNextJob!())?.id, next.id);
    await a.releaseJob!(next.id);
    assert.equal((await b.getJob(next.id))?.state, 'queued');
    assert.equal((await b.claimNextJob!())?.id, next.id);
    assert.equal((await row(b, next.id)).attempts, 2);
  });
});
