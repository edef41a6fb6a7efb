/**
 * Several `refdesk serve` processes on one PostgreSQL (issue 24), for the multi-process tests
 * (test/e2e/cluster.test.ts) and `npm run bench:cluster` (scripts/bench-cluster.ts):
 *
 * - `clusterConfig`: the default distribution with plugin paths made absolute, 127.0.0.1 allowed
 *   as an upstream (the docs server below), and the PostgreSQL store's lease and heartbeat and
 *   the anonymous rate limit set by the caller;
 * - `startNode`: a node (its own DATA_DIR: only its local cache lives there) on DATABASE_URL and
 *   ENCRYPTION_KEY; `kill9` kills it the hard way;
 * - `DocsUpstream`: an HTTP server on 127.0.0.1 serving one llms-full.txt per library (any node can
 *   read it, unlike an upload, which lives on the disk of the node that received it), counting the
 *   reads of each and able to hold a library's answer until released (a job kept running);
 * - `addLibrary`, `waitForJob`, `jobRows`: queue through a node's admin API, follow, and read the
 *   job rows themselves (who claimed a job, how many attempts).
 */
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve, dirname } from 'node:path';
import pg from 'pg';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { ROOT, makeDataDir, startServer, type RefdeskServer } from './refdesk-process.ts';

export const CLUSTER_ENCRYPTION_KEY = randomBytes(32).toString('base64');

export interface ClusterConfigOptions {
  /** The PostgreSQL store's options (leaseMs, heartbeatMs, pollMs...). */
  store?: Record<string, number>;
  /** Requests per window of an anonymous client. */
  anonymousRequests?: number;
  windowSeconds?: number;
  /** Requests per window of every key plan (a benchmark sets it out of the way: the limit is shared by the nodes). */
  planRequests?: number;
  /** The config to start from: config/default.yaml (sources through tsx), or dist/config/default.yaml for the compiled code. */
  base?: string;
}

/** Writes the config file the nodes share into `dir`; returns its path. */
export function clusterConfig(dir: string, options: ClusterConfigOptions = {}): string {
  const base = options.base ?? join(ROOT, 'config', 'default.yaml');
  const cfg = parseYaml(readFileSync(base, 'utf8')) as {
    plugins: Array<{ use: string; options?: Record<string, Record<string, unknown>> }>;
    network: { allowHosts: string[] };
    rateLimits: { windowSeconds: number; anonymous: { requests: number }; plans: Record<string, { requests: number }> };
    slots: { store: string };
  };
  for (const p of cfg.plugins) if (p.use.startsWith('.')) p.use = resolve(dirname(base), p.use);
  let pgPlugin = cfg.plugins.find((p) => p.use.includes('store-postgres'));
  if (!pgPlugin) {
    pgPlugin = { use: join(ROOT, 'plugins', 'store-postgres', 'index.ts') };
    cfg.plugins.unshift(pgPlugin);
  }
  if (options.store) pgPlugin.options = { ...pgPlugin.options, postgres: { ...pgPlugin.options?.postgres, ...options.store } };
  // A config file of its own names its store (DATABASE_URL picks postgres only for the default config).
  cfg.slots.store = 'postgres';
  cfg.network.allowHosts = ['127.0.0.1'];
  if (options.anonymousRequests !== undefined) cfg.rateLimits.anonymous.requests = options.anonymousRequests;
  if (options.planRequests !== undefined) for (const plan of Object.values(cfg.rateLimits.plans)) plan.requests = options.planRequests;
  if (options.windowSeconds !== undefined) cfg.rateLimits.windowSeconds = options.windowSeconds;
  const file = join(dir, 'cluster.yaml');
  writeFileSync(file, toYaml(cfg));
  return file;
}

export interface ClusterNode extends RefdeskServer {
  dataDir: string;
  /** SIGKILL, then wait for the exit. */
  kill9(): Promise<void>;
}

/** A `refdesk serve` on the database, with a data directory of its own. */
export async function startNode(databaseUrl: string, config: string, extraEnv: Record<string, string> = {}): Promise<ClusterNode> {
  const dataDir = makeDataDir('refdesk-node-');
  const server = await startServer(dataDir, 180_000, { DATABASE_URL: databaseUrl, ENCRYPTION_KEY: CLUSTER_ENCRYPTION_KEY, REFDESK_CONFIG: config, ...extraEnv });
  return Object.assign(server, {
    dataDir,
    async kill9() {
      if (server.child.exitCode !== null || server.child.signalCode !== null) return;
      const exited = once(server.child, 'exit');
      server.child.kill('SIGKILL');
      await exited;
    },
  });
}

