/**
 * The deployment of deploy/compose.cluster.yaml without a container engine (none runs here or in
 * CI): what its services run, run for real on 127.0.0.1 —
 *
 * - the `migrate` service's command (`refdesk db migrate`) on a throwaway PostgreSQL (Debian's);
 * - two `refdesk serve` nodes with the nodes' environment from the compose file (TRUSTED_PROXIES
 *   naming the load balancer, LOG_FORMAT json, the same DATABASE_URL and ENCRYPTION_KEY);
 * - Debian's nginx with deploy/nginx.cluster.conf itself, only its upstream host names and its
 *   listen port rewritten to the test's addresses (and, outside that file, a response header
 *   telling which node answered).
 *
 * Checked through the load balancer: both nodes answer; a library added through it is served by
 * both; the rate limit is per client (the address nginx forwards is believed, and one client's
 * requests spread over both nodes are counted together); after `kill -9` of one node every
 * request is still answered (nginx retries on the other node).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT, makeDataDir, removeDataDir, runRefdesk, stopAll, stopProcess } from './refdesk-process.ts';
import { freePort, postgresSkipReason, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { CLUSTER_ENCRYPTION_KEY, DocsUpstream, addLibrary, clusterConfig, createKey, startNode, waitForJob, type ClusterNode } from './cluster-nodes.ts';

const DEPLOY = join(ROOT, 'deploy');
const ANON_LIMIT = 20;

function nginxBinary(): string | null {
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx']) if (existsSync(p)) return p;
  const which = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : null;
}

function skipReason(): string | false {
  const pg = postgresSkipReason();
  if (pg) return pg;
  return nginxBinary() ? false : 'nginx is not installed (.ci/run installs Debian\'s nginx-light)';
}

/** The nodes' environment as the compose file gives it (x-refdesk-node), for the keys a node reads. */
function composeNodeEnvironment(): Record<string, string> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const compose: any = parse(readFileSync(join(DEPLOY, 'compose.cluster.yaml'), 'utf8'), { merge: true });
  const env = compose.services['refdesk-1'].environment as Record<string, string>;
  return { LOG_FORMAT: String(env.LOG_FORMAT) };
}

