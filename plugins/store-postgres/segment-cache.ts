/**
 * This node's copy of the served index segments (issue 24): which build serves each library
 * version (read from `versions`, kept until the `library` change topic names the library, or
 * SERVED_BUILD_REREAD_MS passed, whichever first), the segment files of those builds on local disk
 * (`<cacheDir>/<buildId>.seg`, fetched from `segment_chunks` piece by piece and checked: segment-rows.ts)
 * and the open segments in memory under `segmentCacheBytes` (the embedded store's SegmentCache).
 *
 * Segments are immutable and named by their build, so a cached file is never stale, only
 * unused: when a version's served build changes, the old build's segment is closed and its file
 * removed. A cached file found damaged (its header, index or a snippet record fails its
 * checksum) or missing is fetched again, never served and never a crash. A segment in the
 * database computed with other search parameters is rebuilt from its snippets and written back.
 * The cached files (segments, and vectors without pgvector: vectors.ts) stay under
 * `segmentDiskBytes`, the least recently used removed first.
 */
import { mkdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { readdirOrEmpty, unlinkIfPresent } from '../../core/missing-files.ts';
import { RefdeskError } from '../../core/errors.ts';
import { DEFAULT_BM25 } from '../../core/search/lexical-index.ts';
import { SegmentCache } from '../store-embedded/segment-cache.ts';
import { SegmentError, openSegment, segmentFileName, type ServedSegment } from '../store-embedded/segment.ts';
import type { PgDatabase } from './database.ts';
import { SegmentRowsError, downloadSegment, uploadSegment, type Run, type SegmentRowsInfo } from './segment-rows.ts';
import { StagingFile } from '../store-embedded/build-pack.ts';
import { writeSegmentOffThread } from '../store-embedded/segment-build.ts';
import type { StoredSnippet } from '../../core/contracts.ts';

/** Open segments at most (each holds an open file), as the embedded store's default. */
const MAX_OPEN_SEGMENTS = 16;

interface Served {
  buildId: string | null;
  at: number;
}

/**
 * How long a served build read from `versions` is trusted without a change on the feed: the
 * change feed (LISTEN, and its poll of `changes` without it) names the library of every new
 * build, so this re-read only bounds a change the feed never delivered (as the catalog's record
 * refresh does). Before, the served build was read again every `pollMs` (500 ms) on the serving path.
 */
export const SERVED_BUILD_REREAD_MS = 60_000;

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
  readonly stats = { fetched: 0, opened: 0, refetched: 0, rebuilt: 0 };
  /** Segments rebuilt here, computed in a worker thread or on the main thread (segment-build.ts). */
  private readonly rebuildCounts = { workerThread: 0, mainThread: 0 };
  private readonly served = new Map<string, Served>();
  /** Per library, how many times the change feed named it: a read that began before a change does not keep what it read. */
  private readonly generations = new Map<string, number>();
  /** Queries of `versions` made to learn a served build (for tests and reports). */
  servedReads = 0;
  /** SERVED_BUILD_REREAD_MS; a benchmark sets the old `pollMs` to compare. */
  servedRereadMs = SERVED_BUILD_REREAD_MS;
  private readonly files = new Map<string, BuildFile>();
  private readonly pendingFiles = new Map<string, Promise<string>>();
  private readonly pendingOpens = new Map<string, Promise<ServedSegment>>();
  private swept: Promise<void> | null = null;
  /**
   * The cached files on disk (segments `.seg`, vectors `.vec`) by name with their size, least
   * recently used first (a Map keeps insertion order: a use moves the name to the end). Their
   * total is kept under `segmentDiskBytes`.
   */
  private readonly disk = new Map<string, number>();
  private diskBytes = 0;
  /** Files being written here (fetched, or a segment just computed): never trimmed meanwhile. */
  private readonly busy = new Set<string>();
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
    if (known && now - known.at < this.servedRereadMs) return known.buildId;
    const generation = this.generations.get(libraryId) ?? 0;
    this.servedReads++;
    const rows = await this.run<{ active_build_id: string | null }>('SELECT active_build_id FROM versions WHERE library_id = $1 AND version = $2', [libraryId, version]);
    const buildId = rows[0]?.active_build_id ?? null;
    const before = this.served.get(key);
    // Named by the feed while this read was in flight: what it read may predate the change.
    const stale = (this.generations.get(libraryId) ?? 0) !== generation;
    this.served.set(key, { buildId, at: stale ? -Infinity : now });
    if (before?.buildId && before.buildId !== buildId) await this.drop([before.buildId]);
    return buildId;
  }

  /** Another build serves a version of this library, or it was deleted or renamed: read it again at the next query. */
  forgetLibrary(libraryId: string): void {
    this.generations.set(libraryId, (this.generations.get(libraryId) ?? 0) + 1);
    const prefix = `${libraryId}\u0000`;
    for (const [key, v] of this.served) if (key.startsWith(prefix)) v.at = -Infinity;
  }

  /** Closes and removes the cached segments of these builds (replaced or deleted). */
  async drop(buildIds: readonly string[]): Promise<void> {
    for (const id of buildIds) {
      this.segments.delete(id);
      this.files.delete(id);
      for (const path of [this.pathOf(id), this.vectorsPathOf(id)]) await this.dropFile(path);
    }
  }

  /** Removes one cached file (its build's rows changed or went). */
  async dropFile(path: string): Promise<void> {
    this.forgetFile(path);
    await unlinkIfPresent(path).catch((err: unknown) => this.database.logger.warn('store: could not remove a cached file', { file: basename(path), error: String(err) }));
  }

  /** Where a build's vectors (kept in rows without pgvector: vectors.ts) are cached on this node. */
  vectorsPathOf(buildId: string): string {
    return join(this.dir, `${buildId}.vec`);
  }

  /** A cached file was used now (it goes last in the removal order); `bytes` when it was just written. */
  usedFile(path: string, bytes?: number): void {
    const name = basename(path);
    const known = this.disk.get(name);
    if (known === undefined && bytes === undefined) return;
    this.disk.delete(name);
    const size = bytes ?? known!;
    this.diskBytes += size - (known ?? 0);
    this.disk.set(name, size);
  }

  private forgetFile(path: string): void {
    const name = basename(path);
    const known = this.disk.get(name);
    if (known === undefined) return;
    this.disk.delete(name);
    this.diskBytes -= known;
  }

  /** The bytes of cached files this node holds (for tests and reports). */
  get diskUsage(): { files: number; bytes: number } {
    return { files: this.disk.size, bytes: this.diskBytes };
  }

  /**
   * Writes a cached file through `write` (which puts it at `path`), then removes the least
   * recently used files until the total is within `segmentDiskBytes` again (never the one just
   * written, nor one being written). A removed segment is closed; it is fetched again when used.
   */
  async cacheFile(path: string, write: () => Promise<void>): Promise<void> {
    const name = basename(path);
    this.busy.add(name);
    try {
      await mkdir(this.dir, { recursive: true });
      await write();
      this.usedFile(path, (await stat(path)).size);
      await this.trim(name);
    } finally {
      this.busy.delete(name);
    }
  }

  private async trim(keep: string | null): Promise<void> {
    const budget = this.database.options.segmentDiskBytes;
    if (this.diskBytes <= budget) return;
    const removed: string[] = [];
    for (const name of [...this.disk.keys()]) {
      if (this.diskBytes <= budget) break;
      if (name === keep || this.busy.has(name)) continue;
      const m = /^([\w-]+)\.(seg|vec)$/.exec(name);
      if (m?.[2] === 'seg') this.segments.delete(m[1]);
      this.forgetFile(name);
      if (await unlinkIfPresent(join(this.dir, name)).catch(() => false)) removed.push(name);
    }
    if (removed.length > 0) this.database.logger.info('store: removed the least recently used cached files (segmentDiskBytes)', { files: removed, bytes: this.diskBytes });
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
    if (await stat(path).then((s) => s.isFile(), () => false)) {
      this.usedFile(path);
      return path;
    }
    this.forgetFile(path);
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
          await this.cacheFile(path, () => downloadSegment(this.run, buildId, info, path));
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
    if (open) {
      this.usedFile(this.pathOf(buildId));
      return Promise.resolve(open);
    }
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
      segment = await this.refetch(buildId, err);
    }
    this.stats.opened++;
    this.segments.set(segment);
    return segment;
  }

  /** A cached file that cannot be used (damaged, missing, another format): removed, fetched again and opened. */
  private async refetch(buildId: string, why: SegmentError): Promise<ServedSegment> {
    this.database.logger.warn('store: the cached index segment of a build cannot be used; fetching it again', { buildId, reason: why.reason, detail: why.message });
    this.stats.refetched++;
    this.segments.delete(buildId);
    this.files.delete(buildId); // read what the catalog records again too
    await unlinkIfPresent(this.pathOf(buildId));
    const path = await this.fetch(buildId);
    try {
      return openSegment(path, buildId, DEFAULT_BM25, (await this.buildFile(buildId)).checksum);
    } catch (err) {
      if (!(err instanceof SegmentError)) throw err;
      if (err.reason === 'old-format') return this.rebuild(buildId, path, err);
      throw this.unusable(buildId, err);
    }
  }

  private unusable(buildId: string, err: SegmentError): RefdeskError {
    this.database.logger.error('store: the index segment of a build cannot be opened', { buildId, reason: err.reason, detail: err.message });
    return new RefdeskError('internal_error', `The index segment of build ${buildId} cannot be used (${err.reason}: ${err.message}); a re-chunk from its stored documents (queued when a server starts) or a refresh of the library builds it again.`, { cause: err });
  }

  /**
   * A segment in the database computed with other search parameters (an upgrade changed them):
   * computed again from the snippets it holds (as at finalize: a worker thread for a large
   * build), written over its rows with what the catalog records of it, and opened. When another
   * node rebuilt it meanwhile, its copy is fetched instead. A segment of another format cannot
   * be read here at all: refused with a clear error; the server re-chunks such versions from
   * their stored documents when it starts (PgBuilds.unreadableBuilds, core/rechunk.ts).
   */
  private async rebuild(buildId: string, path: string, why: SegmentError): Promise<ServedSegment> {
    this.database.logger.warn('store: rebuilding the index segment of a build (other search parameters)', { buildId, detail: why.message });
    const seen = await this.buildFile(buildId);
    let snippets: StoredSnippet[];
    try {
      const old = openSegment(path, buildId, DEFAULT_BM25, seen.checksum, true);
      try {
        snippets = old.snippets(Array.from(old.ids ?? [])).filter((x): x is StoredSnippet => x !== undefined);
      } finally {
        old.close();
      }
    } catch (err) {
      if (!(err instanceof SegmentError)) throw err;
      throw this.unusable(buildId, err);
    }
    const source = join(this.dir, `${buildId}.rebuild.staging`);
    const staged = new StagingFile(source);
    let written!: Awaited<ReturnType<typeof writeSegmentOffThread>>;
    try {
      staged.append(snippets);
      staged.close();
      await this.cacheFile(path, async () => {
        written = await writeSegmentOffThread(this.dir, buildId, source, snippets.length, this.database.logger, this.rebuildCounts);
      });
    } finally {
      await staged.discard().catch(() => {});
    }
    const recorded = await this.database.tx(async (c) => {
      const [row] = (await c.query("SELECT segment_sha256 FROM builds WHERE id = $1 AND state = 'finalized' FOR UPDATE", [buildId])).rows;
      if (!row) return 'gone' as const;
      if (row.segment_sha256 !== seen.sha256) return 'rebuilt elsewhere' as const;
      await c.query('DELETE FROM segment_chunks WHERE build_id = $1', [buildId]);
      const rows = await uploadSegment(c, buildId, path);
      await c.query('UPDATE builds SET segment_format = $2, segment_bytes = $3, segment_chunks = $4, segment_checksum = $5, segment_sha256 = $6 WHERE id = $1', [
        buildId,
        written.format,
        rows.bytes,
        rows.chunks,
        written.checksum,
        rows.sha256,
      ]);
      return rows;
    });
    if (recorded === 'gone') {
      await this.drop([buildId]);
      throw new BuildGoneError(`Build ${buildId} is no longer served (replaced or deleted)`);
    }
    if (recorded === 'rebuilt elsewhere') {
      this.files.delete(buildId);
      await unlinkIfPresent(path);
      this.forgetFile(path);
      const fresh = await this.fetch(buildId);
      try {
        return openSegment(fresh, buildId, DEFAULT_BM25, (await this.buildFile(buildId)).checksum);
      } catch (err) {
        if (!(err instanceof SegmentError)) throw err;
        throw this.unusable(buildId, err);
      }
    }
    this.files.set(buildId, { checksum: written.checksum, ...recorded });
    this.stats.rebuilt++;
    return openSegment(path, buildId, DEFAULT_BM25, written.checksum);
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
        pending = this.refetch(buildId, err)
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
    const kept: Array<{ name: string; bytes: number; mtime: number }> = [];
    for (const name of names) {
      const m = /^([\w-]+)\.(seg|staging|vec)$/.exec(name);
      const keep = m && (m[2] === 'staging' ? building.has(m[1]) : finalized.has(m[1]) || building.has(m[1]));
      if (keep && m[2] !== 'staging') {
        const st = await stat(join(this.dir, name)).catch(() => null);
        if (st?.isFile()) kept.push({ name, bytes: st.size, mtime: st.mtimeMs });
      }
      if (keep || !/\.(seg|staging|vec)(\.tmp-\d+)?$/.test(name) || name.endsWith(`.tmp-${process.pid}`)) continue;
      if (await unlinkIfPresent(join(this.dir, name))) removed.push(name);
    }
    if (removed.length > 0) this.database.logger.info('store: removed cached segments no build uses', { files: removed });
    // Files cached before this start count against the disk budget, oldest written first.
    const since = [...this.disk]; // used since this start: after the older files
    this.disk.clear();
    for (const f of kept.sort((a, b) => a.mtime - b.mtime)) {
      if (since.some(([name]) => name === f.name)) continue;
      this.disk.set(f.name, f.bytes);
      this.diskBytes += f.bytes;
    }
    for (const [name, bytes] of since) this.disk.set(name, bytes);
    await this.trim(null);
  }

  close(): void {
    this.database.changes.off('change', this.onChange);
    this.segments.clear();
    this.served.clear();
    this.files.clear();
    this.disk.clear();
    this.diskBytes = 0;
  }
}
