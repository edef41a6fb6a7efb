/**
 * The embedded store's one sql.js database and its persistence: opened (under the data
 * directory's lock when writing), written atomically to `<dataDir>/<fileName>` after every
 * durable change, batched changes flushed on a timer. The role classes (catalog.ts, builds.ts,
 * jobs.ts, auth.ts, settings.ts) share it through EmbeddedRole.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock, Logger, RuntimeEnv } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { acquireDataLock, type DataLock } from '../../core/data-lock.ts';
import { removeStaleTempFiles, writeFileAtomic } from './atomic-write.ts';
import { ensureSchema } from './schema.ts';
import { get, loadSqlJs, num, type Database } from './sqlite.ts';

export interface EmbeddedStoreOptions {
  /** Name of the database file inside the data directory. */
  fileName: string;
  /** How often batched changes (snippets, job log lines) are written, in milliseconds. */
  flushIntervalMs: number;
  /** How many index segment files are held open at most (past it a segment closes its file and stays decoded within segmentCacheBytes: segment-cache.ts). */
  indexCacheSize: number;
  /**
   * Memory budget of the open index segments, in bytes (their index parts; snippet text is read
   * from the files per answer). Least recently used segments are closed beyond it.
   */
  segmentCacheBytes: number;
}

export const EMBEDDED_STORE_DEFAULTS: EmbeddedStoreOptions = {
  fileName: 'refdesk.sqlite',
  flushIntervalMs: 2000,
  indexCacheSize: 16,
  segmentCacheBytes: 128 * 1024 * 1024,
};

export interface EmbeddedStoreDeps {
  env: RuntimeEnv;
  logger: Logger;
  clock: Clock;
}

export class EmbeddedDatabase {
  readonly options: EmbeddedStoreOptions;
  /** Absolute path of the database file. */
  readonly file: string;

  readonly env: RuntimeEnv;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly readOnly: boolean;

  private db: Database | null = null;
  private closed = false;
  private lock: DataLock | null = null;
  private timer: NodeJS.Timeout | null = null;

  /** Changes in memory that are not yet in the file. */
  private dirty = false;
  /** The last write started or queued; writes never overlap. */
  private writeChain: Promise<void> = Promise.resolve();
  /** A write queued behind the running one, not started yet: later changes join it. */
  private queuedWrite: Promise<void> | null = null;

  constructor(options: Partial<EmbeddedStoreOptions>, deps: EmbeddedStoreDeps) {
    this.options = { ...EMBEDDED_STORE_DEFAULTS, ...options };
    const { fileName } = this.options;
    if (!fileName || /[\\/]/.test(fileName) || fileName === '.' || fileName === '..') {
      throw new RefdeskError('config_error', `store "embedded": fileName must be a plain file name, without directories.`);
    }
    this.env = deps.env;
    this.logger = deps.logger;
    this.clock = deps.clock;
    this.file = join(deps.env.dataDir, fileName);
    this.readOnly = deps.env.mode === 'reader';
  }

  /**
   * Opens the database file (read-only, or for writing under the data directory's lock); for
   * writing, `recover` runs on the loaded database before its first write and `cleanUp` after it.
   * `loaded` runs last in both modes, once the database is ready (in-memory caches read from it).
   */
  async open(recover: () => void, cleanUp: () => Promise<void>, loaded: () => void = () => {}): Promise<void> {
    if (this.db) return;
    if (this.closed) throw new RefdeskError('internal_error', 'The store was closed; create a new one to open it again.');
    const SQL = await loadSqlJs();

    if (this.readOnly) {
      const data = await this.readDbFile();
      const db = new SQL.Database(data);
      try {
        ensureSchema(db, this.file); // in memory only when the file is missing
      } catch (err) {
        db.close();
        throw this.unreadable(err);
      }
      this.db = db;
      loaded();
      this.logger.debug('store: opened read-only', { file: this.file, exists: data !== null });
      return;
    }

    await mkdir(this.env.dataDir, { recursive: true });
    this.lock = await acquireDataLock(
      this.env.dataDir,
      {
        pid: process.pid,
        mode: this.env.mode,
        ...(this.env.mode === 'server' && this.env.port !== undefined ? { port: this.env.port } : {}),
        startedAt: this.now(),
      },
      (stale) =>
        this.logger.warn('store: taking over a stale lock (its process has exited)', {
          dataDir: this.env.dataDir,
          ...(stale ? { pid: stale.pid, mode: stale.mode } : {}),
        }),
    );
    let db: Database | null = null;
    try {
      const removed = await removeStaleTempFiles(this.file);
      if (removed.length > 0) this.logger.warn('store: removed temporary files of an interrupted write', { files: removed });
      const data = await this.readDbFile();
      db = new SQL.Database(data);
      try {
        ensureSchema(db, this.file);
      } catch (err) {
        throw this.unreadable(err);
      }
      this.db = db;
      recover();
      // Written back only when the schema was made or migrated, or recover() changed rows: otherwise
      // the file holds what was just read, and exporting and writing it would only slow the start.
      if (num(get(db, 'SELECT total_changes() AS n')?.n) > 0) await this.persist();
      await cleanUp();
      loaded();
    } catch (err) {
      this.db = null;
      db?.close();
      await this.lock.release().catch(() => {});
      this.lock = null;
      throw err;
    }
    this.timer = setInterval(() => this.flushOnTimer(), this.options.flushIntervalMs);
    this.timer.unref();
    this.logger.info('store: opened', { file: this.file, mode: this.env.mode });
  }

