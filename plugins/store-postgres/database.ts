/**
 * The PostgreSQL store's shared state: the pool on DATABASE_URL, the schema (migrated at open,
 * under the advisory lock: migrate.ts), this node's identity, its local segment cache directory,
 * and the change feed that tells every node what another node changed (LISTEN/NOTIFY: notify.ts).
 * The role classes (catalog.ts, builds.ts, jobs.ts, auth.ts, settings.ts) share it through PgRole.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import type { Clock, Logger, RuntimeEnv } from '../../core/contracts.ts';
import { createPool, isConnectionError, type PostgresPool } from './pool.ts';
import { migrate } from './migrate.ts';
import { POSTGRES_STORE_DEFAULTS, type PostgresStoreOptions } from './options.ts';
import { ChangeFeed, PUBLISH_SQL, CHANGE_CHANNEL, type ChangeTopic } from './notify.ts';

export { POSTGRES_STORE_DEFAULTS, type PostgresStoreOptions } from './options.ts';

export interface PostgresStoreDeps {
  env: RuntimeEnv;
  logger: Logger;
  clock: Clock;
  /** The server to use (DATABASE_URL); never logged, never in an error. */
  databaseUrl: string | undefined;
}

export { CHANGE_CHANNEL, type ChangeTopic } from './notify.ts';

export class PgDatabase {
  readonly options: PostgresStoreOptions;
  readonly env: RuntimeEnv;
  readonly logger: Logger;
  readonly clock: Clock;
  /** This process's name in job claims and notifications: host, pid and a random part. */
  readonly nodeId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /** Local cache of segment files. */
  readonly cacheDir: string;
  /** Emits `(topic: ChangeTopic, id: string)` for changes made by this node and by others. */
  readonly changes = new EventEmitter().setMaxListeners(0);

  private readonly databaseUrl: string | undefined;
  private db: PostgresPool | null = null;
  private feed: ChangeFeed | null = null;
  private closed = false;

  constructor(options: Partial<PostgresStoreOptions>, deps: PostgresStoreDeps) {
    this.options = { ...POSTGRES_STORE_DEFAULTS, ...options };
    this.env = deps.env;
    this.logger = deps.logger;
    this.clock = deps.clock;
    this.databaseUrl = deps.databaseUrl;
    this.cacheDir = this.options.cacheDir || join(deps.env.dataDir, 'pg-cache');
  }

  /** Connects and brings the schema up to date (safe on every node at once: migrate.ts). */
  async open(): Promise<void> {
    if (this.db) return;
    this.closed = false;
    const pool = createPool(this.databaseUrl, {
      max: this.options.poolSize,
      statementTimeoutMs: this.options.statementTimeoutMs,
      applicationName: `refdesk ${this.env.mode}`,
      onIdleError: (message) => this.logger.warn('store: database connection lost', { error: message }),
    });
    try {
      await migrate(pool);
    } catch (e) {
      await pool.end().catch(() => {});
      throw e;
    }
    const feed = new ChangeFeed({
      pool,
      nodeId: this.nodeId,
      logger: this.logger,
      pollMs: this.options.pollMs,
      listen: this.options.listen,
      applicationName: `refdesk ${this.env.mode}`,
      emit: (topic, id, node) => this.changes.emit('change', topic, id, node),
    });
    try {
      await feed.start();
    } catch (e) {
      await feed.stop();
      await pool.end().catch(() => {});
      throw e;
    }
    this.db = pool;
    this.feed = feed;
  }

  /** The change feed (null until open). */
  get changeFeed(): ChangeFeed | null {
    return this.feed;
  }

  /** Whether open() succeeded and close() was not called. */
  get isOpen(): boolean {
    return this.db !== null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const db = this.db;
    this.db = null;
    const feed = this.feed;
    this.feed = null;
    this.changes.removeAllListeners();
    await feed?.stop();
    await db?.end();
  }

  get pool(): PostgresPool {
    if (!this.db) throw new Error(this.closed ? 'The store is closed.' : 'The store is not open.');
    return this.db;
  }

  now(): string {
    return this.clock.now().toISOString();
  }

  /** One statement on a pooled connection; the rows. */
  async query<R extends pg.QueryResultRow = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<R[]> {
    return this.pool.withClient(async (c) => (await c.query<R>(sql, params)).rows);
  }

  /** Runs `fn` in one transaction (rolled back when it throws). */
  async tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.pool.withClient(async (c) => {
      await c.query('BEGIN');
      try {
        const out = await fn(c);
        await c.query('COMMIT');
        return out;
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {});
        throw e;
      }
    });
  }

  /**
   * Tells every node (this one at once, the others through NOTIFY) that `id` changed under
   * `topic`. Call it after the change is committed.
   */
  async publish(topic: ChangeTopic, id: string): Promise<void> {
    this.changes.emit('change', topic, id, this.nodeId);
    try {
      await this.query(PUBLISH_SQL, [CHANGE_CHANNEL, topic, id, this.nodeId]);
    } catch (e) {
      // The change is committed: a lost connection must not fail the caller; the feed sends it later.
      if (!this.feed || !isConnectionError(e)) throw e;
      this.feed.publishLater(topic, id, e);
    }
  }
}

/** Base of the role classes: the shared database and small helpers. */
export abstract class PgRole {
  constructor(readonly database: PgDatabase) {}

  protected get logger(): Logger {
    return this.database.logger;
  }

  protected now(): string {
    return this.database.now();
  }

  /** Throws unless the store is open (reads answered from memory must fail after close too). */
  protected requireOpen(): void {
    void this.database.pool;
  }

  protected query<R extends pg.QueryResultRow = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<R[]> {
    return this.database.query<R>(sql, params);
  }

  protected tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.database.tx(fn);
  }
}

/** A Store method whose PostgreSQL implementation is not written yet (issue 24, in progress). */
export function notBuilt(role: string, method: string): never {
  throw new Error(`The PostgreSQL store's ${role} role has no ${method} yet (issue 24 is in progress).`);
}
