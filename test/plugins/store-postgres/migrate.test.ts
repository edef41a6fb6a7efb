/**
 * The PostgreSQL store's migrations and pool on Debian's PostgreSQL server (a throwaway cluster
 * started by the test, test/helpers/postgres.ts): a fresh database, an idempotent re-run, three
 * migrators at once applying each version exactly once, refusals (edited migration, newer
 * database, out-of-order file), a failed migration rolled back, a skipped extension migration
 * applied once the extension is there, and the pool's settings and error messages.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS_DIR, assertMigrated, loadMigrations, migrate, schemaStatus } from '../../../plugins/store-postgres/migrate.ts';
import { PostgresStoreError, createPool, type PostgresPool } from '../../../plugins/store-postgres/pool.ts';
import { freePort, postgresSkipReason, startPostgres, type TestPostgres } from '../../helpers/postgres.ts';

const PASSWORD = 'Planted-Secret-8f3a9c';

/**
 * The shipped migrations (each PostgreSQL part adds its own numbered file), and the file name of
 * a test migration numbered `k` above the newest of them.
 */
const SHIPPED = loadMigrations();
const TOP = Math.max(...SHIPPED.map((m) => m.version));
const above = (k: number, name: string) => `${String(TOP + k).padStart(3, '0')}_${name}.sql`;
/** What `migrate` records for each shipped file on a server with (or without) pgvector. */
const shippedRan = (vector: boolean) => SHIPPED.map((m) => ({ version: m.version, name: m.name, status: m.requiresExtension && !vector ? 'skipped' : 'applied' }));

/** A copy of the shipped migrations in a temp directory, to edit or extend. */
function migrationsCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-migrations-'));
  for (const f of readdirSync(MIGRATIONS_DIR!)) copyFileSync(join(MIGRATIONS_DIR!, f), join(dir, f));
  return dir;
}

async function rejectsWith(p: Promise<unknown>, code: string, re: RegExp): Promise<PostgresStoreError> {
  const e = await p.then(
    () => assert.fail(`expected ${code}`),
    (x: unknown) => x,
  );
  assert.ok(e instanceof PostgresStoreError, `a PostgresStoreError, got ${String(e)}`);
  assert.equal(e.code, code, e.message);
  assert.match(e.message, re);
  return e;
}

