/**
 * The default Store: SQLite (sql.js, WASM) held in memory and written atomically to
 * `<dataDir>/<fileName>` after every durable change.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { copyFileSync, linkSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gunzip as gunzipCb, gunzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import type {
  AdminAccountRecord,
  AuditEntry,
  AuditEntryInput,
  SessionRecord,
  ApiKeyInput,
  ApiKeyRecord,
  BuildDocument,
  BuildStats,
  Clock,
  IngestProgress,
  JobLogLine,
  JobRecord,
  JobState,
  LibraryInput,
  LibraryRecord,
  LibraryState,
  Logger,
  LogLevel,
  RuntimeEnv,
  SearchHit,
  SegmentFileRef,
  Snippet,
  Store,
  StoredSnippet,
  VersionRecord,
} from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import {
  LOG_LEVELS,
  applyJobPatch,
  libraryServing,
  invalid,
  jobStateToLibraryState,
  libraryBusy,
  libraryNotFound,
  notServedError,
  validateLibraryInput,
} from '../../core/store-rules.ts';
import { computeIndexData } from '../../core/search/index-data.ts';
import { DEFAULT_BM25 } from '../../core/search/lexical-index.ts';
import { removeStaleTempFiles, writeFileAtomic } from './atomic-write.ts';
import {
  SEGMENT_DIR,
  SegmentError,
  memorySegment,
  openSegment,
  removeOrphanSegments,
  removeSegments,
  searchServedSegment,
  writeSegment,
  type ServedSegment,
} from './segment.ts';
import { SegmentCache } from './segment-cache.ts';
import { CatalogCache } from './catalog-cache.ts';
import { PackError, StagingFile, batchesOf, packFileName, readPack, readPackSync, readSnippetsFileSync, readStaging, removeOrphanPacks, removePacks, removeStagingFiles, stagingFileName, writePack } from './build-pack.ts';
import { removeOrphanStoredDocs, removeStoredDocs } from '../../core/stored-docs.ts';
import { runWorkerTask, workerUrl } from '../../core/worker-task.ts';
import { acquireDataLock, type DataLock } from '../../core/data-lock.ts';
import { ensureSchema } from './schema.ts';
import { insertAudit, insertSession, patchSession, readAdminAccount, removeSessions, selectAudit, selectSession, writeAdminAccount } from './auth-tables.ts';
import { duplicateApiKey, renameTargetExists, settingJson, validateApiKeyInput, validateRename, validateSettingKey } from '../../core/store-admin-rules.ts';
import { all, get, loadSqlJs, num, run, str, strOrNull, transaction, type Database, type Row } from './sqlite.ts';
import { sortVersionsNewestFirst } from '../../core/version-order.ts';

export interface EmbeddedStoreOptions {
  /** Name of the database file inside the data directory. */
  fileName: string;
  /** How often batched changes (snippets, job log lines) are written, in milliseconds. */
  flushIntervalMs: number;
  /** How many index segments are kept open at most (each holds an open file). */
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

/** Job log lines kept per job; older lines are dropped. */
export const JOB_LOG_LIMIT = 2000;

/** The job log line of a job that was running when the process stopped, at the next open. */
export const RESUMED_LOG_LINE = 'resumed after restart: the process stopped while this job ran; its partial build was discarded and the job queued to run again';


const SNIPPET_COLUMNS =
  'id, seq, type, title, description, language, code, content, breadcrumb, page_title, source_path, source_url, anchor, line_start, line_end, tokens';

const gunzipAsync = promisify(gunzipCb);

function frozenSnippets(list: StoredSnippet[]): StoredSnippet[] {
  for (const s of list) {
    Object.freeze(s.breadcrumb);
    Object.freeze(s);
  }
  return list;
}

/** A snippets-table row (SNIPPET_COLUMNS) as a StoredSnippet. */
function rowToSnippet(r: unknown[]): StoredSnippet {
  return {
    id: r[0] as number,
    seq: r[1] as number,
    type: r[2] as StoredSnippet['type'],
    title: r[3] as string,
    description: r[4] as string,
    language: r[5] as string,
    code: r[6] as string,
    content: r[7] as string,
    breadcrumb: parseJson<string[]>(r[8], []),
    pageTitle: r[9] as string,
    sourcePath: r[10] as string,
    ...(r[11] != null ? { sourceUrl: r[11] as string } : {}),
    ...(r[12] != null ? { anchor: r[12] as string } : {}),
    lineStart: r[13] as number,
    lineEnd: r[14] as number,
    tokens: r[15] as number,
  };
}

