/**
 * `refdesk db migrate` and `refdesk db status` as real processes (test/e2e/refdesk-process.ts)
 * against a throwaway Debian PostgreSQL cluster: status before and after, --json, an idempotent
 * second migrate, and one-line errors (no stack trace, no password) for a missing, malformed or
 * unreachable DATABASE_URL.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeDataDir, removeDataDir, runRefdesk, stopAll } from '../../e2e/refdesk-process.ts';
import { loadMigrations } from '../../../plugins/store-postgres/migrate.ts';
import { freePort, postgresSkipReason, startPostgres, type TestPostgres } from '../../helpers/postgres.ts';

const PASSWORD = 'Planted-Secret-5d21e7';
/** The shipped migrations (each PostgreSQL part adds its own numbered file) and the newest version. */
const SHIPPED = loadMigrations();
const TOP = Math.max(...SHIPPED.map((m) => m.version));

/** The output must be one clear line: no stack trace and no password in any form. */
function assertClean(out: string): void {
  assert.doesNotMatch(out, /\n\s+at .+\(.+:\d+:\d+\)/, `no stack trace:\n${out}`);
  for (const form of [PASSWORD, encodeURIComponent(PASSWORD), Buffer.from(PASSWORD).toString('base64')]) assert.ok(!out.includes(form), `no password in:\n${out}`);
}

describe('refdesk db migrate|status', { skip: postgresSkipReason() }, () => {
  let pg: TestPostgres;
  let dataDir: string;
  before(async () => {
    pg = await startPostgres();
    dataDir = makeDataDir('refdesk-db-cli-');
  });
  after(async () => {
    await stopAll();
    removeDataDir(dataDir);
    await pg?.stop();
  });

  test('status lists pending versions; migrate applies them; status --json shows the result', async () => {
    // Trust auth: the password is accepted and ignored, but it is in the URL the CLI gets.
    const url = (await pg.createDatabase('cli_db')).replace('postgres@', `postgres:${PASSWORD}@`);
    const env = { DATABASE_URL: url };
    const before = await runRefdesk(['db', 'status'], dataDir, 60_000, env);
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /pending\s+001_core/);
    assert.match(before.stdout, /pending\s+002_vectors/);
    assert.match(before.stdout, /Run `refdesk db migrate`/);
    assertClean(before.stdout + before.stderr);

    const migrated = await runRefdesk(['db', 'migrate'], dataDir, 60_000, env);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /applied 001_core/);
    // Debian's server has no pgvector unless postgresql-NN-pgvector is installed.
    assert.match(migrated.stdout, /(applied 002_vectors|skipped 002_vectors \(needs the "vector" extension)/);
    assert.match(migrated.stdout, new RegExp(`at schema version ${TOP}`));
    assertClean(migrated.stdout + migrated.stderr);

    const again = await runRefdesk(['db', 'migrate'], dataDir, 60_000, env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`up to date \\(schema version ${TOP}\\)`));

    const json = await runRefdesk(['db', 'status', '--json'], dataDir, 60_000, env);
    assert.equal(json.code, 0, json.stderr);
    const status = JSON.parse(json.stdout);
    assert.deepEqual(status.pending, []);
    assert.deepEqual(
      [...status.applied, ...status.skipped].map((m: { version: number }) => m.version).sort((x: number, y: number) => x - y),
      SHIPPED.map((m) => m.version),
    );
    assert.equal(status.applied[0].name, 'core');
    assert.match(status.applied[0].appliedAt, /^\d{4}-\d\d-\d\dT/);
  });

  test('a missing, malformed or unreachable DATABASE_URL gets one clear line, exit 1', async () => {
    const port = await freePort();
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ DATABASE_URL: '' }, /DATABASE_URL is not set/],
      [{ DATABASE_URL: `postgress//admin:${PASSWORD}@db.internal/refdesk` }, /DATABASE_URL is not a URL/],
      [{ DATABASE_URL: `mysql://admin:${PASSWORD}@db.internal/refdesk` }, /must start with postgres:\/\//],
      [{ DATABASE_URL: `postgres://admin:${PASSWORD}@127.0.0.1:${port}/refdesk` }, new RegExp(`Cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}/refdesk \\(connection refused\\)`)],
      [{ DATABASE_URL: `postgres://postgres:${PASSWORD}@127.0.0.1:${pg.port}/no_such_db` }, /no_such_db.*does not exist/],
    ];
    for (const [env, re] of cases) {
      for (const sub of ['migrate', 'status']) {
        const r = await runRefdesk(['db', sub], dataDir, 60_000, env);
        assert.equal(r.code, 1, `${sub} ${JSON.stringify(env)}: ${r.stdout}${r.stderr}`);
        assert.match(r.stderr, /^refdesk: /);
        assert.match(r.stderr, re);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assertClean(r.stdout + r.stderr);
      }
    }
  });

  test('an unknown db command prints the usage', async () => {
    const r = await runRefdesk(['db', 'rollback'], dataDir, 60_000, {});
    assert.equal(r.code, 1);
    assert.match(r.stderr, /unknown db command "rollback"/);
    assert.match(r.stderr, /refdesk db <migrate\|status>/);
  });
});
