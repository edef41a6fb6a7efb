/**
 * This node's copy of the served index segments (issue 24): which build serves each library
 * version (read from `versions`, kept until the `library` change topic names the library, or
 * `pollMs` passed, whichever first), the segment files of those builds on local disk
 * (`<cacheDir>/<buildId>.seg`, fetched from `segment_chunks` piece by piece and checked: segment-rows.ts)
 * and the open segments in memory under `segmentCacheBytes` (the embedded store's SegmentCache).
 *
 * Segments are immutable and named by their build, so a cached file is never stale, only
 * unused: when a version's served build changes, the old build's segment is closed and its file
 * removed. A cached file found damaged (its header, index or a snippet record fails its
 * checksum) or missing is fetched again, never served and never a crash.
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readdirOrEmpty, unlinkIfPresent } from '../../core/missing-files.ts';
import { RefdeskError } from '../../core/errors.ts';
import { DEFAULT_BM25 } from '../../core/search/lexical-index.ts';
import { SegmentCache } from '../store-embedded/segment-cache.ts';
import { SegmentError, openSegment, segmentFileName, type ServedSegment } from '../store-embedded/segment.ts';
import type { PgDatabase } from './database.ts';
import { SegmentRowsError, downloadSegment, type Run, type SegmentRowsInfo } from './segment-rows.ts';

/** Open segments at most (each holds an open file), as the embedded store's default. */
const MAX_OPEN_SEGMENTS = 16;

interface Served {
  buildId: string | null;
  at: number;
}

/** The build is no longer finalized in the database (replaced or deleted since it was named the served one). */
export class BuildGoneError extends Error {
  override name = 'BuildGoneError';
}

interface BuildFile extends SegmentRowsInfo {
  checksum: string | null;
}

export class PgSegmentCache {
  /** The open segments, least recently used closed first. */
  readonly segments: SegmentCache;
  /** Counts for tests and reports: segments fetched from the database, opened from local files, fetched again after damage. */
  readonly stats = { fetched: 0, opened: 0, refetched: 0 };
  private readonly served = new Map<string, Served>();
  private readonly files = new Map<string, BuildFile>();
  private readonly pendingFiles = new Map<string, Promise<string>>();
  private readonly pendingOpens = new Map<string, Promise<ServedSegment>>();
  private swept: Promise<void> | null = null;
  private readonly onChange = (topic: string, id: string) => {
    if (topic === 'library') this.forgetLibrary(id);
  };

  constructor(private readonly database: PgDatabase) {
    this.segments = new SegmentCache(database.options.segmentCacheBytes, MAX_OPEN_SEGMENTS);
    database.changes.on('change', this.onChange);
  }

  get dir(): string {
    return this.database.cacheDir;
  }

  pathOf(buildId: string): string {
    return join(this.dir, segmentFileName(buildId));
  }

  private run: Run = (sql, params) => this.database.query(sql, params);

  /** The build serving a version (null: none), from memory when the change feed has not named the library since and it is fresh. */
  async servedBuild(libraryId: string, version: string): Promise<string | null> {
    const key = `${libraryId}\u0000${version}`;
    const known = this.served.get(key);
    const now = Date.now();
    if (known && now - known.at < this.database.options.pollMs) return known.buildId;
    const rows = await this.run<{ active_build_id: string | null }>('SELECT active_build_id FROM versions WHERE library_id = $1 AND version = $2', [libraryId, version]);
    const buildId = rows[0]?.active_build_id ?? null;
    const before = this.served.get(key);
    this.served.set(key, { buildId, at: now });
    if (before?.buildId && before.buildId !== buildId) await this.drop([before.buildId]);
    return buildId;
  }

  /** Another build serves a version of this library, or it was deleted or renamed: read it again at the next query. */
  forgetLibrary(libraryId: string): void {
    const prefix = `${libraryId}\u0000`;
    for (const [key, v] of this.served) if (key.startsWith(prefix)) v.at = -Infinity;
  }

  /** Closes and removes the cached segments of these builds (replaced or deleted). */
  async drop(buildIds: readonly string[]): Promise<void> {
    for (const id of buildIds) {
      this.segments.delete(id);
      this.files.delete(id);
      await unlinkIfPresent(this.pathOf(id)).catch((err: unknown) => this.database.logger.warn('store: could not remove a cached segment', { buildId: id, error: String(err) }));
    }
  }

  /** What the catalog records of a finalized build's segment (immutable: read once). */
  async buildFile(buildId: string): Promise<BuildFile> {
    const known = this.files.get(buildId);
    if (known) return known;
    const rows = await this.run<{ segment_checksum: string | null; segment_chunks: number | null; segment_bytes: string | null; segment_sha256: string | null }>(
      "SELECT segment_checksum, segment_chunks, segment_bytes, segment_sha256 FROM builds WHERE id = $1 AND state = 'finalized'",
      [buildId],
    );
    const r = rows[0];
    if (!r) throw new BuildGoneError(`Build ${buildId} is no longer served (replaced or deleted)`);
    if (r.segment_chunks == null || r.segment_sha256 == null) {
      throw new RefdeskError('internal_error', `Build ${buildId} has no index segment in the database; refresh the library to build it again.`);
    }
    const file = { checksum: r.segment_checksum, chunks: r.segment_chunks, bytes: Number(r.segment_bytes), sha256: r.segment_sha256 };
    this.files.set(buildId, file);
    return file;
  }