  async close(onClosed: () => void): Promise<void> {
    if (!this.db) {
      this.closed = true;
      return;
    }
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    let failure: unknown = null;
    try {
      if (!this.readOnly && this.dirty) await this.persist();
      else await this.writeChain.catch(() => {});
    } catch (err) {
      failure = err;
    }
    this.db.close();
    this.db = null;
    this.closed = true;
    onClosed();
    if (this.lock) {
      await this.lock.release().catch((err: unknown) => this.logger.warn('store: could not remove the lock file', { error: String(err) }));
      this.lock = null;
    }
    if (failure) throw failure;
  }

  /** Writes batched changes (snippets, job log lines) now; resolves when they are durable. */
  async flush(): Promise<void> {
    this.requireDb();
    if (this.readOnly) return;
    if (this.dirty) await this.persist();
    else await this.writeChain;
  }

  private flushOnTimer(): void {
    if (!this.db || !this.dirty || this.queuedWrite) return;
    this.persist().catch((err: unknown) => this.logger.error('store: writing the database failed; will retry', { file: this.file, error: String(err) }));
  }

  /**
   * Makes everything changed so far durable. Writes are serialized; a call made while a write
   * runs joins the next one, which exports the database when it starts.
   */
  persist(): Promise<void> {
    this.dirty = true;
    if (this.queuedWrite) return this.queuedWrite;
    const next = this.writeChain
      .catch(() => {})
      .then(() => {
        this.queuedWrite = null;
        return this.writeNow();
      });
    this.queuedWrite = next;
    this.writeChain = next;
    return next;
  }

  /** Marks changes that the flush timer, close() or the next durable call writes (batched changes). */
  markDirty(): void {
    this.dirty = true;
  }

  private async writeNow(): Promise<void> {
    if (!this.dirty || !this.db) return;
    this.dirty = false;
    try {
      const data = this.db.export();
      await writeFileAtomic(this.file, data);
    } catch (err) {
      this.dirty = true;
      throw err;
    }
  }

  private async readDbFile(): Promise<Uint8Array | null> {
    try {
      return await readFile(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  private unreadable(err: unknown): unknown {
    if (err instanceof RefdeskError) return err;
    return new RefdeskError('internal_error', `Cannot read the data file ${this.file}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }

  now(): string {
    return this.clock.now().toISOString();
  }

  requireDb(): Database {
    if (!this.db) {
      throw new RefdeskError('internal_error', this.closed ? 'The store is closed.' : 'The store is not open yet: call open() first.');
    }
    return this.db;
  }

  requireWritable(): Database {
    const db = this.requireDb();
    if (this.readOnly) {
      throw new RefdeskError(
        'store_locked',
        `The store is open read-only (reader mode) on ${this.env.dataDir}: this command cannot change it. ` +
          `Make changes through the running server's HTTP API, or with a command that opens the data directory for writing.`,
      );
    }
    return db;
  }
}

/** The base of the embedded store's role classes: the shared database and its helpers. */
export abstract class EmbeddedRole {
  constructor(readonly database: EmbeddedDatabase) {}

  protected get logger(): Logger {
    return this.database.logger;
  }

  protected get env(): RuntimeEnv {
    return this.database.env;
  }

  protected get readOnly(): boolean {
    return this.database.readOnly;
  }

  protected now(): string {
    return this.database.now();
  }

  protected requireDb(): Database {
    return this.database.requireDb();
  }

  protected requireWritable(): Database {
    return this.database.requireWritable();
  }

  /** Makes everything changed so far durable (EmbeddedDatabase.persist). */
  protected persist(): Promise<void> {
    return this.database.persist();
  }

  /** A batched change: written by the flush timer, close() or the next durable call. */
  protected markDirty(): void {
    this.database.markDirty();
  }
}
