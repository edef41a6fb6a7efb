/**
 * The default Store: SQLite (sql.js, WASM) held in memory and written atomically to
 * `<dataDir>/<fileName>` after every durable change, and one index segment file per served
 * build. One class per Store role over one shared database (database.ts):
 *
 * - catalog.ts   EmbeddedCatalog   libraries, versions, renames; the library records in memory (catalog-cache.ts)
 * - builds.ts    EmbeddedBuilds    builds, snippets (staging files and packs: build-pack.ts), documents, search, index segments
 * - jobs.ts      EmbeddedJobs      the job queue, claims, job logs
 * - auth.ts      EmbeddedApiKeys, EmbeddedSessions, EmbeddedAudit
 * - settings.ts  EmbeddedSettings
 *
 * EmbeddedStore composes them (core/store-roles.ts) and owns what spans them: open (crash
 * recovery over builds and jobs), close, flush and backup snapshots.
 */
import { writeFile } from 'node:fs/promises';
import { copyFileSync, linkSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Store, StoreLifecycle } from '../../core/contracts.ts';
import { delegateStoreRoles } from '../../core/store-roles.ts';
import { EmbeddedApiKeys, EmbeddedAudit, EmbeddedSessions } from './auth.ts';
import { EmbeddedBuilds } from './builds.ts';
import { EmbeddedCatalog } from './catalog.ts';
import type { CatalogCache } from './catalog-cache.ts';
import { EmbeddedDatabase, EmbeddedRole, type EmbeddedStoreDeps, type EmbeddedStoreOptions } from './database.ts';
import { EmbeddedJobs, RESUMED_LOG_LINE } from './jobs.ts';
import { SEGMENT_DIR } from './segment.ts';
import { EmbeddedSettings } from './settings.ts';
import { all, run, str, transaction } from './sqlite.ts';

export { EMBEDDED_STORE_DEFAULTS, type EmbeddedStoreDeps, type EmbeddedStoreOptions } from './database.ts';
export { JOB_LOG_LIMIT, RESUMED_LOG_LINE } from './jobs.ts';

/** The Store's methods, delegated to the role objects below (core/store-roles.ts). */
export interface EmbeddedStore extends Store {}

export class EmbeddedStore extends EmbeddedRole implements StoreLifecycle {
  readonly catalog: EmbeddedCatalog;
  readonly builds: EmbeddedBuilds;
  readonly jobs: EmbeddedJobs;
  readonly apiKeys: EmbeddedApiKeys;
  readonly sessions: EmbeddedSessions;
  readonly audit: EmbeddedAudit;
  readonly settings: EmbeddedSettings;

  constructor(options: Partial<EmbeddedStoreOptions>, deps: EmbeddedStoreDeps) {
    super(new EmbeddedDatabase(options, deps));
    this.catalog = new EmbeddedCatalog(this.database, () => this.builds);
    this.builds = new EmbeddedBuilds(this.database, this.catalog);
    this.jobs = new EmbeddedJobs(this.database, this.catalog);
    this.apiKeys = new EmbeddedApiKeys(this.database);
    this.sessions = new EmbeddedSessions(this.database);
    this.audit = new EmbeddedAudit(this.database);
    this.settings = new EmbeddedSettings(this.database);
  }

  get options(): EmbeddedStoreOptions {
    return this.database.options;
  }

  /** Absolute path of the database file. */
  get file(): string {
    return this.database.file;
  }

  /** The library records in memory (catalog-cache.ts), kept by the catalog role: loaded at open, touched by every write of a library's rows. */
  get catalogCache(): CatalogCache {
    return this.catalog.cache;
  }

  /** Counts for tests and reports: segments opened from their files, and rebuilt from snippets. */
  get segmentStats(): { opened: number; rebuilt: number } {
    return this.builds.segmentStats;
  }

  /** Segments of finalized builds computed in a worker thread, and on the main thread (no worker could run). */
  get segmentBuilds(): { workerThread: number; mainThread: number } {
    return this.builds.segmentBuilds;
  }

