/**
 * deploy/compose.cluster.yaml (two Refdesk nodes, PostgreSQL with pgvector, nginx) without a
 * container engine (none runs here or in CI): its shape is read with the project's YAML library
 * and checked (services, images, the env file's variables, dependencies, health and readiness
 * checks, the load balancer's upstreams and trusted address), and the node's health-check
 * command itself is run against a real Refdesk server.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { ROOT, makeDataDir, removeDataDir, startServer, stopAll, httpGet } from './refdesk-process.ts';
import { parseDatabaseUrl } from '../../plugins/store-postgres/pool.ts';

const DEPLOY = join(ROOT, 'deploy');
const NODES = ['refdesk-1', 'refdesk-2'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const compose: Any = parse(readFileSync(join(DEPLOY, 'compose.cluster.yaml'), 'utf8'), { merge: true });
const services: Record<string, Any> = compose.services;

function envFile(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

describe('deploy/compose.cluster.yaml', () => {
  let dataDir: string | undefined;
  after(async () => {
    await stopAll();
    removeDataDir(dataDir);
  });

  test('PostgreSQL with pgvector, a one-shot schema migration, two nodes of the Dockerfile, a load balancer', () => {
    assert.deepEqual(Object.keys(services).sort(), ['lb', 'migrate', 'postgres', ...NODES].sort());
    assert.match(services.postgres.image, /^pgvector\/pgvector:pg\d+$/);
    assert.match(services.postgres.healthcheck.test.join(' '), /pg_isready/);
    assert.ok(services.postgres.volumes.some((v: string) => v.endsWith(':/var/lib/postgresql/data')), 'the database is on a volume');

    assert.deepEqual(services.migrate.command, ['node', 'bin/refdesk.js', 'db', 'migrate']);
    assert.equal(services.migrate.depends_on.postgres.condition, 'service_healthy');

    const volumes = new Set<string>();
    for (const name of NODES) {
      const node = services[name];
      const context = resolve(DEPLOY, node.build.context);
      assert.equal(context, resolve(ROOT), `${name} is built from the checkout`);
      assert.ok(existsSync(join(context, node.build.dockerfile)), `${name}: its Dockerfile exists`);
      assert.equal(node.env_file, 'cluster.env');
      assert.equal(node.depends_on.migrate.condition, 'service_completed_successfully');
      assert.match(node.healthcheck.test.join(' '), /\/api\/ready/, `${name} is checked for readiness (database and schema)`);
      assert.equal(node.restart, 'unless-stopped');
      assert.equal(node.volumes.length, 1);
      volumes.add(node.volumes[0].split(':')[0]);
      assert.ok(!node.ports, `${name} is reached through the load balancer only`);
    }
    assert.equal(volumes.size, NODES.length, 'each node has its own cache volume');

    const lb = services.lb;
    assert.match(lb.image, /^nginx:/);
    assert.deepEqual(lb.ports, ['8080:80']);
    for (const name of NODES) assert.equal(lb.depends_on[name].condition, 'service_healthy');
    assert.match(lb.healthcheck.test.join(' '), /\/ping/);
    const conf = lb.volumes[0].split(':')[0];
    const nginx = readFileSync(resolve(DEPLOY, conf), 'utf8');
    for (const name of NODES) assert.match(nginx, new RegExp(`server ${name}:3000 `));
    assert.match(nginx, /proxy_pass http:\/\/refdesk;/);
    assert.match(nginx, /X-Forwarded-For \$proxy_add_x_forwarded_for/);

    // The nodes believe X-Forwarded-For from the load balancer's fixed address only, inside the network's subnet.
    const lbAddress = lb.networks.cluster.ipv4_address;
    const subnet = compose.networks.cluster.ipam.config[0].subnet as string;
    assert.equal(subnet.split('.').slice(0, 3).join('.'), lbAddress.split('.').slice(0, 3).join('.'));
    for (const name of NODES) assert.equal(services[name].environment.TRUSTED_PROXIES, lbAddress);
  });

  test('the env file gives every node the same DATABASE_URL (to the postgres service) and ENCRYPTION_KEY', () => {
    const env = envFile(readFileSync(join(DEPLOY, 'cluster.env.example'), 'utf8'));
    for (const k of ['DATABASE_URL', 'ENCRYPTION_KEY', 'LICENSE_KEY', 'POSTGRES_USER', 'POSTGRES_PASSWORD', 'POSTGRES_DB']) assert.ok(env.has(k), k);
    const url = new URL(env.get('DATABASE_URL')!);
    assert.equal(parseDatabaseUrl(env.get('DATABASE_URL')).where, 'postgres:5432/refdesk');
    assert.equal(url.hostname, 'postgres', 'the database host is the compose service');
    assert.equal(url.username, env.get('POSTGRES_USER'));
    assert.equal(url.password, env.get('POSTGRES_PASSWORD'));
    assert.equal(url.pathname.slice(1), env.get('POSTGRES_DB'));
    // Every service reading the file reads the same one: nothing per node.
    for (const name of [...NODES, 'migrate', 'postgres']) assert.equal(services[name].env_file, 'cluster.env');
    for (const name of NODES) {
      for (const k of ['DATABASE_URL', 'ENCRYPTION_KEY']) assert.ok(!(k in (services[name].environment ?? {})), `${name} does not override ${k}`);
    }
    const ignored = readFileSync(join(ROOT, '.gitignore'), 'utf8');
    assert.match(ignored, /^deploy\/cluster\.env$/m, 'the filled-in env file is not committed');
  });

  test("the node's health check passes against a running server and fails against a closed port", async () => {
    dataDir = makeDataDir();
    const server = await startServer(dataDir, 120_000);
    const [, ...argv] = services['refdesk-1'].healthcheck.test as string[];
    const run = (port: number) => spawnSync(argv[0]!, argv.slice(1), { env: { ...process.env, PORT: String(port) }, timeout: 30_000 }).status;
    assert.equal((await httpGet(`${server.base}/api/ready`)).status, 200);
    assert.equal(run(server.port), 0);
    assert.equal((await httpGet(`${server.base}/ping`)).status, 200, 'what the load balancer probes through nginx');
    await server.stop();
    assert.equal(run(server.port), 1);
  });

  // Docker's own reading of the file (services, anchors, depends_on conditions, networks), where a
  // compose command is installed (Debian's docker-compose here; not in CI, which has no Docker).
  const composeCommand = ['docker-compose', 'docker compose'].find((c) => spawnSync('sh', ['-c', `${c} version`], { stdio: 'ignore' }).status === 0);
  test('docker compose accepts the file with the example env file', { skip: composeCommand ? false : 'no docker compose command installed' }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'refdesk-compose-'));
    try {
      cpSync(DEPLOY, join(dir, 'deploy'), { recursive: true });
      copyFileSync(join(dir, 'deploy', 'cluster.env.example'), join(dir, 'deploy', 'cluster.env'));
      const r = spawnSync('sh', ['-c', `${composeCommand} -f deploy/compose.cluster.yaml config`], { cwd: dir, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const config = parse(r.stdout);
      assert.deepEqual(Object.keys(config.services).sort(), ['lb', 'migrate', 'postgres', 'refdesk-1', 'refdesk-2']);
      assert.equal(config.services['refdesk-2'].depends_on.migrate.condition, 'service_completed_successfully');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
