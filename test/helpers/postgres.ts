/**
 * A throwaway PostgreSQL cluster of Debian's server (`apt-get install postgresql`, done by
 * .ci/run) for the PostgreSQL store's tests: initdb into a temporary directory, trust auth on a
 * private socket directory and 127.0.0.1 on a free port, fsync off and small buffers (a test
 * cluster, never data anyone keeps). As root (here and in CI) the server runs as Debian's
 * `postgres` system user (PostgreSQL refuses to run as root); otherwise as the current user.
 *
 *   const skip = postgresSkipReason();          // a clear message when no server is installed
 *   describe('...', { skip }, () => {
 *     let pg: TestPostgres;
 *     before(async () => (pg = await startPostgres()));
 *     after(() => pg?.stop());
 *     ... new pg.Pool({ connectionString: pg.url }) ...
 *   });
 *
 * POSTGRES_BINDIR overrides where the server binaries are found.
 *
 * initdb runs once per machine and server: its result is kept as a template beside the
 * clusters (os.tmpdir()/refdesk-pg-template-<key>, made in a folder of its own and renamed into
 * place, so concurrent test files never see half of one), and each cluster starts as a copy of
 * it (`cp -a`, which keeps the owner and modes PostgreSQL checks). A copy costs a tenth of
 * initdb's 1.5 s of CPU, which the suite paid in each of its twenty-odd PostgreSQL files.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth: no password). */
  url: string;
  port: number;
  /** The data directory's parent (the cluster, its socket directory and its log live here). */
  dir: string;
  /** Makes a fresh database on this cluster and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (immediate mode) and removes its directory; safe to call twice. */
  stop(): Promise<void>;
  /**
   * Stops the server but keeps the cluster, to `restart()` later (an outage). Fast mode: every
   * connection is cut, and what was committed survives (the test cluster runs without
   * synchronous commit, so an immediate stop could lose the last commits).
   */
  halt(): Promise<void>;
  /** Starts a halted cluster again on the same port. */
  restart(): Promise<void>;
}

/** The directory holding `initdb` and `pg_ctl`, or null when no PostgreSQL server is installed. */
export function findPostgresBindir(): string | null {
  const candidates: string[] = [];
  if (process.env.POSTGRES_BINDIR) candidates.push(process.env.POSTGRES_BINDIR);
  try {
    // Debian's pg_config (libpq-dev / postgresql-common) names the client's bindir, which holds the server for the same major.
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // no pg_config: glob below
  }
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    // Newest major first.
    const majors = readdirSync(root).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a));
    for (const m of majors) candidates.push(join(root, m, 'bin'));
  }
  return candidates.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl'))) ?? null;
}

/** Why the PostgreSQL tests cannot run here, or false when they can (for `describe(..., { skip })`). */
export function postgresSkipReason(): string | false {
  if (findPostgresBindir()) return false;
  return 'no PostgreSQL server found (install Debian\'s postgresql, as .ci/run does, or set POSTGRES_BINDIR)';
}

/** Resolves a free TCP port of 127.0.0.1 (free now; the server binds it a moment later). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface RunAs {
  /** The command prefix that runs a program as the cluster's owner. */
  prefix: string[];
  uid: number | null;
  gid: number | null;
}

function runAs(): RunAs {
  if (process.getuid?.() !== 0) return { prefix: [], uid: null, gid: null };
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  let uid: number;
  let gid: number;
  try {
    uid = id('-u');
    gid = id('-g');
  } catch {
    throw new Error('running as root, but there is no "postgres" system user to run the test cluster as (Debian\'s postgresql package creates it)');
  }
  return { prefix: ['runuser', '-u', 'postgres', '--'], uid, gid };
}

const clusters = new Set<{ dir: string; pgCtl: string; data: string; as: RunAs }>();

