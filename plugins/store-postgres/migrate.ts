/**
 * Schema migrations of the PostgreSQL store: versioned, forward-only SQL files
 * (migrations/NNN_name.sql), recorded in `schema_migrations` (version, name, checksum, status,
 * applied_at). `migrate` holds a session advisory lock (a fixed key) for its whole run, so any
 * number of nodes may start at once and each version is applied exactly once; each migration runs
 * in its own transaction with its record.
 *
 * Refused, with a message saying what to do: an already-applied migration whose file changed
 * (checksum), a database migrated by a newer Refdesk (versions this code does not know), and a
 * new file numbered below the newest applied one.
 *
 * A file whose first line is `-- refdesk:requires-extension <name>` is applied only when the
 * server offers that extension (pg_available_extensions); otherwise it is recorded as `skipped`
 * and applied by a later run once the extension is there.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { PostgresStoreError, isConnectionError, toStoreError, type PostgresPool } from './pool.ts';

/**
 * The migration files: beside this module (sources, `npm run build`'s dist/, which copies them),
 * else `plugins/store-postgres/migrations` under the nearest ancestor folder that has it (a
 * bundle of the server lives elsewhere in dist/). Null when none is found.
 */
function findMigrationsDir(): string | null {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'migrations')];
  for (let dir = here, i = 0; i < 6; i++, dir = dirname(dir)) candidates.push(join(dir, 'plugins', 'store-postgres', 'migrations'));
  return candidates.find((d) => existsSync(join(d, '001_core.sql'))) ?? null;
}

export const MIGRATIONS_DIR = findMigrationsDir();

/** pg_advisory_lock key of the migrator: the bytes of "refdesk" (0x726566646573 6b). */
export const MIGRATION_LOCK_KEY = '32199479063655275';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** SHA-256 (hex) of the file with line endings normalised. */
  checksum: string;
  /** The extension the file needs, or null. */
  requiresExtension: string | null;
}

export type MigrationStatus = 'applied' | 'skipped';

export interface AppliedMigration {
  version: number;
  name: string;
  checksum: string;
  status: MigrationStatus;
  appliedAt: string;
}

const FILE = /^(\d{3,})_([a-z0-9_]+)\.sql$/;
const REQUIRES = /^--\s*refdesk:requires-extension\s+([a-z0-9_]+)\s*$/;

/** The migration files of a directory, by version; refuses a malformed name or a repeated version. */
export function loadMigrations(dir: string | null = MIGRATIONS_DIR): Migration[] {
  if (!dir) throw new Error('the PostgreSQL store\'s migration files (plugins/store-postgres/migrations) are missing from this installation; rebuild it with `npm run build`');
  const out: Migration[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.sql')) continue;
    const m = FILE.exec(file);
    if (!m) throw new Error(`migration file ${file} is not named NNN_name.sql (lower case, digits, underscores)`);
    const sql = readFileSync(join(dir, file), 'utf8').replace(/\r\n/g, '\n');
    const version = Number(m[1]);
    if (out.some((x) => x.version === version)) throw new Error(`two migration files have version ${version}`);
    out.push({ version, name: m[2], sql, checksum: createHash('sha256').update(sql).digest('hex'), requiresExtension: REQUIRES.exec(sql.split('\n', 1)[0])?.[1] ?? null });
  }
  return out.sort((a, b) => a.version - b.version);
}

const CREATE_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  checksum   text NOT NULL,
  status     text NOT NULL CHECK (status IN ('applied', 'skipped')),
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

async function readApplied(client: pg.ClientBase): Promise<AppliedMigration[] | null> {
  const exists = await client.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  if (!exists.rows[0]?.t) return null;
  const { rows } = await client.query<{ version: number; name: string; checksum: string; status: MigrationStatus; applied_at: Date }>(
    'SELECT version, name, checksum, status, applied_at FROM schema_migrations ORDER BY version',
  );
  return rows.map((r) => ({ version: r.version, name: r.name, checksum: r.checksum, status: r.status, appliedAt: r.applied_at.toISOString() }));
}

export interface SchemaState {
  /** What the database records, by version. */
  applied: AppliedMigration[];
  /** Known migrations not yet in the database (or skipped, when their extension is now available). */
  pending: Migration[];
  /** Recorded versions this code does not know (a newer Refdesk migrated the database). */
  unknown: AppliedMigration[];
  /** Applied migrations whose file changed since. */
  changed: AppliedMigration[];
  /** Known migrations numbered below the newest applied version but never applied. */
  outOfOrder: Migration[];
}

async function availableExtensions(client: pg.ClientBase, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const { rows } = await client.query<{ name: string }>('SELECT name FROM pg_available_extensions WHERE name = ANY($1)', [names]);
  return new Set(rows.map((r) => r.name));
}

