/**
 * The cluster benchmark (issue 24): N = 1, 2, 3 compiled `refdesk serve` processes on one
 * throwaway PostgreSQL (Debian's server, started as the tests do: test/helpers/postgres.ts),
 * printing one JSON document:
 *
 *   - setup: the corpora ingested into a data directory (`refdesk add`, embedded store) and moved
 *     to the database with `refdesk migrate-store` (its time too);
 *   - per N: each node's first answer of the largest library (its segment read from the database
 *     into the node's cache), sequential GET /api/v2/context spread round-robin over the nodes
 *     (p50/p99 and the nodes' CPU time per question), throughput at concurrency 16 over the
 *     nodes beside a bare Koa route serving a real answer from memory (as bench:serve does), and
 *     job throughput: `--jobs` small llms.txt libraries (from a server on 127.0.0.1) added at once
 *     round-robin over the nodes, until all succeeded;
 *   - failover: two nodes, a job held running, `kill -9` of the node holding it; the time until the
 *     other node claims it (the lease running out) and until it succeeds.
 *
 *   npm run bench:cluster [-- --corpora koa,zod] [--requests 200] [--seconds 10] [--jobs 12]
 *                         [--max-nodes 3] [--lease-ms 5000] [--no-build]
 *
 * It needs the PostgreSQL store's roles (the pg branches of issue 24 merged) and exits with a
 * message saying so until then. Timings depend on the load: every figure carries the load averages.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { cpuMs, hammer, headingQuestions, load, round, rssMb, startBareKoa, stats, timed } from './bench-parts.ts';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../test/helpers/postgres.ts';
import { testIssuerEnv } from '../test/helpers/licence.ts';
import { CLUSTER_ENCRYPTION_KEY, DocsUpstream, addLibrary, clusterConfig, jobRows, pidOfNodeId, startNode, waitForJob, type ClusterNode } from '../test/e2e/cluster-nodes.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'refdesk.js');

const { values } = parseArgs({
  options: {
    corpora: { type: 'string', default: 'koa,zod,hono' },
    'corpora-dir': { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') },
    requests: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    jobs: { type: 'string', default: '12' },
    'max-nodes': { type: 'string', default: '3' },
    'lease-ms': { type: 'string', default: '5000' },
    'no-build': { type: 'boolean', default: false },
  },
});

const int = (name: keyof typeof values) => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer`);
  return n;
};
const REQUESTS = int('requests');
const SECONDS = int('seconds');
const JOBS = int('jobs');
const MAX_NODES = int('max-nodes');
const LEASE_MS = int('lease-ms');

function fail(message: string): never {
  process.stderr.write(`bench:cluster: ${message}\n`);
  process.exit(2);
}
const log = (m: string) => process.stderr.write(`${m}\n`);

/** The store's files still holding role methods that throw `notBuilt` (the pg branches not merged). */
function unbuiltRoles(): string[] {
  const dir = join(ROOT, 'plugins', 'store-postgres');
  const missing = readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'database.ts' && /\bnotBuilt\(/.test(readFileSync(join(dir, f), 'utf8')));
  if (!existsSync(join(dir, 'index.ts'))) missing.push('index.ts (the plugin chosen when DATABASE_URL is set)');
  return missing;
}

interface Corpus {
  name: string;
  bytes: number;
}

function refdesk(args: string[], dataDir: string, extra: Record<string, string> = {}): { ms: number; stdout: string; stderr: string } {
  const t0 = performance.now();
  const env: NodeJS.ProcessEnv = { ...process.env, ...testIssuerEnv(), DATA_DIR: dataDir, LOG_LEVEL: 'error', REFDESK_SHOW_RUNTIME: '1', ...extra };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) fail(`refdesk ${args[0]} failed (${r.status}):\n${r.stderr}`);
  return { ms: performance.now() - t0, stdout: r.stdout, stderr: r.stderr };
}

/** Context questions spread round-robin over the nodes. */
function roundRobin(nodes: ClusterNode[], libraryId: string, questions: string[]): () => string {
  let i = 0;
  return () => {
    const q = questions[i % questions.length]! + (i >= questions.length ? ` ${Math.floor(i / questions.length)}` : '');
    const node = nodes[i++ % nodes.length]!;
    return `${node.base}/api/v2/context?${new URLSearchParams({ libraryId, query: q, type: 'txt' })}`;
  };
}

const nodesCpu = (nodes: ClusterNode[]) => nodes.reduce((s, n) => s + cpuMs(n.pid), 0);