  async open(): Promise<void> {
    await this.database.open(
      () => this.recover(),
      async () => {
        await this.builds.removeStagingFiles(); // their builds were discarded by recover()
        await this.builds.removeUnusedSegments();
      },
      () => this.catalog.cache.all(), // loaded once, at open
    );
  }

  async close(): Promise<void> {
    await this.database.close(() => {
      this.builds.segments.clear();
      this.catalog.cache.clear();
      this.builds.closeStaging();
    });
  }

  /** Writes batched changes (snippets, job log lines) now; resolves when they are durable. */
  async flush(): Promise<void> {
    await this.database.flush();
  }

  /**
   * Discards builds left unfinished by a crash and returns the jobs that were running to
   * `queued`, so that the server runs them again (a rerun builds the version anew).
   */
  private recover(): void {
    const db = this.requireDb();
    const now = this.now();
    const { builds, jobs } = transaction(db, () => {
      const staged = all(db, "SELECT id FROM builds WHERE state = 'building'").map((r) => str(r.id));
      for (const id of staged) {
        run(db, 'DELETE FROM snippets WHERE build_id = ?', [id]);
        run(db, 'DELETE FROM documents WHERE build_id = ?', [id]);
      }
      run(db, "UPDATE builds SET state = 'failed', finished_at = ? WHERE state = 'building'", [now]);
      // Rows of finalized builds whose compressed record was written (a stop while they were deleted).
      run(db, 'DELETE FROM snippets WHERE build_id IN (SELECT build_id FROM build_snippets)');
      const running = all(db, "SELECT id FROM jobs WHERE state = 'running'").map((r) => str(r.id));
      for (const id of running) {
        run(db, "UPDATE jobs SET state = 'queued', error = NULL, finished_at = NULL WHERE id = ?", [id]);
        this.jobs.insertJobLog(db, id, 'warn', RESUMED_LOG_LINE, now);
      }
      return { builds: staged.length, jobs: running.length };
    });
    if (builds > 0 || jobs > 0) {
      this.logger.warn('store: recovered from an interrupted run', { discardedBuilds: builds, requeuedJobs: jobs });
    }
  }

  /**
   * A consistent copy of the store for a backup, taken while it keeps serving and writing: the
   * database exported from memory and, in the same synchronous step (no other store call can run
   * in between), hard links (copies across file systems) of the index segment files it references,
   * under `dir`. `sameStep` runs inside that step too (the caller's own files, e.g. raw uploads).
   * Returns the paths written, relative to `dir`. A referenced segment file (or pack) that is missing is
   * skipped (the store rebuilds a missing segment from the database when it is next opened).
   */
  async snapshot(dir: string, sameStep?: () => void): Promise<string[]> {
    const db = this.requireDb();
    const segDir = join(dir, SEGMENT_DIR);
    mkdirSync(segDir, { recursive: true });
    const data = db.export();
    const written: string[] = [];
    // Segment files and snippet packs (build-pack.ts), both under segments/.
    const files = all(db, "SELECT segment_file AS f FROM builds WHERE state = 'finalized' AND segment_file IS NOT NULL UNION ALL SELECT pack_file FROM builds WHERE state = 'finalized' AND pack_file IS NOT NULL");
    for (const r of files) {
      const file = basename(str(r.f));
      try {
        linkSync(join(this.builds.segmentDir, file), join(segDir, file));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') continue;
        if (code !== 'EXDEV' && code !== 'EPERM') throw err;
        copyFileSync(join(this.builds.segmentDir, file), join(segDir, file));
      }
      written.push(`${SEGMENT_DIR}/${file}`);
    }
    sameStep?.();
    await writeFile(join(dir, basename(this.database.file)), data);
    return [basename(this.database.file), ...written];
  }
}

delegateStoreRoles(EmbeddedStore, {
  catalog: EmbeddedCatalog,
  builds: EmbeddedBuilds,
  jobs: EmbeddedJobs,
  apiKeys: EmbeddedApiKeys,
  sessions: EmbeddedSessions,
  audit: EmbeddedAudit,
  settings: EmbeddedSettings,
});
