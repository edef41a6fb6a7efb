/**
 * The throwaway-cluster harness itself (test/helpers/postgres.ts): the server runs as an
 * unprivileged user with the test settings, `stop()` removes everything, and a process that
 * exits without calling `stop()` still leaves no server or directory behind.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { postgresSkipReason, startPostgres } from '../../helpers/postgres.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

async function refused(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return false;
  } catch (e) {
    return (e as { code?: string }).code === 'ECONNREFUSED';
  }
}

describe('test/helpers/postgres.ts', { skip: postgresSkipReason() }, () => {
  test('the server runs as an unprivileged user with test settings; stop() removes the cluster', async () => {
    const cluster = await startPostgres();
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      const row = (await client.query(`SELECT current_setting('data_directory') AS data, current_setting('fsync') AS fsync, current_setting('listen_addresses') AS listen`)).rows[0];
      assert.ok(row.data.startsWith(cluster.dir), `${row.data} is under ${cluster.dir}`);
      assert.deepEqual([row.fsync, row.listen], ['off', '127.0.0.1']);
      if (process.getuid?.() === 0) assert.notEqual(statSync(row.data).uid, 0, 'the cluster does not belong to root');
    } finally {
      await client.end();
    }
    await cluster.stop();
    assert.ok(!existsSync(cluster.dir), 'the directory is gone');
    assert.ok(await refused(cluster.url), 'the server is stopped');
    await cluster.stop(); // twice is fine
  });

  test('a process that exits without stop() leaves nothing behind', async () => {
    // A child starts a cluster, prints where it is, and exits without stopping it.
    const script = `import { startPostgres } from './test/helpers/postgres.ts';
      const c = await startPostgres();
      process.stdout.write(JSON.stringify({ url: c.url, dir: c.dir }));
      process.exit(0);`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 90_000 });
    assert.equal(r.status, 0, r.stderr);
    const { url, dir } = JSON.parse(r.stdout) as { url: string; dir: string };
    assert.ok(!existsSync(dir), `${dir} removed at exit`);
    assert.ok(await refused(url), 'the server was stopped at exit');
  });

  test('a process stopped by SIGTERM leaves nothing behind, and still dies of the signal', async () => {
    const script = `import { startPostgres } from './test/helpers/postgres.ts';
      const c = await startPostgres();
      process.stdout.write(JSON.stringify({ url: c.url, dir: c.dir }) + '\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    const where = await new Promise<{ url: string; dir: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no cluster within 90 s: ${err}`)), 90_000);
      child.stdout.on('data', (c) => {
        out += c;
        if (out.includes('\n')) {
          clearTimeout(timer);
          resolve(JSON.parse(out));
        }
      });
      child.on('exit', () => reject(new Error(`child exited early: ${err}`)));
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    child.kill('SIGTERM');
    assert.equal(await exited, 'SIGTERM');
    assert.ok(!existsSync(where.dir), `${where.dir} removed`);
    assert.ok(await refused(where.url), 'the server was stopped');
  });
});