async function main() {
  const skip = postgresSkipReason();
  if (skip) fail(`no PostgreSQL server to run on: ${skip}`);
  const unbuilt = unbuiltRoles();
  if (unbuilt.length) {
    fail(`the PostgreSQL store is not complete in this checkout (${unbuilt.join(', ')}): merge the pg branches of issue 24 (wip/pgcatalog, wip/pgbuilds, wip/pgjobs, wip/pgcluster) first.`);
  }
  const corporaDir = resolve(values['corpora-dir']!);
  if (!existsSync(join(corporaDir, 'MANIFEST.json'))) fail(`no corpora in ${corporaDir} (--corpora-dir)`);
  const manifest = JSON.parse(readFileSync(join(corporaDir, 'MANIFEST.json'), 'utf8')) as { corpora: Corpus[] };
  const wanted = new Set(values.corpora!.split(',').map((s) => s.trim()));
  const corpora = manifest.corpora.filter((c) => wanted.has(c.name));
  if (corpora.length === 0) fail(`none of --corpora ${values.corpora} is in the manifest`);
  const largest = [...corpora].sort((a, b) => b.bytes - a.bytes)[0]!;
  const libraryId = `/docs/${largest.name}`;

  if (!values['no-build']) {
    log('npm run build (the nodes run the compiled code)');
    const b = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (b.status !== 0) fail(`npm run build failed:\n${b.stderr}`);
  }

  const result: Record<string, unknown> = { machine: { cpus: cpus().length, node: process.version, loadBefore: load() }, corpora: corpora.map((c) => c.name), largest: libraryId, leaseMs: LEASE_MS };
  const scratch = mkdtempSync(join(tmpdir(), 'refdesk-bench-cluster-'));
  let postgres: TestPostgres | undefined;
  const upstream = new DocsUpstream();
  const live: ClusterNode[] = [];
  const started: ClusterNode[] = [];
  try {
    postgres = await startPostgres();
    await upstream.start();
    // The compiled code loads the compiled plugins (dist/config/default.yaml names them).
    const compiled = join(ROOT, 'dist', 'config', 'default.yaml');
    // Rate limits out of the way: they are shared by the nodes now, and the phases add up in one window.
    const config = clusterConfig(scratch, { planRequests: 1_000_000_000, store: { leaseMs: LEASE_MS, heartbeatMs: Math.max(200, Math.round(LEASE_MS / 5)) }, ...(existsSync(compiled) ? { base: compiled } : {}) });

    // Setup: ingest into a data directory, then move it to the database.
    const dataDir = join(scratch, 'data');
    const t0 = performance.now();
    for (const c of corpora) refdesk(['add', join(corporaDir, c.name), '--name', c.name], dataDir);
    const ingestMs = Math.round(performance.now() - t0);
    const plans = (parseYaml(readFileSync(join(ROOT, 'config', 'default.yaml'), 'utf8')) as { rateLimits: { plans: Record<string, { requests: number }> } }).rateLimits.plans;
    const plan = Object.keys(plans).sort((a, b) => plans[b]!.requests - plans[a]!.requests)[0]!;
    const key = /rdk_[A-Za-z0-9_-]+/.exec(refdesk(['keys', 'create', '--name', 'bench-cluster', '--plan', plan], dataDir).stdout)?.[0];
    if (!key) fail('could not create an API key');
    const auth = { authorization: `Bearer ${key}` };
    const url = await postgres.createDatabase('bench');
    const moved = refdesk(['migrate-store', '--from', dataDir, '--to', url], dataDir, { ENCRYPTION_KEY: CLUSTER_ENCRYPTION_KEY });
    result.setup = { ingestMs, migrateStoreMs: Math.round(moved.ms), moved: moved.stdout.trim().split('\n').slice(1).map((l) => l.trim()), load: load() };
    log(`setup: ${JSON.stringify(result.setup)}`);

    const questions = headingQuestions(corporaDir, largest.name);
    let sample: { body: Buffer; type: string } | null = null;
    const perN: Record<string, unknown> = {};
    for (let n = 1; n <= MAX_NODES; n++) {
      const starts: number[] = [];
      while (live.length < n) {
        const s0 = performance.now();
        const node = await startNode(url, config, { REFDESK_SHOW_RUNTIME: '1' });
        live.push(node);
        started.push(node);
        starts.push(Math.round(performance.now() - s0));
      }
      const nodes = live.slice(0, n);
      const runtime = /running the compiled code/.test(nodes[0]!.stderr()) ? 'dist' : /through tsx/.test(nodes[0]!.stderr()) ? 'tsx' : 'unknown';
      // First answer on each new node: its segment comes from the database.
      const first: number[] = [];
      for (const node of nodes.slice(n - starts.length)) {
        const r = await timed(`${node.base}/api/v2/context?${new URLSearchParams({ libraryId, query: questions[0]!, type: 'txt' })}`, auth);
        if (r.status !== 200) fail(`first answer on a node: ${r.status} ${r.body.toString().slice(0, 300)}`);
        first.push(round(r.ms));
        sample ??= r;
      }
      const next = roundRobin(nodes, libraryId, questions);
      const seq: number[] = [];
      const cpu0 = nodesCpu(nodes);
      for (let i = 0; i < REQUESTS; i++) {
        const r = await timed(next(), auth);
        if (r.status !== 200) fail(`context: ${r.status} ${r.body.toString().slice(0, 300)}`);
        seq.push(r.ms);
      }
      const seqCpu = round((nodesCpu(nodes) - cpu0) / REQUESTS, 2);
      const loadSeq = load();
      const cpu1 = nodesCpu(nodes);
      const run16 = await hammer(16, SECONDS, next, auth);
      const cpu16 = round((nodesCpu(nodes) - cpu1) / Math.max(1, run16.requests), 2);
      const load16 = load();

      // Job throughput: JOBS small libraries at once over the nodes.
      const names = Array.from({ length: JOBS }, (_, i) => `n${n}-lib-${i}`);
      const j0 = performance.now();
      const jobIds = await Promise.all(names.map((name, i) => addLibrary(nodes[i % n]!, upstream, name)));
      for (const [i, id] of jobIds.entries()) {
        const state = await waitForJob(nodes[i % n]!, id, ['succeeded', 'failed'], 600_000);
        if (state !== 'succeeded') fail(`job of ${names[i]} ${state}`);
      }
      const jobsMs = performance.now() - j0;
      const rows = await jobRows(url, jobIds);
      const byNode: Record<string, number> = {};
      for (const r of rows) byNode[String(pidOfNodeId(r.claimed_by) ?? 'unknown')] = (byNode[String(pidOfNodeId(r.claimed_by) ?? 'unknown')] ?? 0) + 1;

      perN[n] = {
        runtime,
        startToListenMs: starts,
        firstAnswerMs: first,
        sequential: { latencyMs: stats(seq), nodesCpuMsPerRequest: seqCpu, load: loadSeq },
        concurrency16: { ...run16, nodesCpuMsPerRequest: cpu16, load: load16 },
        jobs: { count: JOBS, totalMs: Math.round(jobsMs), perSecond: round((JOBS / jobsMs) * 1000, 2), attempts: rows.map((r) => r.attempts).reduce((a, b) => a + b, 0), claimedByPid: byNode, load: load() },
        rssMb: nodes.map((x) => rssMb(x.pid)),
      };
      log(`N=${n}: ${JSON.stringify(perN[n])}`);
    }
    result.nodes = perN;

    // The bare Koa ceiling, once (one process, a real answer's bytes).
    const bare = await startBareKoa(sample!);
    let qi = 0;
    result.bareKoa = { ...(await hammer(16, SECONDS, () => `${bare.base}/api/v2/context?q=${qi++}`)), load: load() };
    await bare.close();

    // Failover: two nodes, a job held running, the holder killed.
    for (const extra of live.splice(2)) await extra.stop();
    const two = live.slice(0, 2);
    upstream.hold('failover');
    const job = await addLibrary(two[0]!, upstream, 'failover');
    let holder: ClusterNode | undefined;
    for (const deadline = Date.now() + 120_000; !holder; await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > deadline) fail('no node started the failover job');
      const [row] = await jobRows(url, [job]);
      const pid = pidOfNodeId(row?.claimed_by ?? null);
      if (row?.state === 'running' && (upstream.reads.get('failover') ?? 0) >= 1) holder = two.find((x) => x.pid === pid);
    }
    const survivor = two.find((x) => x !== holder)!;
    const killedAt = performance.now();
    await holder.kill9();
    live.splice(live.indexOf(holder), 1);
    upstream.release('failover');
    let claimedMs = -1;
    for (const deadline = Date.now() + LEASE_MS * 10 + 60_000; claimedMs < 0; await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > deadline) fail('no node took the failover job over');
      const [row] = await jobRows(url, [job]);
      if (row && row.attempts >= 2) claimedMs = performance.now() - killedAt;
    }
    const state = await waitForJob(survivor, job, ['succeeded', 'failed'], 600_000);
    result.failover = { leaseMs: LEASE_MS, takenOverAfterMs: Math.round(claimedMs), succeededAfterMs: Math.round(performance.now() - killedAt), state, load: load() };
    log(`failover: ${JSON.stringify(result.failover)}`);
    result.loadAfter = load();
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } finally {
    for (const node of live) await node.stop().catch(() => undefined);
    for (const node of started) rmSync(node.dataDir, { recursive: true, force: true });
    await upstream.stop();
    await postgres?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`bench:cluster: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
