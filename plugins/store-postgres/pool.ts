/**
 * The PostgreSQL store's connection pool: node-postgres `pg` from DATABASE_URL, with a statement
 * timeout and an application_name on every connection, and errors turned into short messages
 * that say what to fix and never carry the password (or the URL's userinfo).
 */
import pg from 'pg';
import { createRedactor, type Redactor } from '../../core/redact.ts';

/** Error codes of the PostgreSQL store's own errors (the CLI prints the message; HTTP maps them later). */
export type PostgresErrorCode =
  | 'database_url_missing'
  | 'database_url_invalid'
  | 'database_unavailable'
  | 'database_auth_failed'
  | 'database_not_found'
  | 'database_error'
  | 'migration_checksum_mismatch'
  | 'migration_out_of_order'
  | 'database_newer'
  | 'database_not_migrated';

export class PostgresStoreError extends Error {
  constructor(
    readonly code: PostgresErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PostgresStoreError';
  }
}

export interface DatabaseUrl {
  /** The URL as given (with its password: only for the driver). */
  url: string;
  /** host:port/database, for messages (never the user's password). */
  where: string;
  /** Removes the password (and its encodings) and any URL userinfo from a text. */
  redact: Redactor;
}

/** Checks DATABASE_URL's shape; the errors never quote it (a mistyped URL may hold the password anywhere). */
export function parseDatabaseUrl(raw: string | undefined): DatabaseUrl {
  const url = raw?.trim() ?? '';
  if (!url) {
    throw new PostgresStoreError('database_url_missing', 'DATABASE_URL is not set: give the PostgreSQL server as DATABASE_URL=postgres://user:password@host:5432/database.');
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PostgresStoreError('database_url_invalid', 'DATABASE_URL is not a URL: give postgres://user:password@host:5432/database (percent-encode special characters in the user and password).');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new PostgresStoreError('database_url_invalid', 'DATABASE_URL must start with postgres:// or postgresql://, e.g. postgres://user:password@host:5432/database.');
  }
  const socketHost = parsed.searchParams.get('host');
  if (!parsed.hostname && !socketHost) throw new PostgresStoreError('database_url_invalid', 'DATABASE_URL has no host: postgres://user:password@host:5432/database.');
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const password = decode(parsed.password);
  const user = decode(parsed.username);
  const redact = createRedactor([password, parsed.password].filter(Boolean), user ? [user] : []);
  const database = decode(parsed.pathname.replace(/^\//, '')) || user || 'postgres';
  const where = `${parsed.hostname || socketHost}${parsed.port ? `:${parsed.port}` : ''}/${database}`;
  return { url, where: redact(where), redact };
}

export interface PoolOptions {
  /** Statement timeout in ms on every connection (default 30000; 0: none). */
  statementTimeoutMs?: number;
  /** How long to wait for a connection (default 10000 ms). */
  connectTimeoutMs?: number;
  /** The application_name the server shows in pg_stat_activity (default `refdesk`). */
  applicationName?: string;
  /** Pool size (default 10). */
  max?: number;
  /** Where idle-client errors go (already redacted); default: dropped (the next query reports). */
  onIdleError?: (message: string) => void;
}

export interface PostgresPool {
  pool: pg.Pool;
  db: DatabaseUrl;
  /** Runs `fn` with a client of the pool, errors mapped by `describe`. */
  withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  end(): Promise<void>;
}

/** A pool on DATABASE_URL (nothing connects until the first query). */
export function createPool(rawUrl: string | undefined, options: PoolOptions = {}): PostgresPool {
  const db = parseDatabaseUrl(rawUrl);
  const pool = new pg.Pool({
    connectionString: db.url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'refdesk',
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client whose server went away emits 'error' on the pool: without a listener that
  // would take the process down.
  pool.on('error', (e) => options.onIdleError?.(describeDatabaseError(e, db)));
  return {
    pool,
    db,
    async withClient(fn) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (e) {
        throw toStoreError(e, db);
      }
      let broken: unknown;
      // A checked-out client whose connection dies emits 'error'; the pool only listens on idle
      // ones, and an 'error' without a listener would take the process down. The query in
      // flight rejects as well, so this only records it.
      const onError = (e: Error) => {
        broken ??= e;
      };
      client.on('error', onError);
      try {
        return await fn(client);
      } catch (e) {
        broken = e;
        // Only the driver's and the server's errors are mapped; the caller's own pass through.
        throw e instanceof pg.DatabaseError || isConnectionError(e) ? toStoreError(e, db) : e;
      } finally {
        client.off('error', onError);
        // A client whose connection failed is not given back for reuse.
        client.release(isConnectionError(broken) ? (broken as Error) : undefined);
      }
    },
    end: () => pool.end(),
  };
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);

/** Whether an error means the connection to the server failed or was lost (not a statement's error). */
export function isConnectionError(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  if (e instanceof PostgresStoreError) return e.code === 'database_unavailable';
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  const message = String((e as { message?: unknown }).message ?? '');
  return /timeout exceeded when trying to connect|Connection terminated/i.test(message);
}

/** A one-line message for a driver or server error: what happened and where, never the password. */
export function describeDatabaseError(e: unknown, db: DatabaseUrl): string {
  return toStoreError(e, db).message;
}

/** Maps a driver or server error to a PostgresStoreError (already-mapped errors pass through). */
export function toStoreError(e: unknown, db: DatabaseUrl): PostgresStoreError {
  if (e instanceof PostgresStoreError) return e;
  const err = (e && typeof e === 'object' ? e : {}) as { code?: unknown; message?: unknown; errors?: unknown };
  const code = typeof err.code === 'string' ? err.code : '';
  const raw = db.redact(String(err.message ?? e ?? 'unknown error')).replace(/\s+/g, ' ').trim().slice(0, 300);
  if (isConnectionError(e) || (Array.isArray(err.errors) && err.errors.some(isConnectionError))) {
    const why = code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'host not found' : code === 'ECONNREFUSED' ? 'connection refused' : raw || code;
    return new PostgresStoreError('database_unavailable', `Cannot reach PostgreSQL at ${db.where} (${db.redact(why)}); check DATABASE_URL and that the server is running.`);
  }
  if (code === '28P01' || code === '28000') {
    return new PostgresStoreError('database_auth_failed', `PostgreSQL at ${db.where} refused the credentials in DATABASE_URL (${raw}).`);
  }
  if (code === '3D000') return new PostgresStoreError('database_not_found', `PostgreSQL at ${db.where}: ${raw}; create it or fix DATABASE_URL.`);
  if (code === '57014') return new PostgresStoreError('database_error', `PostgreSQL at ${db.where} cancelled a statement (${raw}); the statement timeout may be too short.`);
  return new PostgresStoreError('database_error', `PostgreSQL at ${db.where}: ${raw}${code ? ` (${code})` : ''}`);
}
