/**
 * The PostgreSQL store's part of readiness (GET /api/ready, server/routes/health.ts): whether the
 * database answers and carries every migration this code knows. It never throws: a database
 * that is down, refuses the credentials, lacks migrations or was migrated by a newer Refdesk
 * is a report with the store error's code and message (host:port/database, never the password).
 * The check gives up after `timeoutMs` (a cut network would otherwise hold the probe for the
 * pool's 10 s connect timeout, longer than a load balancer waits).
 */
import { assertMigrated, type SchemaState } from './migrate.ts';
import { PostgresStoreError, toStoreError } from './pool.ts';
import type { PgDatabase } from './database.ts';

export interface PgMigrationsReport {
  /** The newest version recorded in the database. */
  version: number;
  /** The newest version this code knows. */
  latest: number;
  applied: number[];
  /** Recorded as skipped: their extension is not available on the server (pgvector). */
  skipped: number[];
}

export interface PgStoreStatus {
  kind: 'postgres';
  database: 'ok' | 'unavailable' | 'not_migrated' | 'failed';
  migrations?: PgMigrationsReport;
  /** How this node learns of other nodes' changes right now (notify.ts). */
  changeFeed: 'listen' | 'poll';
  /** Why the database is not usable (absent when it is). */
  error?: { error: string; message: string };
}

const NOT_MIGRATED = new Set(['database_not_migrated', 'database_newer', 'migration_checksum_mismatch', 'migration_out_of_order']);

function migrationsOf(state: SchemaState): PgMigrationsReport {
  const applied = state.applied.filter((a) => a.status === 'applied').map((a) => a.version);
  const skipped = state.applied.filter((a) => a.status === 'skipped').map((a) => a.version);
  const all = state.applied.map((a) => a.version);
  return { version: Math.max(0, ...all), latest: Math.max(0, ...all, ...state.pending.map((m) => m.version)), applied, skipped };
}

export async function pgStoreStatus(database: PgDatabase, timeoutMs = 5_000): Promise<PgStoreStatus> {
  const changeFeed = database.changeFeed?.isListening ? 'listen' : 'poll';
  let timer: NodeJS.Timeout | undefined;
  try {
    const pool = database.pool;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PostgresStoreError('database_unavailable', `PostgreSQL at ${pool.db.where} did not answer within ${timeoutMs} ms.`)), timeoutMs);
    });
    const check = assertMigrated(pool);
    check.catch(() => undefined); // settles after the timeout: not an unhandled rejection
    const state = await Promise.race([check, timeout]);
    return { kind: 'postgres', database: 'ok', migrations: migrationsOf(state), changeFeed };
  } catch (e) {
    let err: PostgresStoreError;
    if (e instanceof PostgresStoreError) err = e;
    else if (database.isOpen) err = toStoreError(e, database.pool.db);
    else err = new PostgresStoreError('database_unavailable', (e as Error).message);
    const state = err.code === 'database_unavailable' ? 'unavailable' : NOT_MIGRATED.has(err.code) ? 'not_migrated' : 'failed';
    return { kind: 'postgres', database: state, changeFeed, error: { error: err.code, message: err.message } };
  } finally {
    clearTimeout(timer);
  }
}