async function readState(client: pg.ClientBase, migrations: Migration[]): Promise<SchemaState> {
  const applied = (await readApplied(client)) ?? [];
  const known = new Map(migrations.map((m) => [m.version, m]));
  const byVersion = new Map(applied.map((a) => [a.version, a]));
  const newest = applied.reduce((max, a) => Math.max(max, a.version), 0);
  const unknown = applied.filter((a) => !known.has(a.version));
  const changed = applied.filter((a) => known.has(a.version) && known.get(a.version)!.checksum !== a.checksum);
  const missing = migrations.filter((m) => !byVersion.has(m.version));
  const skipped = migrations.filter((m) => byVersion.get(m.version)?.status === 'skipped' && m.requiresExtension);
  const available = await availableExtensions(client, [...new Set(skipped.map((m) => m.requiresExtension!))]);
  const pending = [...missing, ...skipped.filter((m) => available.has(m.requiresExtension!))].sort((a, b) => a.version - b.version);
  return { applied, pending, unknown, changed, outOfOrder: missing.filter((m) => m.version < newest) };
}

/** Throws the first reason the database cannot be migrated (or served) by this code. */
function refuse(state: SchemaState, db: PostgresPool['db']): void {
  if (state.unknown.length > 0) {
    const v = state.unknown.map((a) => `${a.version} (${a.name})`).join(', ');
    throw new PostgresStoreError(
      'database_newer',
      `The database at ${db.where} has schema version ${v}, which this Refdesk does not know: a newer Refdesk migrated it. Upgrade this node to that version; the schema is never migrated backwards.`,
    );
  }
  if (state.changed.length > 0) {
    const v = state.changed.map((a) => `${String(a.version).padStart(3, '0')}_${a.name}.sql`).join(', ');
    throw new PostgresStoreError(
      'migration_checksum_mismatch',
      `Migration ${v} was changed after it was applied to ${db.where} (its checksum differs). Migrations are forward-only: restore the file and put the change in a new migration.`,
    );
  }
  if (state.outOfOrder.length > 0) {
    const v = state.outOfOrder.map((m) => `${String(m.version).padStart(3, '0')}_${m.name}.sql`).join(', ');
    throw new PostgresStoreError('migration_out_of_order', `Migration ${v} is numbered below a version already applied to ${db.where}; number it after the newest applied migration.`);
  }
}

/** The database's schema state against the known migrations (read-only; no lock). */
export async function schemaStatus(db: PostgresPool, migrations: Migration[] = loadMigrations()): Promise<SchemaState> {
  return db.withClient((client) => readState(client, migrations));
}

export interface MigrateResult {
  /** What this run did, in order (empty when the database was up to date). */
  ran: Array<{ version: number; name: string; status: MigrationStatus }>;
  /** The highest applied (or skipped) version afterwards. */
  version: number;
}

/** Applies every pending migration (see the module comment). */
export async function migrate(db: PostgresPool, migrations: Migration[] = loadMigrations()): Promise<MigrateResult> {
  return db.withClient(async (client) => {
    // The pool's statement timeout is for serving requests: waiting for another migrator and
    // building indexes may take longer. RESET below returns to the connection's default.
    await client.query('SET statement_timeout = 0');
    // Waits for any other migrator; a session lock, released below or when the connection ends.
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(CREATE_TABLE);
      const state = await readState(client, migrations);
      refuse(state, db.db);
      const ran: MigrateResult['ran'] = [];
      const needed = [...new Set(state.pending.map((m) => m.requiresExtension).filter((x): x is string => !!x))];
      const available = await availableExtensions(client, needed);
      const recorded = new Set(state.applied.map((a) => a.version));
      for (const m of state.pending) {
        const status: MigrationStatus = m.requiresExtension && !available.has(m.requiresExtension) ? 'skipped' : 'applied';
        await client.query('BEGIN');
        try {
          if (status === 'applied') await client.query(m.sql);
          await client.query(
            `INSERT INTO schema_migrations (version, name, checksum, status) VALUES ($1, $2, $3, $4)
             ON CONFLICT (version) DO UPDATE SET status = EXCLUDED.status, applied_at = now()`,
            [m.version, m.name, m.checksum, status],
          );
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK').catch(() => undefined);
          // A lost connection says so (the transaction died with it); a failing statement names its file.
          if (isConnectionError(e)) throw toStoreError(e, db.db);
          const why = e instanceof Error ? e.message : String(e);
          throw new PostgresStoreError('database_error', `Migration ${String(m.version).padStart(3, '0')}_${m.name}.sql failed on ${db.db.where} and was rolled back: ${db.db.redact(why)}`);
        }
        recorded.add(m.version);
        ran.push({ version: m.version, name: m.name, status });
      }
      return { ran, version: Math.max(0, ...recorded) };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
      await client.query('RESET statement_timeout').catch(() => undefined);
    }
  });
}

/** Throws unless the database is fully migrated for this code (for a node's start and readiness). */
export async function assertMigrated(db: PostgresPool, migrations: Migration[] = loadMigrations()): Promise<SchemaState> {
  const state = await schemaStatus(db, migrations);
  refuse(state, db.db);
  const missing = state.pending.filter((m) => !state.applied.some((a) => a.version === m.version));
  if (missing.length > 0) {
    throw new PostgresStoreError('database_not_migrated', `The database at ${db.db.where} lacks schema version ${missing.map((m) => m.version).join(', ')}: run \`refdesk db migrate\`.`);
  }
  return state;
}