function run(as: RunAs, program: string, args: string[], what: string): void {
  const [cmd, ...rest] = [...as.prefix, program, ...args];
  const r = spawnSync(cmd, rest, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${what} failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr || r.stdout || '').trim().slice(-2000)}`);
}

function stopCluster(c: { dir: string; pgCtl: string; data: string; as: RunAs }): void {
  if (!clusters.delete(c)) return;
  const [cmd, ...rest] = [...c.as.prefix, c.pgCtl, 'stop', '-D', c.data, '-m', 'immediate', '-w', '-t', '30'];
  spawnSync(cmd, rest, { stdio: 'ignore', timeout: 40_000 });
  rmSync(c.dir, { recursive: true, force: true });
}

function stopAllClusters(): void {
  for (const c of [...clusters]) stopCluster(c);
}
process.on('exit', stopAllClusters);
// A test run stopped by a signal (Ctrl-C, a runner's timeout) does not run 'exit' handlers: stop
// the clusters, then let the signal do what it would have done (a `once` listener is gone by
// then, so re-raising it reaches the default action unless someone else handles it).
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    stopAllClusters();
    process.kill(process.pid, signal);
  });
}

const INITDB_ARGS = ['-U', 'postgres', '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C'];

/** The data directory initdb made for this server and owner, made now if it is not there yet. */
function templateData(bindir: string, as: RunAs): string {
  const key = createHash('sha256').update(JSON.stringify([bindir, as.uid, INITDB_ARGS])).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `refdesk-pg-template-${key}`);
  const data = join(dir, 'data');
  if (existsSync(join(dir, 'ready'))) return data;
  const tmp = mkdtempSync(join(tmpdir(), 'refdesk-pg-template-new-'));
  try {
    if (as.uid !== null) chownSync(tmp, as.uid, as.gid!);
    run(as, join(bindir, 'initdb'), ['-D', join(tmp, 'data'), ...INITDB_ARGS], 'initdb');
    writeFileSync(join(tmp, 'ready'), '');
    try {
      renameSync(tmp, dir);
    } catch (e) {
      // Another test file put its template in place first: use that one.
      if (!existsSync(join(dir, 'ready'))) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return data;
}

/** Starts a throwaway cluster; see the module comment. */
export async function startPostgres(): Promise<TestPostgres> {
  const bindir = findPostgresBindir();
  if (!bindir) throw new Error(postgresSkipReason() as string);
  const as = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-pg-'));
  const data = join(dir, 'data');
  const sockets = join(dir, 'sock');
  mkdirSync(sockets);
  if (as.uid !== null) {
    for (const d of [dir, sockets]) chownSync(d, as.uid, as.gid!);
  }
  const c = { dir, pgCtl: join(bindir, 'pg_ctl'), data, as };
  clusters.add(c);
  try {
    const copy = spawnSync('cp', ['-a', templateData(bindir, as), data], { encoding: 'utf8', timeout: 60_000 });
    if (copy.status !== 0) throw new Error(`copying the initdb template failed: ${(copy.stderr || copy.error?.message || '').trim()}`);
    const port = await freePort();
    const conf = [
      `listen_addresses = '127.0.0.1'`,
      `port = ${port}`,
      `unix_socket_directories = '${sockets}'`,
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      'shared_buffers = 16MB',
      'max_connections = 200',
      'max_wal_senders = 0',
      'wal_level = minimal',
      'log_min_messages = warning',
    ].join('\n');
    // initdb made postgresql.conf; postgresql.auto.conf is read after it and may be written by the owner.
    writeFileSync(join(data, 'postgresql.auto.conf'), conf + '\n');
    if (as.uid !== null) chownSync(join(data, 'postgresql.auto.conf'), as.uid, as.gid!);
    run(as, c.pgCtl, ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-s'], 'pg_ctl start');
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    return {
      url,
      port,
      dir,
      async createDatabase(name: string) {
        if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`createDatabase: "${name}" is not a plain lower-case identifier`);
        const pg = (await import('pg')).default;
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(`CREATE DATABASE ${name}`);
        } finally {
          await client.end();
        }
        return `postgres://postgres@127.0.0.1:${port}/${name}`;
      },
      async stop() {
        stopCluster(c);
      },
      async halt() {
        run(as, c.pgCtl, ['stop', '-D', data, '-m', 'fast', '-w', '-t', '30', '-s'], 'pg_ctl stop');
      },
      async restart() {
        run(as, c.pgCtl, ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-s'], 'pg_ctl start');
      },
    };
  } catch (e) {
    stopCluster(c);
    throw e;
  }
}
