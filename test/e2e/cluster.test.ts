/**
 * Several real `refdesk serve` processes on one throwaway PostgreSQL (Debian's server, issue 24):
 *
 * - 30 libraries added at once across 3 nodes: every job succeeds and runs exactly once (one
 *   claim, one read of its upstream), and every node serves every library;
 * - `kill -9` of the node running a job: another node takes the job over once its lease has run
 *   out and completes it (the upstream is read again, by the survivor);
 * - a library refreshed through node A is served new by node B;
 * - the anonymous rate limit holds across nodes: spread over two nodes, a client gets the limit
 *   (within the flush tolerance), not twice it;
 * - a settings change made on node A is used by node B.
 *
 * The libraries come from an llms-full.txt server on 127.0.0.1 (test/e2e/cluster-nodes.ts), which
 * any node can read.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { makeDataDir, removeDataDir, stopAll, httpGet } from './refdesk-process.ts';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { DocsUpstream, addLibrary, clusterConfig, createKey, jobRows, pidOfNodeId, startNode, waitForJob, type ClusterNode } from './cluster-nodes.ts';

const LEASE_MS = 4000;
const ANON_LIMIT = 40;

/** An API key of the cluster, made through the first node asked (keys are shared by the nodes). */
const keys = new WeakMap<ClusterNode[], string>();
async function keyOf(nodes: ClusterNode[], node: ClusterNode): Promise<{ authorization: string }> {
  if (!keys.has(nodes)) keys.set(nodes, await createKey(node, 'cluster-test'));
  return { authorization: `Bearer ${keys.get(nodes)}` };
}

async function context(nodes: ClusterNode[], node: ClusterNode, library: string, query: string): Promise<{ status: number; text: string }> {
  const r = await httpGet(`${node.base}/api/v2/context?${new URLSearchParams({ libraryId: library, query })}`, 30_000, await keyOf(nodes, node));
  return { status: r.status, text: r.text };
}