  /** A finalized build's segment file on this node's disk: the cached one, or fetched now. */
  async file(buildId: string): Promise<string> {
    await this.sweepOnce();
    const path = this.pathOf(buildId);
    if (await stat(path).then((s) => s.isFile(), () => false)) return path;
    return this.fetch(buildId);
  }

  /** Fetches a build's segment from the database to the local disk (one fetch at a time per build). */
  private fetch(buildId: string): Promise<string> {
    let pending = this.pendingFiles.get(buildId);
    if (!pending) {
      pending = (async () => {
        const info = await this.buildFile(buildId);
        await mkdir(this.dir, { recursive: true });
        const path = this.pathOf(buildId);
        try {
          await downloadSegment(this.run, buildId, info, path);
        } catch (err) {
          if (!(err instanceof SegmentRowsError)) throw err;
          this.database.logger.error('store: the index segment of a build in the database is damaged', { buildId, detail: err.message });
          throw new RefdeskError('internal_error', `The index segment of build ${buildId} in the database is damaged (${err.message}); refresh the library to build it again.`, { cause: err });
        }
        this.stats.fetched++;
        return path;
      })().finally(() => this.pendingFiles.delete(buildId));
      this.pendingFiles.set(buildId, pending);
    }
    return pending;
  }

  /** The open segment of a finalized build: in memory, opened from its cached file, or fetched first. */
  open(buildId: string): Promise<ServedSegment> {
    const open = this.segments.get(buildId);
    if (open) return Promise.resolve(open);
    let pending = this.pendingOpens.get(buildId);
    if (!pending) {
      pending = this.load(buildId).finally(() => this.pendingOpens.delete(buildId));
      this.pendingOpens.set(buildId, pending);
    }
    return pending;
  }

  private async load(buildId: string): Promise<ServedSegment> {
    const info = await this.buildFile(buildId);
    let segment: ServedSegment;
    try {
      segment = openSegment(await this.file(buildId), buildId, DEFAULT_BM25, info.checksum);
    } catch (err) {
      if (!(err instanceof SegmentError)) throw err;
      segment = await this.refetch(buildId, err, info.checksum);
    }
    this.stats.opened++;
    this.segments.set(segment);
    return segment;
  }

  /** A cached file that cannot be used (damaged, missing, another format): removed, fetched again and opened. */
  private async refetch(buildId: string, why: SegmentError, checksum: string | null): Promise<ServedSegment> {
    this.database.logger.warn('store: the cached index segment of a build cannot be used; fetching it again', { buildId, reason: why.reason, detail: why.message });
    this.stats.refetched++;
    this.segments.delete(buildId);
    await unlinkIfPresent(this.pathOf(buildId));
    const path = await this.fetch(buildId);
    try {
      return openSegment(path, buildId, DEFAULT_BM25, checksum);
    } catch (err) {
      if (!(err instanceof SegmentError)) throw err;
      this.database.logger.error('store: the index segment of a build cannot be opened', { buildId, reason: err.reason, detail: err.message });
      throw new RefdeskError('internal_error', `The index segment of build ${buildId} cannot be used (${err.reason}: ${err.message}); refresh the library to build it again.`, { cause: err });
    }
  }

  /**
   * Runs `use` on a build's open segment; when a snippet record turns out damaged on disk
   * (SegmentError), the file is fetched again and `use` runs once more on the fresh copy.
   */
  async use<T>(buildId: string, use: (segment: ServedSegment) => T): Promise<T> {
    const segment = await this.open(buildId);
    try {
      return use(segment);
    } catch (err) {
      if (!(err instanceof SegmentError)) throw err;
      let pending = this.pendingOpens.get(buildId);
      if (!pending) {
        pending = this.refetch(buildId, err, (await this.buildFile(buildId)).checksum)
          .then((fresh) => {
            this.segments.set(fresh);
            return fresh;
          })
          .finally(() => this.pendingOpens.delete(buildId));
        this.pendingOpens.set(buildId, pending);
      }
      return use(await pending);
    }
  }

  /** Once per process: removes cached segments and staging files no build needs any more. */
  private sweepOnce(): Promise<void> {
    this.swept ??= this.sweep().catch((err: unknown) => this.database.logger.warn('store: could not sweep the segment cache', { error: String(err) }));
    return this.swept;
  }

  private async sweep(): Promise<void> {
    const names = await readdirOrEmpty(this.dir);
    if (names.length === 0) return;
    const rows = await this.run<{ id: string; state: string }>("SELECT id, state FROM builds WHERE state <> 'failed'", []);
    const finalized = new Set(rows.filter((r) => r.state === 'finalized').map((r) => r.id));
    const building = new Set(rows.filter((r) => r.state === 'building').map((r) => r.id));
    const removed: string[] = [];
    for (const name of names) {
      const m = /^([\w-]+)\.(seg|staging)$/.exec(name);
      const keep = m && (m[2] === 'seg' ? finalized.has(m[1]) || building.has(m[1]) : building.has(m[1]));
      if (keep || !/\.(seg|staging)(\.tmp-\d+)?$/.test(name) || name.endsWith(`.tmp-${process.pid}`)) continue;
      if (await unlinkIfPresent(join(this.dir, name))) removed.push(name);
    }
    if (removed.length > 0) this.database.logger.info('store: removed cached segments no build uses', { files: removed });
  }

  close(): void {
    this.database.changes.off('change', this.onChange);
    this.segments.clear();
    this.served.clear();
    this.files.clear();
  }
}