describe('store-postgres migrations on Debian PostgreSQL', { skip: postgresSkipReason() }, () => {
  let pg: TestPostgres;
  const pools: PostgresPool[] = [];
  const dirs: string[] = [];
  let n = 0;
  /** A pool on a fresh database of the cluster. */
  const freshDb = async (opts: Parameters<typeof createPool>[1] = {}) => {
    const url = await pg.createDatabase(`t${++n}`);
    const p = createPool(url, opts);
    pools.push(p);
    return { url, pool: p };
  };
  const tables = async (p: PostgresPool) =>
    (await p.pool.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`)).rows.map((r) => r.t);
  const hasVector = async (p: PostgresPool) => (await p.pool.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`)).rowCount === 1;

  before(async () => {
    pg = await startPostgres();
  });
  after(async () => {
    for (const p of pools) await p.end().catch(() => undefined);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await pg?.stop();
  });

  test('a fresh database gets every table; a second run does nothing', async () => {
    const { pool } = await freshDb();
    const before = await schemaStatus(pool);
    assert.deepEqual(before.applied, []);
    assert.deepEqual(
      before.pending.map((m) => m.version),
      loadMigrations().map((m) => m.version),
    );
    const vector = await hasVector(pool);
    const first = await migrate(pool);
    assert.deepEqual(first.ran, shippedRan(vector));
    assert.deepEqual(first.ran.slice(0, 2), [
      { version: 1, name: 'core', status: 'applied' },
      { version: 2, name: 'vectors', status: vector ? 'applied' : 'skipped' },
    ]);
    assert.equal(first.version, TOP);
    const t = await tables(pool);
    for (const name of ['libraries', 'library_aliases', 'versions', 'builds', 'segment_chunks', 'build_documents', 'document_chunks', 'jobs', 'job_logs', 'api_keys', 'admin_account', 'sessions', 'settings', 'audit_log', 'rate_limit_counters', 'schema_migrations']) {
      assert.ok(t.includes(name), `table ${name} exists (have ${t.join(', ')})`);
    }
    assert.equal(t.includes('snippet_vectors'), vector, 'the vector table only with the extension');
    const leaseCols = (await pool.pool.query<{ c: string }>(`SELECT column_name AS c FROM information_schema.columns WHERE table_name = 'jobs'`)).rows.map((r) => r.c);
    for (const c of ['lease_until', 'claimed_by', 'heartbeat_at']) assert.ok(leaseCols.includes(c), `jobs.${c}`);

    const second = await migrate(pool);
    assert.deepEqual(second, { ran: [], version: TOP });
    const rows = (await pool.pool.query('SELECT version, name, status, length(checksum) AS len FROM schema_migrations ORDER BY version')).rows;
    assert.deepEqual(
      rows,
      shippedRan(vector).map((r) => ({ ...r, len: 64 })),
    );
    const state = await assertMigrated(pool);
    assert.deepEqual(state.pending, []);
  });

  test('three migrators at once: each version applied exactly once', async () => {
    const { url } = await freshDb();
    const three = [0, 1, 2].map(() => {
      const p = createPool(url, { max: 1 });
      pools.push(p);
      return p;
    });
    // Every migrator holds a connection before any starts, so they really run at once.
    await Promise.all(three.map((p) => p.pool.query('SELECT 1')));
    const results = await Promise.all(three.map((p) => migrate(p)));
    const ran = results.flatMap((r) => r.ran.map((x) => x.version)).sort();
    assert.deepEqual(ran, SHIPPED.map((m) => m.version).sort(), `each version once across the three (got ${JSON.stringify(results)})`);
    assert.ok(results.every((r) => r.version === TOP));
    const count = (await three[0].pool.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0].n;
    assert.equal(count, SHIPPED.length);
  });

  test('an applied migration edited afterwards is refused, and status shows it', async () => {
    const { pool } = await freshDb();
    const dir = migrationsCopy();
    dirs.push(dir);
    await migrate(pool, loadMigrations(dir));
    const file = join(dir, '001_core.sql');
    writeFileSync(file, readFileSync(file, 'utf8') + '\nCREATE TABLE sneaky (id int);\n');
    await rejectsWith(migrate(pool, loadMigrations(dir)), 'migration_checksum_mismatch', /001_core\.sql was changed after it was applied.*new migration/);
    assert.ok(!(await tables(pool)).includes('sneaky'), 'nothing of the edited file ran');
    const state = await schemaStatus(pool, loadMigrations(dir));
    assert.deepEqual(
      state.changed.map((a) => a.version),
      [1],
    );
    await rejectsWith(assertMigrated(pool, loadMigrations(dir)), 'migration_checksum_mismatch', /forward-only/);
  });

  test('a database migrated by a newer Refdesk is refused', async () => {
    const { pool } = await freshDb();
    await migrate(pool);
    await pool.pool.query(`INSERT INTO schema_migrations (version, name, checksum, status) VALUES (999, 'from_the_future', 'x', 'applied')`);
    await rejectsWith(migrate(pool), 'database_newer', /schema version 999 \(from_the_future\).*newer Refdesk.*Upgrade this node/);
    await rejectsWith(assertMigrated(pool), 'database_newer', /999/);
    assert.deepEqual(
      (await schemaStatus(pool)).unknown.map((a) => a.version),
      [999],
    );
  });

  test('a new file numbered below an applied version is refused', async () => {
    const { pool } = await freshDb();
    const dir = migrationsCopy();
    dirs.push(dir);
    writeFileSync(join(dir, above(2, 'later')), 'CREATE TABLE later (id int);\n');
    await migrate(pool, loadMigrations(dir));
    writeFileSync(join(dir, above(1, 'forgotten')), 'CREATE TABLE forgotten (id int);\n');
    await rejectsWith(migrate(pool, loadMigrations(dir)), 'migration_out_of_order', new RegExp(`${above(1, 'forgotten').replace('.', '\\.')} is numbered below`));
    assert.ok(!(await tables(pool)).includes('forgotten'));
  });

  test('a failing migration is rolled back whole and not recorded', async () => {
    const { pool } = await freshDb();
    const dir = migrationsCopy();
    dirs.push(dir);
    writeFileSync(join(dir, above(1, 'broken')), 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n');
    await rejectsWith(migrate(pool, loadMigrations(dir)), 'database_error', new RegExp(`${above(1, 'broken').replace('.', '\\.')} failed .* rolled back: .*no_such_table`));
    assert.ok(!(await tables(pool)).includes('half_done'), 'the first statement was rolled back');
    const versions = (await pool.pool.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
    assert.deepEqual(versions, SHIPPED.map((m) => m.version), 'the good migrations before it stay applied');
    // The lock was released: another migrator is not blocked.
    rmSync(join(dir, above(1, 'broken')));
    assert.deepEqual((await migrate(pool, loadMigrations(dir))).ran, []);
  });

  test('a migration needing a missing extension is skipped, and applied once the extension is there', async () => {
    const { pool } = await freshDb();
    const dir = mkdtempSync(join(tmpdir(), 'refdesk-migrations-'));
    dirs.push(dir);
    writeFileSync(join(dir, '001_base.sql'), 'CREATE TABLE base (id int);\n');
    writeFileSync(join(dir, '002_nope.sql'), '-- refdesk:requires-extension refdesk_no_such_extension\nCREATE EXTENSION refdesk_no_such_extension;\n');
    // pg_trgm ships with Debian's server (contrib): available, so applied.
    writeFileSync(join(dir, '003_trgm.sql'), '-- refdesk:requires-extension pg_trgm\nCREATE EXTENSION IF NOT EXISTS pg_trgm;\n');
    const first = await migrate(pool, loadMigrations(dir));
    assert.deepEqual(first.ran, [
      { version: 1, name: 'base', status: 'applied' },
      { version: 2, name: 'nope', status: 'skipped' },
      { version: 3, name: 'trgm', status: 'applied' },
    ]);
    assert.deepEqual((await schemaStatus(pool, loadMigrations(dir))).pending, [], 'a skipped migration whose extension is still missing is not pending');
    await assertMigrated(pool, loadMigrations(dir));
    // A migration recorded as skipped whose extension has since become available runs on the next migrate.
    await pool.pool.query(`DROP EXTENSION pg_trgm`);
    await pool.pool.query(`UPDATE schema_migrations SET status = 'skipped' WHERE version = 3`);
    assert.deepEqual(
      (await schemaStatus(pool, loadMigrations(dir))).pending.map((m) => m.version),
      [3],
    );
    const again = await migrate(pool, loadMigrations(dir));
    assert.deepEqual(again.ran, [{ version: 3, name: 'trgm', status: 'applied' }]);
    assert.equal((await pool.pool.query(`SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'`)).rowCount, 1);
  });

  test('a connection lost during a migration is reported as such, and the pool recovers', async () => {
    const { pool } = await freshDb();
    const dir = migrationsCopy();
    dirs.push(dir);
    writeFileSync(join(dir, above(1, 'dies')), 'CREATE TABLE before_death (id int);\nSELECT pg_terminate_backend(pg_backend_pid());\n');
    await rejectsWith(migrate(pool, loadMigrations(dir)), 'database_unavailable', /Cannot reach PostgreSQL at 127\.0\.0\.1:\d+\/t\d+/);
    // The dead client was not handed back: the next call gets a new connection and sees no trace of 003.
    assert.ok(!(await tables(pool)).includes('before_death'));
    rmSync(join(dir, above(1, 'dies')));
    assert.deepEqual((await schemaStatus(pool, loadMigrations(dir))).pending, []);
  });

  test('migrations are not cut by the pool\'s statement timeout, which applies again afterwards', async () => {
    const { pool } = await freshDb({ statementTimeoutMs: 200, max: 1 });
    const dir = migrationsCopy();
    dirs.push(dir);
    writeFileSync(join(dir, above(1, 'slow')), 'SELECT pg_sleep(0.6);\nCREATE TABLE slow_done (id int);\n');
    const result = await migrate(pool, loadMigrations(dir));
    assert.deepEqual(result.ran.at(-1), { version: TOP + 1, name: 'slow', status: 'applied' });
    assert.ok((await tables(pool)).includes('slow_done'));
    // The same (only) connection serves requests with the pool's timeout again.
    assert.equal((await pool.pool.query(`SELECT current_setting('statement_timeout') AS t`)).rows[0].t, '200ms');
  });

  test('the pool sets application_name and the statement timeout', async () => {
    const { pool } = await freshDb({ applicationName: 'refdesk-test-node', statementTimeoutMs: 200 });
    const row = (await pool.pool.query(`SELECT current_setting('application_name') AS app, current_setting('statement_timeout') AS timeout`)).rows[0];
    assert.deepEqual(row, { app: 'refdesk-test-node', timeout: '200ms' });
    await rejectsWith(
      pool.withClient((c) => c.query('SELECT pg_sleep(2)')),
      'database_error',
      /cancelled a statement.*statement timeout/,
    );
  });

  test('errors never carry the password of DATABASE_URL', async () => {
    const port = await freePort();
    const unreachable = createPool(`postgres://refdesk:${PASSWORD}@127.0.0.1:${port}/refdesk`, { connectTimeoutMs: 3000 });
    pools.push(unreachable);
    const e1 = await rejectsWith(migrate(unreachable), 'database_unavailable', new RegExp(`Cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}/refdesk \\(connection refused\\)`));
    const missingDb = createPool(`postgres://postgres:${PASSWORD}@127.0.0.1:${pg.port}/no_such_database`);
    pools.push(missingDb);
    const e2 = await rejectsWith(schemaStatus(missingDb), 'database_not_found', /no_such_database/);
    for (const e of [e1, e2]) {
      assert.ok(!e.message.includes(PASSWORD), e.message);
      assert.ok(!e.message.includes(encodeURIComponent(PASSWORD)), e.message);
    }
    // Malformed URLs: the message never quotes them (the password may sit anywhere in a typo).
    for (const bad of [`postgress//refdesk:${PASSWORD}@db/x`, `mysql://refdesk:${PASSWORD}@db/x`, `postgres://refdesk:${PASSWORD}@/x`]) {
      const e = (() => {
        try {
          createPool(bad);
        } catch (x) {
          return x as PostgresStoreError;
        }
        return assert.fail(`${bad} accepted`);
      })();
      assert.equal(e.code, 'database_url_invalid');
      assert.ok(!e.message.includes(PASSWORD), e.message);
    }
    assert.throws(() => createPool(undefined), (e: PostgresStoreError) => e.code === 'database_url_missing' && /DATABASE_URL is not set/.test(e.message));
  });
});