/** deploy/nginx.cluster.conf with the test's addresses, inside a main config of the test's own. */
function nginxConfig(dir: string, listenPort: number, nodePorts: number[]): string {
  let site = readFileSync(join(DEPLOY, 'nginx.cluster.conf'), 'utf8');
  for (const [i, port] of nodePorts.entries()) {
    const before = site;
    site = site.replace(`server refdesk-${i + 1}:3000`, `server 127.0.0.1:${port}`);
    assert.notEqual(site, before, `deploy/nginx.cluster.conf names refdesk-${i + 1}:3000 as an upstream`);
  }
  const listening = site.replace(/listen 80;/, `listen 127.0.0.1:${listenPort};`);
  assert.notEqual(listening, site, 'deploy/nginx.cluster.conf listens on port 80');
  writeFileSync(join(dir, 'site.conf'), listening);
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub), { recursive: true });
  const root = process.getuid?.() === 0;
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      root ? 'user root;' : '',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      'events { worker_connections 256; }',
      'http {',
      '  access_log off;',
      `  client_body_temp_path ${join(dir, 'body')};`,
      `  proxy_temp_path ${join(dir, 'proxy')};`,
      `  fastcgi_temp_path ${join(dir, 'fastcgi')};`,
      `  uwsgi_temp_path ${join(dir, 'uwsgi')};`,
      `  scgi_temp_path ${join(dir, 'scgi')};`,
      '  # The test\'s own: which node answered (the site file sets no add_header, so it inherits this).',
      '  add_header X-Test-Upstream $upstream_addr always;',
      `  include ${join(dir, 'site.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  return join(dir, 'nginx.conf');
}

async function startNginx(conf: string, dir: string, port: number): Promise<ChildProcess> {
  const bin = nginxBinary()!;
  const test = spawnSync(bin, ['-t', '-c', conf, '-p', dir], { encoding: 'utf8' });
  assert.equal(test.status, 0, `nginx -t: ${test.stderr}`);
  const child = spawn(bin, ['-c', conf, '-p', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  for (const deadline = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 100))) {
    const ok = await fetch(`http://127.0.0.1:${port}/ping`).then((r) => (r.arrayBuffer(), true), () => false);
    if (ok) return child;
    if (child.exitCode !== null) throw new Error(`nginx exited: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
    if (Date.now() > deadline) throw new Error('nginx did not answer within 15 s');
  }
}

describe('deploy/: two nodes on PostgreSQL behind nginx with the deployment\'s own config', { timeout: 600_000, skip: skipReason() }, () => {
  let postgres: TestPostgres;
  let upstream: DocsUpstream;
  let scratch: string;
  let nginx: ChildProcess | undefined;
  let lb = '';
  let key: Record<string, string> = {};
  const nodes: ClusterNode[] = [];

  before(async () => {
    postgres = await startPostgres();
    upstream = new DocsUpstream();
    await upstream.start();
    scratch = makeDataDir('refdesk-nginx-');
    const databaseUrl = await postgres.createDatabase('behind_nginx');
    const config = clusterConfig(scratch, { anonymousRequests: ANON_LIMIT, windowSeconds: 600 });
    // The migrate service: `node bin/refdesk.js db migrate` on the cluster's environment.
    const migrate = await runRefdesk(['db', 'migrate'], scratch, 120_000, { DATABASE_URL: databaseUrl, ENCRYPTION_KEY: CLUSTER_ENCRYPTION_KEY, REFDESK_CONFIG: config });
    assert.equal(migrate.code, 0, `refdesk db migrate: ${migrate.stderr}`);
    const env = { ...composeNodeEnvironment(), TRUSTED_PROXIES: '127.0.0.1' };
    for (let i = 0; i < 2; i++) nodes.push(await startNode(databaseUrl, config, env));
    const port = await freePort();
    const dir = join(scratch, 'nginx');
    mkdirSync(dir, { recursive: true });
    nginx = await startNginx(nginxConfig(dir, port, nodes.map((n) => n.port)), dir, port);
    lb = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    if (nginx && nginx.exitCode === null) await stopProcess(nginx);
    await stopAll();
    await upstream?.stop();
    await postgres?.stop();
    for (const n of nodes) removeDataDir(n.dataDir);
    removeDataDir(scratch);
  });

  async function through(path: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; node: string }> {
    const res = await fetch(`${lb}${path}`, { headers, signal: AbortSignal.timeout(30_000) });
    return { status: res.status, text: await res.text(), node: res.headers.get('x-test-upstream') ?? '' };
  }

  test('both nodes answer through the load balancer, and are ready', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const r = await through('/api/ready');
      assert.equal(r.status, 200, r.text);
      assert.equal(JSON.parse(r.text).store.database, 'ok');
      seen.add(r.node);
    }
    assert.deepEqual([...seen].sort(), nodes.map((n) => `127.0.0.1:${n.port}`).sort());
  });

  test('the local CLI token is refused through the proxy (a forwarded request is not local)', async () => {
    const r = await through('/api/admin/keys', nodes[0]!.adminAuth);
    assert.equal(r.status, 401, r.text);
  });

  test('a library added on one node is served through the load balancer by both, with a key', async () => {
    const job = await addLibrary(nodes[0]!, upstream, 'behind');
    assert.equal(await waitForJob(nodes[0]!, job, ['succeeded', 'failed'], 300_000), 'succeeded');
    key = { authorization: `Bearer ${await createKey(nodes[1]!, 'behind-nginx')}` };
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const r = await through(`/api/v2/context?${new URLSearchParams({ libraryId: '/docs/behind', query: 'topic 3', type: 'txt' })}`, key);
      assert.equal(r.status, 200, r.text);
      assert.match(r.text, /behind\.topic3/);
      seen.add(r.node);
    }
    assert.equal(seen.size, 2, `answered by ${[...seen].join(', ')}`);
  });

  test('the rate limit counts the forwarded client, across both nodes', async () => {
    let ok = 0;
    let limited = 0;
    const upstreams = new Set<string>();
    for (let i = 0; i < ANON_LIMIT * 2; i++) {
      const r = await through('/api/v2/libs/search?libraryName=behind&query=topic', { 'x-forwarded-for': '198.51.100.7' });
      upstreams.add(r.node);
      if (r.status === 429) limited++;
      else if (r.status === 200) ok++;
      else assert.fail(`${r.status} ${r.text}`);
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    assert.equal(upstreams.size, 2, 'the client\'s requests went to both nodes');
    assert.ok(limited > 0, `no request was limited (${ok} answered)`);
    assert.ok(ok < ANON_LIMIT * 1.5, `${ok} requests answered for a limit of ${ANON_LIMIT}`);
    // Another client behind the same proxy has its own count.
    const other = await through('/api/v2/libs/search?libraryName=behind&query=topic', { 'x-forwarded-for': '198.51.100.8' });
    assert.equal(other.status, 200, other.text);
  });

  test('after kill -9 of one node, every request is still answered', async () => {
    await nodes[0]!.kill9();
    const survivor = `127.0.0.1:${nodes[1]!.port}`;
    for (let i = 0; i < 12; i++) {
      const r = await through(`/api/v2/context?${new URLSearchParams({ libraryId: '/docs/behind', query: `topic ${i % 6}`, type: 'txt' })}`, key);
      assert.equal(r.status, 200, r.text);
      assert.match(r.text, new RegExp(`behind\\.topic${i % 6}`));
      assert.ok(r.node.endsWith(survivor), `answered by ${r.node}`);
    }
    const [exit] = (await Promise.race([once(nginx!, 'exit'), new Promise((r) => setTimeout(() => r(['alive']), 100))])) as [unknown];
    assert.equal(exit, 'alive', 'nginx still runs');
  });
});
