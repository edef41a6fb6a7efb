/**
 * `refdesk add` of a local folder on the PostgreSQL store (issue 24), with real processes on a
 * throwaway Debian PostgreSQL: with a `refdesk serve` node running, the job is the cluster's (the
 * node claims it) and the command follows it through the store to its end, printing the same
 * summary line as when it runs the job itself; with no node running, the command runs the job
 * itself once no node claimed it within leaseMs. The folder goes in as an upload kept in the
 * database, so the node (another data directory, as on another machine) reads it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { writeTestConfig } from '../helpers/test-kernel.ts';
import { httpGet, makeDataDir, removeDataDir, runRefdesk, startServer, stopAll } from './refdesk-process.ts';

const LEASE = { leaseMs: 4000, heartbeatMs: 300, pollMs: 200 };
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const SUMMARY = (id: string) => new RegExp(`^${id.replace(/\//g, '\\/')}: 2 files, [1-9]\\d* snippets, [1-9]\\d* tokens \\(\\w+\\)$`, 'm');

describe('refdesk add on the PostgreSQL store', { skip: postgresSkipReason() }, () => {
  let cluster: TestPostgres;
  let root: string;
  let env: Record<string, string>;
  let db: pg.Pool;

  before(async () => {
    cluster = await startPostgres();
    root = makeDataDir('refdesk-cli-pg-');
    const url = await cluster.createDatabase('cli_add');
    const config = writeTestConfig(
      join(root, 'refdesk.yaml'),
      [{ use: 'plugins/store-postgres', options: { postgres: LEASE } }, 'plugins/chunker-markdown', 'plugins/source-upload'],
      { slots: { store: 'postgres', chunkers: ['markdown'] } },
    );
    env = { REFDESK_CONFIG: config, DATABASE_URL: url, ENCRYPTION_KEY };
    db = new pg.Pool({ connectionString: url, max: 1 });
  });
  after(async () => {
    await stopAll();
    await db?.end();
    await cluster?.stop();
    removeDataDir(root);
  });

  function docs(name: string): string {
    const dir = join(root, `docs-${name}`);
    mkdirSync(join(dir, 'guide'), { recursive: true });
    writeFileSync(join(dir, 'README.md'), `# ${name}\n\nThe ${name} toolkit.\n\n## Install\n\nRun \`${name} install\` first.\n`);
    writeFileSync(join(dir, 'guide', 'deploy.md'), `# Deploy\n\n## Rollout\n\nUse \`${name} rollout --canary\` to deploy a canary.\n`);
    return dir;
  }

  async function job(libraryId: string): Promise<{ state: string; claimed_by: string; attempts: number }> {
    const { rows } = await db.query('SELECT state, claimed_by, attempts FROM jobs WHERE library_id = $1', [libraryId]);
    assert.equal(rows.length, 1, `one job of ${libraryId}`);
    return rows[0];
  }

  test('a running node claims the job; the command follows it to its end and prints the summary', async () => {
    const node = await startServer(join(root, 'node-data'), 90_000, env);
    const res = await runRefdesk(['add', docs('harbor'), '--name', 'harbor'], join(root, 'cli-data'), 120_000, env);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, SUMMARY('/docs/harbor'));
    assert.match(res.stderr, /runs on a Refdesk node; following it/);
    const ran = await job('/docs/harbor');
    assert.equal(ran.state, 'succeeded');
    assert.match(ran.claimed_by, new RegExp(`:${node.pid}:`), 'the node ran it');
    assert.equal(ran.attempts, 1);
    const ctx = await httpGet(`${node.base}/api/v2/context?libraryId=${encodeURIComponent('/docs/harbor')}&query=rollout`);
    assert.equal(ctx.status, 200);
    assert.match(ctx.text, /harbor rollout --canary/, 'the node read the folder from the upload in the database');
    assert.equal((await db.query('SELECT count(*)::int AS n FROM uploads')).rows[0].n, 0, 'the upload is removed once its job ended');
    await node.stop();
  });

  test('no node running: the command runs the job itself after leaseMs and prints the same summary', async () => {
    const res = await runRefdesk(['add', docs('quay'), '--name', 'quay'], join(root, 'cli-data'), 120_000, env);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, SUMMARY('/docs/quay'));
    assert.match(res.stderr, /No Refdesk node claimed job .* within 4 s; running it here/);
    const ran = await job('/docs/quay');
    assert.equal(ran.state, 'succeeded');
    assert.equal(ran.attempts, 1);
    assert.equal((await db.query('SELECT count(*)::int AS n FROM uploads')).rows[0].n, 0);
  });
});
