/**
 * The PostgreSQL Store (issue 24, in progress): one class per Store role over one shared pool
 * (database.ts), composed like the embedded store (core/store-roles.ts):
 *
 * - catalog.ts   PgCatalog    libraries, versions, renames
 * - builds.ts    PgBuilds     builds, snippets, documents, search; index segments as chunked rows, cached on local disk
 * - jobs.ts      PgJobs       the job queue with leases (FOR UPDATE SKIP LOCKED, heartbeat), job logs
 * - auth.ts      PgApiKeys, PgSessions, PgAudit
 * - settings.ts  PgSettings
 * - uploads.ts, library-vectors.ts  raw uploads and library-search vectors any node reads
 */
import type { Store, StoreLifecycle } from '../../core/contracts.ts';
import { delegateStoreRoles } from '../../core/store-roles.ts';
import { PgApiKeys, PgAudit, PgSessions } from './auth.ts';
import { PgBuilds } from './builds.ts';
import { PgCatalog } from './catalog.ts';
import { PgDatabase, type PostgresStoreDeps, type PostgresStoreOptions } from './database.ts';
import { PgJobs } from './jobs.ts';
import { PgLibraryVectors } from './library-vectors.ts';
import { PgRateLimits } from './rate-limits.ts';
import { pgStoreStatus, type PgStoreStatus } from './readiness.ts';
import { PgSettings } from './settings.ts';
import { PgUploads } from './uploads.ts';
import { PostgresStoreError } from './pool.ts';
import { RefdeskError } from '../../core/errors.ts';

export { POSTGRES_STORE_DEFAULTS, type PostgresStoreDeps, type PostgresStoreOptions } from './database.ts';

/**
 * The store could not open its database: the start (server or CLI) stops with this one line,
 * which names host:port/database and never the password (pool.ts). `storeError.code` is the
 * PostgresStoreError code (database_unavailable, database_auth_failed, ...).
 */
export class PostgresOpenError extends RefdeskError {
  constructor(readonly storeError: PostgresStoreError) {
    super('config_error', `The PostgreSQL store cannot open its database: ${storeError.message}`);
    this.name = 'PostgresOpenError';
  }
}

/** The Store's methods, delegated to the role objects below (core/store-roles.ts). */
export interface PostgresStore extends Store {}

export class PostgresStore implements StoreLifecycle {
  readonly database: PgDatabase;
  readonly catalog: PgCatalog;
  readonly builds: PgBuilds;
  readonly jobs: PgJobs;
  readonly apiKeys: PgApiKeys;
  readonly sessions: PgSessions;
  readonly audit: PgAudit;
  readonly settings: PgSettings;
  /** Rate-limit counts shared by the nodes (core/contracts.ts RateLimitCounters; server/access/rate-limit.ts). */
  readonly rateLimitCounters: PgRateLimits;
  /** Raw uploads any node can read (core/contracts.ts UploadStore; core/uploads.ts). */
  readonly uploads: PgUploads;
  /** Library-search vectors every node ranks by (core/contracts.ts LibraryVectorStore; core/vectors.ts). */
  readonly libraryVectors: PgLibraryVectors;

  constructor(options: Partial<PostgresStoreOptions>, deps: PostgresStoreDeps) {
    this.database = new PgDatabase(options, deps);
    this.catalog = new PgCatalog(this.database);
    this.builds = new PgBuilds(this.database, this.catalog);
    this.jobs = new PgJobs(this.database, this.catalog);
    this.apiKeys = new PgApiKeys(this.database);
    this.sessions = new PgSessions(this.database);
    this.audit = new PgAudit(this.database);
    this.settings = new PgSettings(this.database);
    this.rateLimitCounters = new PgRateLimits(this.database);
    this.uploads = new PgUploads(this.database);
    this.libraryVectors = new PgLibraryVectors(this.database);
  }

  /** Connects and migrates (database.ts), then recovers jobs; a database failure is a PostgresOpenError. */
  async open(): Promise<void> {
    try {
      await this.database.open();
    } catch (e) {
      throw e instanceof PostgresStoreError ? new PostgresOpenError(e) : e;
    }
    await this.jobs.recover();
  }

  async close(): Promise<void> {
    this.jobs.stop(); // no lease renewed after this
    this.builds.close();
    await this.database.close();
  }

  /** The database and migration state, for GET /api/ready (readiness.ts; never throws). */
  storeStatus(): Promise<PgStoreStatus> {
    return pgStoreStatus(this.database);
  }
}

delegateStoreRoles(PostgresStore, {
  catalog: PgCatalog,
  builds: PgBuilds,
  jobs: PgJobs,
  apiKeys: PgApiKeys,
  sessions: PgSessions,
  audit: PgAudit,
  settings: PgSettings,
});