function parseJson<T>(text: unknown, fallback: T): T {
  if (typeof text !== 'string') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/**
 * Reserves `n` snippet ids from the snippets table's AUTOINCREMENT sequence: staged snippets
 * (build-pack.ts) are numbered as rows were, so ids stay unique across old and new builds.
 */
function reserveSnippetIds(db: Database, n: number): number {
  const row = get(db, "SELECT seq FROM sqlite_sequence WHERE name = 'snippets'");
  const first = (row ? num(row.seq) : 0) + 1;
  if (row) run(db, "UPDATE sqlite_sequence SET seq = ? WHERE name = 'snippets'", [first + n - 1]);
  else run(db, "INSERT INTO sqlite_sequence (name, seq) VALUES ('snippets', ?)", [first + n - 1]);
  return first;
}

/** A snippet as staged and served: the record rowToSnippet gives for its row. */
function toStoredSnippet(s: Snippet, id: number, seq: number): StoredSnippet {
  return {
    id,
    seq,
    type: s.type,
    title: s.title ?? '',
    description: s.description ?? '',
    language: s.language ?? '',
    code: s.code ?? '',
    content: s.content ?? '',
    breadcrumb: s.breadcrumb ?? [],
    pageTitle: s.pageTitle ?? '',
    sourcePath: s.sourcePath ?? '',
    ...(s.sourceUrl != null ? { sourceUrl: s.sourceUrl } : {}),
    ...(s.anchor != null ? { anchor: s.anchor } : {}),
    lineStart: s.lineStart ?? 0,
    lineEnd: s.lineEnd ?? 0,
    tokens: s.tokens ?? 0,
  };
}

/** Builds of at most this many snippets get their segment computed on the main thread (see writeSegmentOffThread). */
const MAIN_THREAD_SNIPPETS = 300;

export class EmbeddedStore implements Store {
  readonly options: EmbeddedStoreOptions;
  /** Absolute path of the database file. */
  readonly file: string;

  private readonly env: RuntimeEnv;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly readOnly: boolean;
  private readonly segments: SegmentCache;
  private readonly segmentDir: string;
  /** Segments being opened or rebuilt, so concurrent queries share the work. */
  private readonly pendingSegments = new Map<string, Promise<ServedSegment>>();
  /** Counts for tests and reports: segments opened from their files, and rebuilt from snippets. */
  readonly segmentStats = { opened: 0, rebuilt: 0 };
  /** Segments of finalized builds computed in a worker thread, and on the main thread (no worker could run). */
  readonly segmentBuilds = { workerThread: 0, mainThread: 0 };
  /** The library records in memory (catalog-cache.ts); every write of a library's rows touches it. */
  readonly catalog = new CatalogCache((id) => this.libraryRecords(id));
  /** The staging files of the builds being built by this process (build-pack.ts). */
  private readonly staging = new Map<string, StagingFile>();

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
    this.segments = new SegmentCache(this.options.segmentCacheBytes, this.options.indexCacheSize);
    this.segmentDir = join(deps.env.dataDir, SEGMENT_DIR);
  }

  // -------------------------------------------------------------------------------------------
  // Lifecycle and persistence
  // -------------------------------------------------------------------------------------------

  async open(): Promise<void> {
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
      this.catalog.all(); // loaded once, at open
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
      await removeStagingFiles(this.segmentDir); // their builds are discarded by recover()
      const data = await this.readDbFile();
      db = new SQL.Database(data);
      try {
        ensureSchema(db, this.file);
      } catch (err) {
        throw this.unreadable(err);
      }
      this.db = db;
      this.recover();
      await this.persist();
      await this.removeUnusedSegments();
      this.catalog.all(); // loaded once, at open
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

  async close(): Promise<void> {
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
    this.segments.clear();
    this.catalog.clear();
    for (const f of this.staging.values()) f.close();
    this.staging.clear();
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
  private persist(): Promise<void> {
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
        this.insertJobLog(db, id, 'warn', RESUMED_LOG_LINE, now);
      }
      return { builds: staged.length, jobs: running.length };
    });
    if (builds > 0 || jobs > 0) {
      this.logger.warn('store: recovered from an interrupted run', { discardedBuilds: builds, requeuedJobs: jobs });
    }
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  private requireDb(): Database {
    if (!this.db) {
      throw new RefdeskError('internal_error', this.closed ? 'The store is closed.' : 'The store is not open yet: call open() first.');
    }
    return this.db;
  }

  private requireWritable(): Database {
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

  // -------------------------------------------------------------------------------------------
  // Catalog
  // -------------------------------------------------------------------------------------------

  async upsertLibrary(input: LibraryInput): Promise<LibraryRecord> {
    const db = this.requireWritable();
    validateLibraryInput(input);
    const existing = get(db, 'SELECT * FROM libraries WHERE id = ?', [input.id]);
    const spec = JSON.stringify(input.source.spec ?? {});
    if (existing) {
      run(
        db,
        `UPDATE libraries SET title = ?, description = ?, branch = ?, source_kind = ?, source_spec = ?,
           stars = ?, trust_score = ?, benchmark_score = ? WHERE id = ?`,
        [
          input.title,
          input.description ?? str(existing.description),
          input.branch ?? str(existing.branch),
          input.source.kind,
          spec,
          input.stars ?? num(existing.stars),
          input.trustScore ?? num(existing.trust_score),
          input.benchmarkScore ?? num(existing.benchmark_score),
          input.id,
        ],
      );
    } else {
      run(
        db,
        `INSERT INTO libraries (id, title, description, branch, source_kind, source_spec, stars, trust_score, benchmark_score, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          input.id,
          input.title,
          input.description ?? '',
          input.branch ?? '',
          input.source.kind,
          spec,
          input.stars ?? 0,
          input.trustScore ?? 0,
          input.benchmarkScore ?? 0,
          this.now(),
        ],
      );
    }
    this.catalog.touch(input.id);
    await this.persist();
    return this.catalog.one(input.id)!;
  }

  async getLibrary(id: string): Promise<LibraryRecord | null> {
    this.requireDb();
    return this.catalog.one(id);
  }

  async listLibraries(): Promise<LibraryRecord[]> {
    this.requireDb();
    return this.catalog.all();
  }

  async deleteLibrary(id: string, version?: string): Promise<boolean> {
    const db = this.requireWritable();
    if (version !== undefined && typeof version !== 'string') throw invalid('The version must be a string ("" for the default version).');
    if (!get(db, 'SELECT 1 AS x FROM libraries WHERE id = ?', [id])) return false;
    // "AND (?2 IS NULL OR version = ?2)": the whole library, or one version of it.
    const scope = [id, version ?? null];
    const known = get(
      db,
      `SELECT 1 AS x FROM versions WHERE library_id = ?1 AND (?2 IS NULL OR version = ?2)
       UNION SELECT 1 FROM builds WHERE library_id = ?1 AND (?2 IS NULL OR version = ?2)
       UNION SELECT 1 FROM jobs WHERE library_id = ?1 AND (?2 IS NULL OR version = ?2)`,
      scope,
    );
    if (version !== undefined && !known) return false;
    const busy = get(db, "SELECT id FROM jobs WHERE library_id = ?1 AND (?2 IS NULL OR version = ?2) AND state = 'running' LIMIT 1", scope);
    if (busy) throw libraryBusy(id, version, str(busy.id));
    const buildIds = all(db, 'SELECT id FROM builds WHERE library_id = ?1 AND (?2 IS NULL OR version = ?2)', scope).map((r) => str(r.id));
    transaction(db, () => {
      const builds = 'SELECT id FROM builds WHERE library_id = ?1 AND (?2 IS NULL OR version = ?2)';
      run(db, `DELETE FROM snippets WHERE build_id IN (${builds})`, scope);
      run(db, `DELETE FROM build_snippets WHERE build_id IN (${builds})`, scope);
      run(db, `DELETE FROM documents WHERE build_id IN (${builds})`, scope);
      run(db, 'DELETE FROM builds WHERE library_id = ?1 AND (?2 IS NULL OR version = ?2)', scope);
      run(db, 'DELETE FROM versions WHERE library_id = ?1 AND (?2 IS NULL OR version = ?2)', scope);
      run(db, 'DELETE FROM job_logs WHERE job_id IN (SELECT id FROM jobs WHERE library_id = ?1 AND (?2 IS NULL OR version = ?2))', scope);
      run(db, 'DELETE FROM jobs WHERE library_id = ?1 AND (?2 IS NULL OR version = ?2)', scope);
      if (version === undefined) {
        run(db, 'DELETE FROM libraries WHERE id = ?', [id]);
        run(db, 'DELETE FROM library_aliases WHERE target = ?', [id]);
      }
    });
    for (const b of buildIds) this.segments.delete(b);
    this.catalog.touch(id);
    await this.discardStaging(buildIds);
    await this.persist();
    await this.removeSegmentFiles(buildIds);
    await this.removeStoredDocs(buildIds);
    return true;
  }

  /** Library records, all of them (by id) or the one with this id. */
  private libraryRecords(id: string | null): LibraryRecord[] {
    const db = this.requireDb();
    const where = id === null ? '' : ' WHERE id = ?';
    const params = id === null ? [] : [id];
    const libs = all(db, `SELECT * FROM libraries${where} ORDER BY id`, params);
    if (libs.length === 0) return [];

    const served = all(
      db,
      `SELECT library_id, version, last_update_date, total_tokens, total_snippets FROM versions
       WHERE active_build_id IS NOT NULL${id === null ? '' : ' AND library_id = ?'}`,
      params,
    );
    const versionsByLib = new Map<string, Row[]>();
    for (const v of served) {
      const k = str(v.library_id);
      versionsByLib.set(k, [...(versionsByLib.get(k) ?? []), v]);
    }
    const newestJob = new Map<string, string>();
    const jobRows =
      id === null
        ? all(
            db,
            `SELECT library_id, state FROM (
               SELECT library_id, state, ROW_NUMBER() OVER (PARTITION BY library_id ORDER BY created_at DESC, rowid DESC) AS rn FROM jobs
             ) WHERE rn = 1`,
          )
        : all(db, 'SELECT library_id, state FROM jobs WHERE library_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1', [id]);
    for (const j of jobRows) newestJob.set(str(j.library_id), str(j.state));

    return libs.map((lib) => {
      const libId = str(lib.id);
      const versions = versionsByLib.get(libId) ?? [];
      const def = versions.find((v) => str(v.version) === '');
      const pinned = sortVersionsNewestFirst(
        versions
          .filter((v) => str(v.version) !== '')
          .map((v) => ({ row: v, version: str(v.version), lastUpdateDate: strOrNull(v.last_update_date) })),
      );
      const { state, shown } = libraryServing(def, pinned, newestJob.get(libId));
      return {
        id: libId,
        title: str(lib.title),
        description: str(lib.description),
        branch: str(lib.branch),
        lastUpdateDate: shown ? strOrNull(shown.last_update_date) : null,
        state,
        totalTokens: shown ? num(shown.total_tokens) : 0,
        totalSnippets: shown ? num(shown.total_snippets) : 0,
        stars: num(lib.stars),
        trustScore: num(lib.trust_score),
        benchmarkScore: num(lib.benchmark_score),
        versions: pinned.map((p) => p.version),
        source: { kind: str(lib.source_kind), spec: parseJson<Record<string, unknown>>(lib.source_spec, {}) },
        createdAt: str(lib.created_at),
      };
    });
  }

  // -------------------------------------------------------------------------------------------
  // Versions
  // -------------------------------------------------------------------------------------------

  async getVersion(libraryId: string, version: string): Promise<VersionRecord | null> {
    this.requireDb();
    return this.versionRecord(libraryId, version);
  }

  async listVersions(libraryId: string): Promise<VersionRecord[]> {
    const db = this.requireDb();
    const names = all(
      db,
      `SELECT version FROM versions WHERE library_id = ?1
       UNION SELECT version FROM builds WHERE library_id = ?1
       UNION SELECT version FROM jobs WHERE library_id = ?1`,
      [libraryId],
    ).map((r) => str(r.version));
    const records = names.map((v) => this.versionRecord(libraryId, v)).filter((r): r is VersionRecord => r !== null);
    const def = records.filter((r) => r.version === '');
    return [...def, ...sortVersionsNewestFirst(records.filter((r) => r.version !== ''))];
  }

  /**
   * A version is known once it has been built, is being built, or has a job. Its state:
   * finalized when it has a served build; otherwise from its newest job (or build).
   */
  private versionRecord(libraryId: string, version: string): VersionRecord | null {
    const db = this.requireDb();
    if (!get(db, 'SELECT 1 AS x FROM libraries WHERE id = ?', [libraryId])) return null;
    const row = get(db, 'SELECT * FROM versions WHERE library_id = ? AND version = ?', [libraryId, version]);
    const activeBuildId = row ? strOrNull(row.active_build_id) : null;
    let state: LibraryState | null = activeBuildId ? 'finalized' : null;
    const job = get(db, 'SELECT state FROM jobs WHERE library_id = ? AND version = ? ORDER BY created_at DESC, rowid DESC LIMIT 1', [
      libraryId,
      version,
    ]);
    const build = get(db, 'SELECT state FROM builds WHERE library_id = ? AND version = ? ORDER BY started_at DESC, rowid DESC LIMIT 1', [
      libraryId,
      version,
    ]);
    if (!row && !job && !build) return null;
    state ??= jobStateToLibraryState(job ? str(job.state) : null);
    if (!state && build) state = str(build.state) === 'building' ? 'processing' : str(build.state) === 'failed' ? 'error' : null;
    return {
      libraryId,
      version,
      state: state ?? 'initial',
      activeBuildId,
      lastUpdateDate: row ? strOrNull(row.last_update_date) : null,
      totalTokens: row ? num(row.total_tokens) : 0,
      totalSnippets: row ? num(row.total_snippets) : 0,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Builds
  // -------------------------------------------------------------------------------------------

  async beginBuild(libraryId: string, version: string, jobId: string | null): Promise<string> {
    const db = this.requireWritable();
    if (typeof version !== 'string') throw invalid('The version must be a string ("" for the default version).');
    if (!get(db, 'SELECT 1 AS x FROM libraries WHERE id = ?', [libraryId])) throw libraryNotFound(libraryId);
    const id = randomUUID();
    run(db, "INSERT INTO builds (id, library_id, version, job_id, state, started_at) VALUES (?, ?, ?, ?, 'building', ?)", [
      id,
      libraryId,
      version,
      jobId,
      this.now(),
    ]);
    await this.persist();
    return id;
  }

  private stagedBuild(db: Database, buildId: string): Row {
    const build = get(db, 'SELECT * FROM builds WHERE id = ?', [buildId]);
    if (!build) throw invalid(`Build "${buildId}" not found (its library may have been deleted).`);
    if (str(build.state) !== 'building') throw invalid(`Build "${buildId}" is ${str(build.state)}; it no longer accepts changes.`);
    return build;
  }

  async addSnippets(buildId: string, snippets: Snippet[]): Promise<void> {
    const db = this.requireWritable();
    this.stagedBuild(db, buildId);
    if (snippets.length === 0) return;
    // Staged in a file, not in sql.js (build-pack.ts); ids still come from the snippets table's sequence.
    const staged = this.stagingFor(buildId);
    const first = reserveSnippetIds(db, snippets.length);
    staged.append(snippets.map((s, i) => toStoredSnippet(s, first + i, staged.count + i)));
    this.dirty = true; // the id sequence: batched
  }

  /** The staging file of a build being built, opened at its first snippets. */
  private stagingFor(buildId: string): StagingFile {
    let f = this.staging.get(buildId);
    if (!f) {
      mkdirSync(this.segmentDir, { recursive: true });
      f = new StagingFile(join(this.segmentDir, stagingFileName(buildId)));
      this.staging.set(buildId, f);
    }
    return f;
  }

  /** Closes and removes the staging files of these builds (finalized, failed or deleted). */
  private async discardStaging(buildIds: readonly string[]): Promise<void> {
    for (const id of buildIds) {
      const f = this.staging.get(id);
      this.staging.delete(id);
      await f?.discard().catch((err: unknown) => this.logger.warn('store: could not remove a staging file', { buildId: id, error: String(err) }));
    }
  }

  async addDocuments(buildId: string, documents: BuildDocument[]): Promise<void> {
    const db = this.requireWritable();
    this.stagedBuild(db, buildId);
    if (documents.length === 0) return;
    transaction(db, () => {
      const stmt = db.prepare('INSERT OR REPLACE INTO documents (build_id, path, hash, meta, chunker) VALUES (?, ?, ?, ?, ?)');
      try {
        for (const d of documents) stmt.run([buildId, d.path, d.hash, JSON.stringify(d.meta ?? {}), d.chunker ?? '']);
      } finally {
        stmt.free();
      }
    });
    this.dirty = true; // batched like snippets
  }

  async getDocuments(libraryId: string, version: string): Promise<Map<string, BuildDocument>> {
    const db = this.requireDb();
    const out = new Map<string, BuildDocument>();
    const row = get(db, 'SELECT active_build_id FROM versions WHERE library_id = ? AND version = ?', [libraryId, version]);
    if (row?.active_build_id == null) return out;
    for (const r of all(db, 'SELECT path, hash, meta, chunker FROM documents WHERE build_id = ?', [str(row.active_build_id)])) {
      out.set(str(r.path), { path: str(r.path), hash: str(r.hash), meta: JSON.parse(str(r.meta)) as Record<string, string>, chunker: str(r.chunker) });
    }
    return out;
  }

  async finalizeBuild(buildId: string): Promise<VersionRecord> {
    const db = this.requireWritable();
    const build = this.stagedBuild(db, buildId);
    const libraryId = str(build.library_id);
    const version = str(build.version);
    // The index segment first: a build is served with its segment written. Both are made from the
    // staging file, side by side and off the event loop: the segment in a worker thread, the pack
    // (build-pack.ts: blocks compressed by async zlib) here, streamed a block at a time.
    const staged = this.stagingFor(buildId);
    const totals: BuildStats = { totalSnippets: staged.count, totalTokens: staged.tokens };
    const [segment, pack] = await Promise.all([
      this.writeSegmentOffThread(buildId, staged.path, staged.count),
      writePack(this.segmentDir, buildId, readStaging(staged.path)),
    ]).catch(async (err: unknown) => {
      await this.removeSegmentFiles([buildId]);
      throw err;
    });
    try {
      this.stagedBuild(db, buildId); // still staged after the write (not failed or deleted meanwhile)
      if (staged.count !== totals.totalSnippets || pack.count !== totals.totalSnippets) {
        throw invalid(`Build "${buildId}" received snippets while it was being finalized; finalize it again.`);
      }
    } catch (err) {
      await this.removeSegmentFiles([buildId]);
      throw err;
    }
    const now = this.now();
    const previous = transaction(db, () => {
      const current = get(db, 'SELECT active_build_id FROM versions WHERE library_id = ? AND version = ?', [libraryId, version]);
      const prev = current ? strOrNull(current.active_build_id) : null;
      run(
        db,
        `INSERT INTO versions (library_id, version, active_build_id, last_update_date, total_tokens, total_snippets)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (library_id, version) DO UPDATE SET active_build_id = excluded.active_build_id,
           last_update_date = excluded.last_update_date, total_tokens = excluded.total_tokens, total_snippets = excluded.total_snippets`,
        [libraryId, version, buildId, now, totals.totalTokens, totals.totalSnippets],
      );
      // The served snippets: the pack (the segment serves them; this is its source).
      run(db, "UPDATE builds SET state = 'finalized', finished_at = ?, segment_file = ?, segment_format = ?, segment_checksum = ?, pack_file = ? WHERE id = ?", [
        now,
        segment.file,
        segment.format,
        segment.checksum,
        pack.file,
        buildId,
      ]);
      if (prev && prev !== buildId) {
        run(db, 'DELETE FROM snippets WHERE build_id = ?', [prev]);
        run(db, 'DELETE FROM build_snippets WHERE build_id = ?', [prev]);
        run(db, 'DELETE FROM documents WHERE build_id = ?', [prev]);
        run(db, 'DELETE FROM builds WHERE id = ?', [prev]);
      }
      return prev;
    });
    if (previous) this.segments.delete(previous);
    this.catalog.touch(libraryId);
    await this.discardStaging([buildId]);
    this.compactIfMostlyFree(db);
    await this.persist();
    if (previous) await this.removeSegmentFiles([previous]);
    if (previous) await this.removeStoredDocs([previous]);
    return this.versionRecord(libraryId, version)!;
  }

  /**
   * Computes and writes a build's segment in a worker thread from a file of its snippets (a
   * staging file or a pack: build-pack.ts); here when no worker can start.
   */
  private async writeSegmentOffThread(buildId: string, source: string, snippets = Infinity): Promise<Awaited<ReturnType<typeof writeSegment>>> {
    // A small build's index takes a few milliseconds: less than starting a worker thread (0.5 - 1 s
    // under tsx at load 15), which made every finalize of a catalog of small libraries slow.
    if (snippets <= MAIN_THREAD_SNIPPETS) return this.writeSegmentHere(buildId, source);
    try {
      const written = await runWorkerTask<Awaited<ReturnType<typeof writeSegment>>>(workerUrl(import.meta.url, './segment-build-thread'), {
        dir: this.segmentDir,
        buildId,
        source,
        params: DEFAULT_BM25,
      });
      this.segmentBuilds.workerThread++;
      return written;
    } catch (err) {
      if (err instanceof PackError) throw err;
      if ((err as NodeJS.ErrnoException)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        // The main thread has no more memory than the worker had: trying there would take the process down.
        this.logger.error('store: the index segment of a build ran out of memory in its worker thread', { buildId, snippets });
        throw new RefdeskError(
          'too_large',
          `The index of build ${buildId} (${snippets} snippets) does not fit in the worker thread's memory; raise the heap limit (NODE_OPTIONS=--max-old-space-size=...) or split the library.`,
          { cause: err },
        );
      }
      this.logger.warn('store: the index segment could not be built in a worker thread; building it on the main thread', { buildId, error: String(err) });
      return this.writeSegmentHere(buildId, source);
    }
  }

  private writeSegmentHere(buildId: string, source: string): ReturnType<typeof writeSegment> {
    const snippets = readSnippetsFileSync(source);
    this.segmentBuilds.mainThread++;
    return writeSegment(this.segmentDir, buildId, computeIndexData(snippets, DEFAULT_BM25), snippets, DEFAULT_BM25);
  }

  async failBuild(buildId: string): Promise<void> {
    const db = this.requireWritable();
    const build = get(db, 'SELECT state FROM builds WHERE id = ?', [buildId]);
    if (!build) throw invalid(`Build "${buildId}" not found (its library may have been deleted).`);
    const state = str(build.state);
    if (state === 'failed') return;
    if (state === 'finalized') throw invalid(`Build "${buildId}" is already finalized and served; it cannot be failed.`);
    transaction(db, () => {
      run(db, 'DELETE FROM snippets WHERE build_id = ?', [buildId]);
      run(db, 'DELETE FROM documents WHERE build_id = ?', [buildId]);
      run(db, "UPDATE builds SET state = 'failed', finished_at = ? WHERE id = ?", [this.now(), buildId]);
    });
    await this.discardStaging([buildId]);
    await this.persist();
    await this.removeStoredDocs([buildId]);
  }

  // -------------------------------------------------------------------------------------------
  // Snippets and search
  // -------------------------------------------------------------------------------------------

  async getSnippets(libraryId: string, version: string): Promise<StoredSnippet[]> {
    const db = this.requireDb();
    const buildId = this.servedBuildId(libraryId, version);
    const pack = this.packPath(buildId);
    if (pack) {
      const out: StoredSnippet[] = [];
      try {
        for await (const block of readPack(pack)) for (const s of block) out.push(s);
      } catch (err) {
        throw this.packUnreadable(buildId, err);
      }
      return frozenSnippets(out);
    }
    // The compressed record is inflated off the event loop (async zlib); legacy rows are read as before.
    const packed = get(db, 'SELECT data FROM build_snippets WHERE build_id = ?', [buildId]);
    if (!packed) return this.loadBuild(buildId);
    return frozenSnippets(JSON.parse((await gunzipAsync(packed.data as Uint8Array)).toString('utf8')) as StoredSnippet[]);
  }

  async search(libraryId: string, version: string, query: string, limit: number): Promise<SearchHit[]> {
    this.requireDb();
    const buildId = this.servedBuildId(libraryId, version);
    const n = Math.floor(limit);
    if (!(n > 0) || typeof query !== 'string') return [];
    const segment = await this.servedSegment(buildId);
    try {
      return searchServedSegment(segment, query, n);
    } catch (err) {
      // A damaged snippet record (the index part is checked when the file is opened).
      if (!(err instanceof SegmentError)) throw err;
      let pending = this.pendingSegments.get(buildId);
      if (!pending) {
        this.segments.delete(buildId);
        pending = this.rebuildSegment(buildId, err)
          .then((fresh) => {
            this.segments.set(fresh);
            return fresh;
          })
          .finally(() => this.pendingSegments.delete(buildId));
        this.pendingSegments.set(buildId, pending);
      }
      return searchServedSegment(await pending, query, n);
    }
  }

  async segmentFile(libraryId: string, version: string): Promise<SegmentFileRef | null> {
    const db = this.requireDb();
    const buildId = this.servedBuildId(libraryId, version);
    const row = get(db, 'SELECT segment_file, segment_checksum FROM builds WHERE id = ?', [buildId]);
    const file = row ? strOrNull(row.segment_file) : null;
    if (!file) return null;
    return { buildId, path: join(this.segmentDir, file), checksum: strOrNull(row!.segment_checksum) };
  }

  /** The index segment of a served build: open, opened from its file, or rebuilt. */
  private servedSegment(buildId: string): Promise<ServedSegment> {
    const open = this.segments.get(buildId);
    if (open) return Promise.resolve(open);
    let pending = this.pendingSegments.get(buildId);
    if (!pending) {
      pending = this.loadSegment(buildId).finally(() => this.pendingSegments.delete(buildId));
      this.pendingSegments.set(buildId, pending);
    }
    return pending;
  }

  private async loadSegment(buildId: string): Promise<ServedSegment> {
    const row = get(this.requireDb(), 'SELECT segment_file, segment_checksum FROM builds WHERE id = ?', [buildId]);
    const file = row ? strOrNull(row.segment_file) : null;
    let segment: ServedSegment;
    try {
      if (!file) throw new SegmentError('missing', 'no index segment is recorded for this build (finalized by an older version)');
      segment = openSegment(join(this.segmentDir, file), buildId, DEFAULT_BM25, strOrNull(row!.segment_checksum));
      this.segmentStats.opened++;
    } catch (err) {
      if (!(err instanceof SegmentError)) throw err;
      segment = await this.rebuildSegment(buildId, err);
    }
    this.segments.set(segment);
    return segment;
  }

  /**
   * Makes a build's segment again from its snippets (a missing, old-format or damaged file) and,
   * when this store may write, writes it and records it. Never throws for the file's damage.
   */
  private async rebuildSegment(buildId: string, why: SegmentError): Promise<ServedSegment> {
    this.logger.warn('store: rebuilding the index segment of a build', { buildId, reason: why.reason, detail: why.message });
    this.segmentStats.rebuilt++;
    let pack = this.packPath(buildId);
    if (this.readOnly) {
      const snippets = this.readBuild(buildId);
      return memorySegment(buildId, computeIndexData(snippets, DEFAULT_BM25), snippets, DEFAULT_BM25);
    }
    // A build finalized before packs (build_snippets, or snippet rows): its snippets go to a pack first.
    const legacy = pack ? null : this.loadBuild(buildId);
    if (legacy) pack = join(this.segmentDir, (await writePack(this.segmentDir, buildId, batchesOf(legacy))).file);
    // Computed and written in a worker thread from the pack, as at finalize: the server keeps answering.
    let written: Awaited<ReturnType<typeof writeSegment>>;
    try {
      written = await this.writeSegmentOffThread(buildId, pack!);
    } catch (err) {
      throw this.packUnreadable(buildId, err);
    }
    const db = this.requireDb();
    if (!get(db, "SELECT 1 AS x FROM builds WHERE id = ? AND state = 'finalized'", [buildId])) {
      // Replaced or deleted meanwhile: serve this query from memory, keep no file.
      const snippets = legacy ?? this.readBuild(buildId);
      await this.removeSegmentFiles([buildId]);
      return memorySegment(buildId, computeIndexData(snippets, DEFAULT_BM25), snippets, DEFAULT_BM25);
    }
    transaction(db, () => {
      run(db, 'UPDATE builds SET segment_file = ?, segment_format = ?, segment_checksum = ?, pack_file = ? WHERE id = ?', [
        written.file,
        written.format,
        written.checksum,
        packFileName(buildId),
        buildId,
      ]);
      // A build finalized by an older version: its record or rows leave sql.js (the pack holds them).
      if (legacy) {
        run(db, 'DELETE FROM build_snippets WHERE build_id = ?', [buildId]);
        run(db, 'DELETE FROM snippets WHERE build_id = ?', [buildId]);
      }
    });
    await this.persist();
    return openSegment(join(this.segmentDir, written.file), buildId, DEFAULT_BM25, written.checksum);
  }

  /** The path of a finalized build's pack (build-pack.ts), or null for a build finalized before packs. */
  private packPath(buildId: string): string | null {
    const row = get(this.requireDb(), 'SELECT pack_file FROM builds WHERE id = ?', [buildId]);
    const file = row ? strOrNull(row.pack_file) : null;
    return file ? join(this.segmentDir, basename(file)) : null;
  }

  /** loadBuild, with a damaged pack told as a clear error. */
  private readBuild(buildId: string): StoredSnippet[] {
    try {
      return this.loadBuild(buildId);
    } catch (err) {
      throw this.packUnreadable(buildId, err);
    }
  }

  /** A damaged or missing pack as a clear error (logged); other errors unchanged. */
  private packUnreadable(buildId: string, err: unknown): unknown {
    if (!(err instanceof PackError)) return err;
    this.logger.error('store: the stored snippets of a build cannot be read', { buildId, reason: err.reason, detail: err.message });
    return new RefdeskError(
      'internal_error',
      `The stored snippets of build ${buildId} cannot be read (${err.reason}: ${err.message}); refresh the library to build it again.`,
      { cause: err },
    );
  }

  /**
   * Rewrites the database without its free pages (VACUUM) when they are most of it: staged
   * snippet rows leave the database when their build is finalized, and the file would otherwise
   * keep their size.
   */
  private compactIfMostlyFree(db: Database): void {
    const free = num(get(db, 'PRAGMA freelist_count')?.freelist_count);
    const pages = num(get(db, 'PRAGMA page_count')?.page_count);
    if (free >= 256 && 2 * free > pages) db.run('VACUUM');
  }

  /** Removes the segment files and packs of these builds; a failure is logged, not thrown (the files are only unused). */
  private async removeSegmentFiles(buildIds: readonly string[]): Promise<void> {
    await Promise.all([removeSegments(this.segmentDir, buildIds), removePacks(this.segmentDir, buildIds)]).catch((err: unknown) =>
      this.logger.warn('store: could not remove segment files', { buildIds, error: String(err) }),
    );
  }

  /** At open: removes segment files no finalized build records (a crash between writing and recording one). */
  private async removeUnusedSegments(): Promise<void> {
    const db = this.requireDb();
    const keep = new Set(all(db, "SELECT segment_file FROM builds WHERE state = 'finalized' AND segment_file IS NOT NULL").map((r) => str(r.segment_file)));
    const packs = new Set(all(db, "SELECT pack_file FROM builds WHERE state = 'finalized' AND pack_file IS NOT NULL").map((r) => str(r.pack_file)));
    const removed = [...(await removeOrphanSegments(this.segmentDir, keep)), ...(await removeOrphanPacks(this.segmentDir, packs))];
    if (removed.length > 0) this.logger.warn('store: removed index segment files no build uses', { files: removed });
    const builds = new Set(all(db, "SELECT id FROM builds WHERE state = 'finalized'").map((r) => str(r.id)));
    const docs = await removeOrphanStoredDocs(this.env.dataDir, builds);
    if (docs.length > 0) this.logger.warn('store: removed stored documents no finalized build uses', { files: docs });
  }

  /** Removes the stored documents of these builds (core/stored-docs.ts); a failure is logged, not thrown. */
  private async removeStoredDocs(buildIds: readonly string[]): Promise<void> {
    await removeStoredDocs(this.env.dataDir, buildIds).catch((err: unknown) =>
      this.logger.warn('store: could not remove stored documents', { buildIds, error: String(err) }),
    );
  }

  /** A build's snippets from the database, in document order, frozen. */
  private loadBuild(buildId: string): StoredSnippet[] {
    const db = this.requireDb();
    const pack = this.packPath(buildId);
    if (pack) return frozenSnippets(readPackSync(pack));
    const packed = get(db, 'SELECT data FROM build_snippets WHERE build_id = ?', [buildId]);
    if (packed) return frozenSnippets(JSON.parse(gunzipSync(packed.data as Uint8Array).toString('utf8')) as StoredSnippet[]);
    const stmt = db.prepare(`SELECT ${SNIPPET_COLUMNS} FROM snippets WHERE build_id = ? ORDER BY seq`);
    const snippets: StoredSnippet[] = [];
    try {
      stmt.bind([buildId]);
      while (stmt.step()) {
        const s = rowToSnippet(stmt.get());
        Object.freeze(s.breadcrumb);
        Object.freeze(s);
        snippets.push(s);
      }
    } finally {
      stmt.free();
    }
    return snippets;
  }

  /** The id of the build serving a version, or the not-found error that explains why none does. */
  private servedBuildId(libraryId: string, version: string): string {
    const db = this.requireDb();
    const row = get(db, 'SELECT active_build_id FROM versions WHERE library_id = ? AND version = ?', [libraryId, version]);
    if (row?.active_build_id != null) return str(row.active_build_id);
    if (!get(db, 'SELECT 1 AS x FROM libraries WHERE id = ?', [libraryId])) throw libraryNotFound(libraryId);

    const state = this.versionRecord(libraryId, version)?.state ?? 'initial';
    const pinned = this.libraryRecords(libraryId)[0]?.versions ?? [];
    throw notServedError(libraryId, version, state, pinned);
  }

  // -------------------------------------------------------------------------------------------
  // Jobs
  // -------------------------------------------------------------------------------------------

  async createJob(input: { libraryId: string; version: string; kind: string }): Promise<JobRecord> {
    const db = this.requireWritable();
    if (!input || typeof input.version !== 'string' || typeof input.kind !== 'string' || !input.kind) {
      throw invalid('A job needs a libraryId, a version ("" for the default) and a kind.');
    }
    if (!get(db, 'SELECT 1 AS x FROM libraries WHERE id = ?', [input.libraryId])) throw libraryNotFound(input.libraryId);
    const id = randomUUID();
    run(db, "INSERT INTO jobs (id, library_id, version, kind, state, progress, error, created_at) VALUES (?, ?, ?, ?, 'queued', '{}', NULL, ?)", [
      id,
      input.libraryId,
      input.version,
      input.kind,
      this.now(),
    ]);
    this.catalog.touch(input.libraryId);
    await this.persist();
    return this.jobRecord(id)!;
  }

  async updateJob(
    id: string,
    patch: { state?: JobState; progress?: IngestProgress; error?: JobRecord['error'] },
  ): Promise<JobRecord> {
    const db = this.requireWritable();
    const job = this.jobRecord(id);
    if (!job) throw invalid(`Job "${id}" not found.`);
    const { state, progress, error, startedAt, finishedAt } = applyJobPatch(job, patch, this.now());
    run(db, 'UPDATE jobs SET state = ?, progress = ?, error = ?, started_at = ?, finished_at = ? WHERE id = ?', [
      state,
      JSON.stringify(progress),
      error ? JSON.stringify(error) : null,
      startedAt,
      finishedAt,
      id,
    ]);
    this.catalog.touch(job.libraryId);
    await this.persist();
    return this.jobRecord(id)!;
  }

  async claimJob(id: string): Promise<JobRecord | null> {
    const db = this.requireWritable();
    const now = this.now();
    // One statement, guarded by the current state: of two claims, only one changes a row.
    const changed = run(db, "UPDATE jobs SET state = 'running', started_at = COALESCE(started_at, ?), finished_at = NULL WHERE id = ? AND state = 'queued'", [
      now,
      String(id),
    ]);
    if (changed === 0) return null;
    const claimed = this.jobRecord(id);
    if (claimed) this.catalog.touch(claimed.libraryId);
    await this.persist();
    return claimed;
  }

  async appendJobLog(id: string, level: LogLevel, message: string): Promise<void> {
    const db = this.requireWritable();
    if (!get(db, 'SELECT 1 AS x FROM jobs WHERE id = ?', [id])) throw invalid(`Job "${id}" not found.`);
    this.insertJobLog(db, id, level, message, this.now());
    this.dirty = true; // batched
  }

  private insertJobLog(db: Database, id: string, level: LogLevel, message: string, at: string): void {
    const last = get(db, 'SELECT MAX(seq) AS seq FROM job_logs WHERE job_id = ?', [id]);
    const seq = last?.seq == null ? 1 : num(last.seq) + 1;
    run(db, 'INSERT INTO job_logs (job_id, seq, at, level, message) VALUES (?, ?, ?, ?, ?)', [
      id,
      seq,
      at,
      LOG_LEVELS.includes(level) ? level : 'info',
      String(message),
    ]);
    if (seq > JOB_LOG_LIMIT) run(db, 'DELETE FROM job_logs WHERE job_id = ? AND seq <= ?', [id, seq - JOB_LOG_LIMIT]);
  }

  async getJob(id: string): Promise<JobRecord | null> {
    this.requireDb();
    return this.jobRecord(id);
  }

  async getJobLog(id: string): Promise<JobLogLine[]> {
    const db = this.requireDb();
    if (!get(db, 'SELECT 1 AS x FROM jobs WHERE id = ?', [id])) throw invalid(`Job "${id}" not found.`);
    return all(db, 'SELECT seq, at, level, message FROM job_logs WHERE job_id = ? ORDER BY seq', [id]).map((r) => ({
      seq: num(r.seq),
      at: str(r.at),
      level: str(r.level) as LogLevel,
      message: str(r.message),
    }));
  }

  async listJobs(filter: { libraryId?: string; state?: JobState; limit?: number } = {}): Promise<JobRecord[]> {
    const db = this.requireDb();
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.libraryId !== undefined) {
      where.push('library_id = ?');
      params.push(filter.libraryId);
    }
    if (filter.state !== undefined) {
      where.push('state = ?');
      params.push(filter.state);
    }
    let limit = -1;
    if (filter.limit !== undefined) {
      if (!Number.isInteger(filter.limit) || filter.limit < 0) throw invalid('limit must be a non-negative integer.');
      limit = filter.limit;
    }
    params.push(limit);
    const sql = `SELECT * FROM jobs${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, rowid DESC LIMIT ?`;
    return all(db, sql, params).map(toJobRecord);
  }

  // -------------------------------------------------------------------------------------------
  // Settings, API keys, aliases
  // -------------------------------------------------------------------------------------------

  async getSetting(key: string): Promise<unknown> {
    const db = this.requireDb();
    validateSettingKey(key);
    const row = get(db, 'SELECT value FROM settings WHERE key = ?', [key]);
    return row ? parseJson<unknown>(row.value, undefined) : undefined;
  }

  async setSetting(key: string, value: unknown): Promise<void> {
    const db = this.requireWritable();
    validateSettingKey(key);
    if (value === undefined) run(db, 'DELETE FROM settings WHERE key = ?', [key]);
    else run(db, 'INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)', [key, settingJson(key, value)]);
    await this.persist();
  }

  async createApiKey(input: ApiKeyInput): Promise<ApiKeyRecord> {
    const db = this.requireWritable();
    validateApiKeyInput(input);
    if (get(db, 'SELECT 1 AS x FROM api_keys WHERE id = ? OR hash = ?', [input.id, input.hash])) throw duplicateApiKey();
    run(db, 'INSERT INTO api_keys (id, name, plan, role, prefix, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)', [
      input.id,
      input.name,
      input.plan,
      input.role,
      input.prefix,
      input.hash,
      this.now(),
    ]);
    await this.persist();
    return toApiKeyRecord(get(db, 'SELECT * FROM api_keys WHERE id = ?', [input.id])!);
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    const row = get(this.requireDb(), 'SELECT * FROM api_keys WHERE hash = ?', [String(hash)]);
    return row ? toApiKeyRecord(row) : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    return all(this.requireDb(), 'SELECT * FROM api_keys ORDER BY created_at, rowid').map(toApiKeyRecord);
  }

  async revokeApiKey(id: string): Promise<ApiKeyRecord | null> {
    const db = this.requireWritable();
    const row = get(db, 'SELECT * FROM api_keys WHERE id = ?', [String(id)]);
    if (!row) return null;
    if (row.revoked_at == null) {
      run(db, 'UPDATE api_keys SET revoked_at = ? WHERE id = ?', [this.now(), id]);
      await this.persist();
    }
    return toApiKeyRecord(get(db, 'SELECT * FROM api_keys WHERE id = ?', [id])!);
  }

  async renameLibrary(oldId: string, newId: string): Promise<LibraryRecord> {
    const db = this.requireWritable();
    validateRename(oldId, newId);
    if (!get(db, 'SELECT 1 AS x FROM libraries WHERE id = ?', [oldId])) throw libraryNotFound(oldId);
    if (get(db, 'SELECT 1 AS x FROM libraries WHERE id = ?', [newId])) throw renameTargetExists(newId);
    transaction(db, () => {
      run(db, 'UPDATE libraries SET id = ? WHERE id = ?', [newId, oldId]);
      run(db, 'UPDATE versions SET library_id = ? WHERE library_id = ?', [newId, oldId]);
      run(db, 'UPDATE builds SET library_id = ? WHERE library_id = ?', [newId, oldId]);
      run(db, 'UPDATE jobs SET library_id = ? WHERE library_id = ?', [newId, oldId]);
      run(db, 'DELETE FROM library_aliases WHERE alias = ?', [newId]);
      run(db, 'UPDATE library_aliases SET target = ? WHERE target = ?', [newId, oldId]);
      run(db, 'INSERT OR REPLACE INTO library_aliases (alias, target, created_at) VALUES (?, ?, ?)', [oldId, newId, this.now()]);
    });
    this.catalog.touch(oldId, newId);
    await this.persist();
    return this.catalog.one(newId)!;
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
        linkSync(join(this.segmentDir, file), join(segDir, file));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') continue;
        if (code !== 'EXDEV' && code !== 'EPERM') throw err;
        copyFileSync(join(this.segmentDir, file), join(segDir, file));
      }
      written.push(`${SEGMENT_DIR}/${file}`);
    }
    sameStep?.();
    await writeFile(join(dir, basename(this.file)), data);
    return [basename(this.file), ...written];
  }

  async resolveLibraryAlias(id: string): Promise<string | null> {
    const row = get(this.requireDb(), 'SELECT target FROM library_aliases WHERE alias = ?', [String(id)]);
    return row ? str(row.target) : null;
  }

  // -------------------------------------------------------------------------------------------
  // Admin account, sessions, audit log (auth-tables.ts). Session touches and audit entries come
  // with requests: they only mark the database dirty, and the flush timer (flushIntervalMs)
  // writes them in one export, never one export per request.
  // -------------------------------------------------------------------------------------------

  async getAdminAccount(): Promise<AdminAccountRecord | null> {
    return readAdminAccount(this.requireDb());
  }

  async setAdminAccount(account: AdminAccountRecord | null): Promise<void> {
    writeAdminAccount(this.requireWritable(), account);
    await this.persist();
  }

  async createSession(session: SessionRecord): Promise<void> {
    insertSession(this.requireWritable(), session, this.now());
    await this.persist();
  }

  async getSession(idHash: string): Promise<SessionRecord | null> {
    return selectSession(this.requireDb(), idHash);
  }

  async updateSession(idHash: string, patch: { username?: string; mustChangeCredentials?: boolean; lastSeenAt?: string }): Promise<void> {
    patchSession(this.requireWritable(), idHash, patch);
    if (patch.username !== undefined || patch.mustChangeCredentials !== undefined) await this.persist();
    else this.dirty = true; // a touch: batched
  }

  async deleteSessions(which: { idHash: string } | { exceptIdHash: string | null }): Promise<number> {
    const n = removeSessions(this.requireWritable(), which);
    if (n > 0) await this.persist();
    return n;
  }

  async appendAudit(entry: AuditEntryInput): Promise<AuditEntry> {
    const saved = insertAudit(this.requireWritable(), entry);
    this.dirty = true; // batched
    return saved;
  }

  async listAudit(query: { limit: number; before?: number }): Promise<AuditEntry[]> {
    return selectAudit(this.requireDb(), query);
  }

  private jobRecord(id: string): JobRecord | null {
    const row = get(this.requireDb(), 'SELECT * FROM jobs WHERE id = ?', [id]);
    return row ? toJobRecord(row) : null;
  }
}

/** Lexical search over a segment: the hits with their snippets read from it. */
function toApiKeyRecord(r: Row): ApiKeyRecord {
  return {
    id: str(r.id),
    name: str(r.name),
    plan: str(r.plan),
    role: str(r.role) as ApiKeyRecord['role'],
    prefix: str(r.prefix),
    createdAt: str(r.created_at),
    revokedAt: strOrNull(r.revoked_at),
  };
}

function toJobRecord(r: Row): JobRecord {
  return {
    id: str(r.id),
    libraryId: str(r.library_id),
    version: str(r.version),
    kind: str(r.kind),
    state: str(r.state) as JobState,
    progress: parseJson<IngestProgress>(r.progress, {}),
    error: parseJson<JobRecord['error']>(r.error, null),
    createdAt: str(r.created_at),
    startedAt: strOrNull(r.started_at),
    finishedAt: strOrNull(r.finished_at),
  };
}
