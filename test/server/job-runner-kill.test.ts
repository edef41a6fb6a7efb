/**
 * Failover of a job between real `refdesk serve` processes (test/e2e/refdesk-process.ts) on one
 * throwaway PostgreSQL (Debian's server): node 1 runs a job (its source read held by the test's
 * HTTP server), is killed with SIGKILL, and node 2 takes the job over once the lease expires and
 * completes it; the job ran once to its end. The nodes use the PostgreSQL store through a config
 * file naming the test store plugin (test/fixtures/store-postgres-test.ts), with short leases
 * (leaseMs 1500, heartbeatMs 300, pollMs 200).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { listenOnLoopback } from '../helpers/listen.ts';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { BASE_PLUGINS, writeTestConfig } from '../helpers/test-kernel.ts';
import { makeDataDir, removeDataDir, sleep, startServer, stopAll, type RefdeskServer } from '../e2e/refdesk-process.ts';

const LEASE = { leaseMs: 1500, heartbeatMs: 300, pollMs: 200 };

describe('job failover between refdesk processes on one PostgreSQL', { skip: postgresSkipReason() }, () => {
  let cluster: TestPostgres;
  let site: Server;
  let siteBase: string;
  const reads = new Map<string, number>();
  const held: ServerResponse[] = [];
  const dirs: string[] = [];

  before(async () => {
    cluster = await startPostgres();
    site = createServer((req, res) => {
      const path = req.url ?? '';
      const n = (reads.get(path) ?? 0) + 1;
      reads.set(path, n);
      // The first read of the job hangs (its node dies while it waits); later ones are answered.
      if (n === 1) return void held.push(res);
      res.end(`# Failover\n\n## Setup\n\nRun \`failover init\` to start (read ${n}).\n`);
    });
    siteBase = await listenOnLoopback(site);
  });
  after(async () => {
    await stopAll();
    for (const r of held) r.destroy();
    site?.closeAllConnections();
    site?.close();
    await cluster?.stop();
    for (const d of dirs) removeDataDir(d);
  });

  async function node(url: string): Promise<RefdeskServer> {
    const dir = makeDataDir('refdesk-pg-node-');
    dirs.push(dir);
    const config = writeTestConfig(
      join(dir, 'refdesk.yaml'),
      [{ use: 'test/fixtures/store-postgres-test.ts', options: { 'postgres-test': { databaseUrl: url, ...LEASE } } }, ...BASE_PLUGINS.slice(1), { use: 'plugins/source-llms-txt', options: { llmstxt: {} } }],
      { slots: { store: 'postgres-test', chunkers: ['markdown'] }, network: { allowHosts: ['127.0.0.1'] } },
    );
    return startServer(join(dir, 'data'), 60_000, { REFDESK_CONFIG: config });
  }

  test('kill -9 of the node running a job: the other node completes it after the lease expires', async () => {
    const url = await cluster.createDatabase('failover');
    const db = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const one = await node(url);
      // As `refdesk add` sends it to a running server (the local admin token).
      const add = await fetch(`${one.base}/api/admin/add`, {
        method: 'POST',
        headers: { ...one.adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ source: 'llmstxt', spec: { url: `${siteBase}/failover.txt` } }),
      });
      const added = (await add.json()) as { jobId: string };
      assert.equal(add.status, 202, JSON.stringify(added));
      const jobId = added.jobId;
      const libraryId = String((await db.query('SELECT library_id FROM jobs WHERE id = $1', [jobId])).rows[0].library_id);
      for (let i = 0; held.length === 0; i++) {
        assert.ok(i < 400, 'node 1 reads the source');
        await sleep(50);
      }
      const two = await node(url);
      const { rows: running } = await db.query('SELECT state, claimed_by FROM jobs WHERE id = $1', [jobId]);
      assert.equal(running[0].state, 'running');
      assert.match(running[0].claimed_by, new RegExp(`:${one.pid}:`), 'node 1 holds the job');

      one.child.kill('SIGKILL');
      const killedAt = Date.now();
      let state = '';
      for (let i = 0; state !== 'succeeded'; i++) {
        assert.ok(i < 600, `node 2 completes the job (state ${state})`);
        await sleep(50);
        state = (await db.query('SELECT state FROM jobs WHERE id = $1', [jobId])).rows[0].state;
        assert.notEqual(state, 'failed');
      }
      const failoverMs = Date.now() - killedAt;
      const { rows: done } = await db.query('SELECT claimed_by, attempts FROM jobs WHERE id = $1', [jobId]);
      assert.match(done[0].claimed_by, new RegExp(`:${two.pid}:`), 'node 2 ran it');
      assert.equal(done[0].attempts, 2);
      assert.ok(failoverMs >= LEASE.leaseMs - 300, `not taken over while the lease was live (${failoverMs} ms)`);
      assert.equal(reads.get('/failover.txt'), 2, 'read once by each node, completed once');
      const { rows: log } = await db.query('SELECT message FROM job_logs WHERE job_id = $1 ORDER BY seq', [jobId]);
      const lines = log.map((r) => String(r.message));
      assert.equal(lines.filter((l) => l.startsWith('finalized:')).length, 1, lines.join(' | '));
      assert.ok(lines.some((l) => /stopped renewing its lease/.test(l)));
      const ctx = await fetch(`${two.base}/api/v2/context?libraryId=${encodeURIComponent(libraryId)}&query=init`);
      assert.equal(ctx.status, 200);
      assert.match(await ctx.text(), /failover init/);
      console.log(`# failover after kill -9: ${failoverMs} ms (leaseMs ${LEASE.leaseMs}, heartbeatMs ${LEASE.heartbeatMs}, pollMs ${LEASE.pollMs})`);
    } finally {
      await db.end();
    }
  });
});
