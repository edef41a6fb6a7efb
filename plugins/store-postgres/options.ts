/**
 * The PostgreSQL store's options and their defaults, in a module of their own that loads no
 * driver: the plugin's index.ts (read by every config load) imports it, and `pg` is loaded only
 * when the postgres store is created.
 */

export interface PostgresStoreOptions {
  /** Connections in this node's pool. */
  poolSize: number;
  /** Statement timeout on every pooled connection, in ms (0: none). */
  statementTimeoutMs: number;
  /** Where this node caches index segments on local disk; '' is `<dataDir>/pg-cache`. */
  cacheDir: string;
  /** Memory budget of the open index segments, in bytes (as the embedded store's). */
  segmentCacheBytes: number;
  /** Disk budget of this node's cached segment and vector files, in bytes: past it the least recently used go (fetched again when needed). */
  segmentDiskBytes: number;
  /** A running job's lease: another node may take the job over this long after the last heartbeat. */
  leaseMs: number;
  /** How often the node running a job renews its lease. */
  heartbeatMs: number;
  /** How often the change feed is polled (the fallback when LISTEN is not available, and a safety net). */
  pollMs: number;
  /** LISTEN for changes on a dedicated connection (false: polling only, e.g. behind a pooler in transaction mode). */
  listen: boolean;
}

export const POSTGRES_STORE_DEFAULTS: PostgresStoreOptions = {
  poolSize: 10,
  statementTimeoutMs: 30_000,
  cacheDir: '',
  segmentCacheBytes: 128 * 1024 * 1024,
  segmentDiskBytes: 2 * 1024 * 1024 * 1024,
  leaseMs: 30_000,
  heartbeatMs: 5_000,
  pollMs: 500,
  listen: true,
};