describe('several refdesk nodes on one PostgreSQL', { timeout: 1_800_000, skip: postgresSkipReason() }, () => {
  let postgres: TestPostgres;
  let upstream: DocsUpstream;
  let scratch: string;
  let config: string;
  const nodes: ClusterNode[] = [];

  before(async () => {
    postgres = await startPostgres();
    upstream = new DocsUpstream();
    await upstream.start();
    scratch = makeDataDir('refdesk-cluster-');
    config = clusterConfig(scratch, { store: { leaseMs: LEASE_MS, heartbeatMs: 500, pollMs: 250 }, anonymousRequests: ANON_LIMIT, windowSeconds: 600 });
  });
  after(async () => {
    await stopAll();
    await upstream?.stop();
    await postgres?.stop();
    for (const n of nodes) removeDataDir(n.dataDir);
    removeDataDir(scratch);
  });

  async function cluster(count: number, database: string): Promise<ClusterNode[]> {
    const url = await postgres.createDatabase(database);
    const started: ClusterNode[] = [];
    for (let i = 0; i < count; i++) started.push(await startNode(url, config));
    nodes.push(...started);
    return Object.assign(started, { url });
  }

  test('30 libraries added at once across 3 nodes: each job runs exactly once, every node serves them all', async () => {
    const three = await cluster(3, 'thirty');
    const url = (three as unknown as { url: string }).url;
    const names = Array.from({ length: 30 }, (_, i) => `lib-${i}`);
    const jobs = await Promise.all(names.map((name, i) => addLibrary(three[i % 3]!, upstream, name)));
    for (const [i, id] of jobs.entries()) assert.equal(await waitForJob(three[i % 3]!, id, ['succeeded', 'failed'], 600_000), 'succeeded', names[i]);

    const rows = await jobRows(url, jobs);
    assert.equal(rows.length, 30);
    for (const r of rows) assert.equal(r.attempts, 1, `${r.library_id} was claimed once`);
    for (const name of names) assert.equal(upstream.reads.get(name), 1, `${name}'s upstream was read once`);

    for (const node of three) {
      for (const name of [names[0]!, names[17]!, names[29]!]) {
        const r = await context(three, node, `/docs/${name}`, `${name} topic 3`);
        assert.equal(r.status, 200, r.text);
        assert.match(r.text, new RegExp(`${name}\\.topic3\\(`));
      }
    }
  });

  test('kill -9 of the node running a job: another node takes it over after the lease and completes it', async () => {
    const two = await cluster(2, 'failover');
    const url = (two as unknown as { url: string }).url;
    upstream.hold('slow');
    const job = await addLibrary(two[0]!, upstream, 'slow');
    // Wait until a node holds the job and has asked the upstream.
    let holder: ClusterNode | undefined;
    for (const deadline = Date.now() + 120_000; !holder; ) {
      assert.ok(Date.now() < deadline, 'no node started the job');
      const [row] = await jobRows(url, [job]);
      const pid = pidOfNodeId(row?.claimed_by ?? null);
      if (row?.state === 'running' && pid && (upstream.reads.get('slow') ?? 0) >= 1) holder = two.find((n) => n.pid === pid);
      else await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(holder, 'the job is held by one of the nodes');
    const survivor = two.find((n) => n !== holder)!;
    await holder.kill9();
    upstream.release('slow');

    assert.equal(await waitForJob(survivor, job, ['succeeded', 'failed'], LEASE_MS * 10 + 60_000), 'succeeded');
    const [row] = await jobRows(url, [job]);
    assert.equal(row!.attempts, 2, 'claimed once by the killed node, once by the survivor');
    assert.equal(upstream.reads.get('slow'), 2, 'the survivor read the upstream again');
    const r = await context(two, survivor, '/docs/slow', 'slow topic 2');
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /slow\.topic2\(/);
  });

  // Two nodes that the refresh and settings tests share (each test changes only what it checks:
  // a library of its own, a setting), started by whichever of them runs first.
  let shared: Promise<ClusterNode[]> | undefined;
  const sharedPair = () => (shared ??= cluster(2, 'shared'));

  test('a library refreshed through node A is served new by node B', async () => {
    const pair = await sharedPair();
    const [a, b] = pair;
    upstream.setGeneration('fresh', 1);
    await waitForJob(a!, await addLibrary(a!, upstream, 'fresh'), ['succeeded'], 300_000);
    // The key is made through B and used on A: keys are shared too.
    const before = await context(pair, b!, '/docs/fresh', 'fresh topic 1 generation');
    assert.equal(before.status, 200, before.text);
    assert.match(before.text, /g1w/);

    upstream.setGeneration('fresh', 2);
    const res = await fetch(`${a!.base}/api/v1/refresh`, { method: 'POST', headers: { ...(await keyOf(pair, a!)), 'content-type': 'application/json' }, body: JSON.stringify({ libraryName: '/docs/fresh' }) });
    const body = (await res.json()) as { jobId: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(await waitForJob(a!, body.jobId, ['succeeded', 'failed'], 300_000), 'succeeded');
    // Node B sees the new version (through the change feed, or its polling fallback, within seconds).
    let after = '';
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      after = (await context(pair, b!, '/docs/fresh', 'fresh topic 1 generation')).text;
      if (after.includes('g2w')) break;
    }
    assert.match(after, /g2w/);
    assert.doesNotMatch(after, /g1w/);
  });

  test('the anonymous rate limit holds across nodes', async () => {
    const [a, b] = await cluster(2, 'limits');
    let ok = 0;
    let limited = 0;
    // Twice the limit, alternating between the nodes, a little apart so both nodes' counts reach the database.
    for (let i = 0; i < ANON_LIMIT * 2; i++) {
      const node = i % 2 === 0 ? a! : b!;
      const r = await fetch(`${node.base}/api/v2/libs/search?libraryName=react&query=hooks`);
      await r.arrayBuffer();
      if (r.status === 429) limited++;
      else ok++;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(limited > 0, `no request was limited (${ok} answered)`);
    // Each node alone would have let ANON_LIMIT through: together they let about ANON_LIMIT through.
    assert.ok(ok < ANON_LIMIT * 1.5, `${ok} requests answered for a limit of ${ANON_LIMIT}`);
  });

  test('a settings change made on node A is used by node B', async () => {
    const [a, b] = await sharedPair();
    const mcp = (node: ClusterNode) =>
      fetch(`${node.base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'cluster-test', version: '1' } } }),
      }).then(async (r) => (await r.arrayBuffer(), r.status));
    assert.notEqual(await mcp(b!), 401, 'without the setting, /mcp answers without a key');
    const res = await fetch(`${a!.base}/api/admin/settings`, { method: 'PATCH', headers: { ...a!.adminAuth, 'content-type': 'application/json' }, body: JSON.stringify({ 'mcp.requireKey': true }) });
    assert.equal(res.status, 200, await res.text());
    let status = 0;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      status = await mcp(b!);
      if (status === 401) break;
    }
    assert.equal(status, 401, 'node B requires a key on /mcp once node A changed the setting');
  });
});