/** The library's llms-full.txt: a few sections whose words say which library and which generation it is. */
export function libraryText(name: string, generation: number): string {
  const sections = Array.from(
    { length: 6 },
    (_, i) => `## ${name} topic ${i}\n\nThe ${name} library, generation g${generation}w, explains topic ${i}: call \`${name}.topic${i}()\` to use it.\n\n\`\`\`js\n${name}.topic${i}({ generation: ${generation} });\n\`\`\`\n`,
  );
  return `# ${name}\n\n> Documentation of ${name}.\n\n${sections.join('\n')}`;
}

/** Libraries' llms-full.txt on 127.0.0.1, read counts per library, and answers that can be held back. */
export class DocsUpstream {
  readonly reads = new Map<string, number>();
  private readonly generation = new Map<string, number>();
  private readonly held = new Map<string, { waiting: Array<() => void> }>();
  private server: Server | null = null;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const m = /^\/([a-z0-9-]+)\/llms-full\.txt$/.exec(req.url ?? '');
      if (!m) {
        res.writeHead(404).end();
        return;
      }
      const name = m[1]!;
      this.reads.set(name, (this.reads.get(name) ?? 0) + 1);
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(libraryText(name, this.generation.get(name) ?? 1));
      };
      const hold = this.held.get(name);
      if (hold) hold.waiting.push(answer);
      else answer();
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  url(name: string): string {
    return `${this.base}/${name}/llms-full.txt`;
  }

  /** The next answers for `name` carry this generation's words. */
  setGeneration(name: string, generation: number): void {
    this.generation.set(name, generation);
  }

  /** Reads of `name` wait until `release(name)`. */
  hold(name: string): void {
    this.held.set(name, { waiting: [] });
  }

  release(name: string): void {
    const h = this.held.get(name);
    this.held.delete(name);
    for (const answer of h?.waiting ?? []) answer();
  }

  async stop(): Promise<void> {
    for (const name of [...this.held.keys()]) this.release(name);
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server!.close(() => r()));
  }
}

/** A new API key (of the default plan) made through a node's admin API. */
export async function createKey(node: ClusterNode, name: string): Promise<string> {
  const res = await fetch(`${node.base}/api/admin/keys`, { method: 'POST', headers: { ...node.adminAuth, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
  const body = (await res.json()) as { key?: string };
  if (res.status !== 201 || !body.key) throw new Error(`key through ${node.base}: ${res.status} ${JSON.stringify(body)}`);
  return body.key;
}

/** Queues an llms.txt library through a node's admin API; the job id. */
export async function addLibrary(node: ClusterNode, upstream: DocsUpstream, name: string): Promise<string> {
  const res = await fetch(`${node.base}/api/admin/add`, {
    method: 'POST',
    headers: { ...node.adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'llmstxt', spec: { url: upstream.url(name) }, id: `/docs/${name}` }),
  });
  const body = (await res.json()) as { jobId?: string; message?: string };
  if (res.status !== 202 || !body.jobId) throw new Error(`add ${name} through ${node.base}: ${res.status} ${JSON.stringify(body)}`);
  return body.jobId;
}

export interface JobRow {
  id: string;
  library_id: string;
  state: string;
  claimed_by: string | null;
  attempts: number;
}

/** The job rows themselves (who holds each, how many attempts). */
export async function jobRows(databaseUrl: string, ids?: string[]): Promise<JobRow[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const sql = 'SELECT id, library_id, state, claimed_by, attempts FROM jobs' + (ids ? ' WHERE id = ANY($1)' : '') + ' ORDER BY created_at';
    return (await client.query<JobRow>(sql, ids ? [ids] : [])).rows;
  } finally {
    await client.end();
  }
}

/** The pid in a node id (`host:pid:random`, plugins/store-postgres/database.ts). */
export function pidOfNodeId(nodeId: string | null): number | null {
  const m = /:(\d+):[0-9a-f]+$/.exec(nodeId ?? '');
  return m ? Number(m[1]) : null;
}

/** Polls the job through a node until it is in one of `states`; its state. */
export async function waitForJob(node: ClusterNode, jobId: string, states: string[], timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let state = '';
  for (;;) {
    const res = await fetch(`${node.base}/api/admin/jobs/${jobId}`, { headers: node.adminAuth }).catch(() => null);
    if (res?.ok) state = ((await res.json()) as { job: { state: string } }).job.state;
    if (states.includes(state)) return state;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${state || 'unknown'} after ${timeoutMs} ms (waiting for ${states.join('|')})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
