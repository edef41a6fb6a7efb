/**
 * The embedded store's builds-and-snippets role: staged builds, finalize (index segment written
 * off the main thread, snippets packed), documents, snippets, search over the served segments,
 * and the segment and stored-document files of builds.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gunzip as gunzipCb, gunzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import type { BuildDocument, BuildStats, BuildStore, SearchHit, SegmentFileRef, ServedBuildChunkers, Snippet, SnippetHead, StoredSnippet, VersionRecord } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { invalid, libraryNotFound, notServedError, snippetDefaults, snippetHead } from '../../core/store-rules.ts';
import { computeIndexData } from '../../core/search/index-data.ts';
import { DEFAULT_BM25 } from '../../core/search/lexical-index.ts';
import { removeOrphanStoredDocs, removeStoredDocs } from '../../core/stored-docs.ts';
import type { EmbeddedCatalog } from './catalog.ts';
import { EmbeddedRole, type EmbeddedDatabase } from './database.ts';
import {
  SEGMENT_DIR,
  SegmentError,
  memorySegment,
  openSegment,
  removeOrphanSegments,
  removeSegments,
  searchServedSegment,
  type ServedSegment,
} from './segment.ts';
import { SegmentCache } from './segment-cache.ts';
import { MAIN_THREAD_SNIPPETS, writeSegmentOffThread, type WrittenSegment } from './segment-build.ts';
import {
  PackError,
  StagingFile,
  batchesOf,
  packFileName,
  readPack,
  readPackHeads,
  readPackSync,
  removeOrphanPacks,
  removePacks,
  removeStagingFiles,
  stagingFileName,
  writePack,
  writePackFromStaging,
} from './build-pack.ts';
import { all, get, num, parseJson, run, str, strOrNull, transaction, type Database, type Row } from './sqlite.ts';
import { memoRead } from './read-memo.ts';

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

/**
 * A writer process (`refdesk add`) computes the segment of a build of at most this many snippets
 * on its main thread instead of a worker thread (issue 17, docs/benchmark.md "Ingest, round 6").
 */
export const WRITER_MAIN_THREAD_SNIPPETS = 2000;

/**
 * addSnippets appends at most this many snippets to a staging file in one go; a larger batch is
 * appended in slices, the event loop turning between them.
 */
export const STAGING_SLICE_SNIPPETS = 100;

/** A snippet as staged and served: the record rowToSnippet gives for its row. */
function toStoredSnippet(s: Snippet, id: number, seq: number): StoredSnippet {
  return { id, seq, ...snippetDefaults(s) };
}

/** A version's served build and its segment file (null: none recorded) and checksum, as the catalog holds them. */
interface ServedBuild {
  readonly buildId: string;
  readonly file: string | null;
  readonly checksum: string | null;
}

export class EmbeddedBuilds extends EmbeddedRole implements BuildStore {
  /** The open index segments of served builds, under the memory budget. */
  readonly segments: SegmentCache;
  readonly segmentDir: string;
  /** Segments being opened or rebuilt, so concurrent queries share the work. */
  private readonly pendingSegments = new Map<string, Promise<ServedSegment>>();
  /** Counts for tests and reports: segments opened from their files, and rebuilt from snippets. */
  readonly segmentStats = { opened: 0, rebuilt: 0 };
  /** Segments of finalized builds computed in a worker thread, and on the main thread (no worker could run). */
  readonly segmentBuilds = { workerThread: 0, mainThread: 0 };
  /** The staging files of the builds being built by this process (build-pack.ts). */
  private readonly staging = new Map<string, StagingFile>();
  /** Per build, its last append in slices (addSnippets): the next one, and finalize, wait for it. */
  private readonly appending = new Map<string, Promise<void>>();

  constructor(
    database: EmbeddedDatabase,
    private readonly catalog: EmbeddedCatalog,
  ) {
    super(database);
    this.segments = new SegmentCache(database.options.segmentCacheBytes, database.options.indexCacheSize, true);
    this.segmentDir = join(database.env.dataDir, SEGMENT_DIR);
  }

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
    this.markDirty(); // the id sequence: batched
    const previous = this.appending.get(buildId);
    if (!previous && snippets.length <= STAGING_SLICE_SNIPPETS) {
      staged.append(snippets.map((s, i) => toStoredSnippet(s, first + i, staged.count + i)));
      return;
    }
    // A large batch (a long page's snippets) in slices, after the build's earlier appends: in order.
    const mine = (previous ?? Promise.resolve()).catch(() => {}).then(() => this.appendInSlices(buildId, staged, snippets, first));
    this.appending.set(buildId, mine);
    try {
      await mine;
    } finally {
      if (this.appending.get(buildId) === mine) this.appending.delete(buildId);
    }
  }

  /**
   * Appends snippets to a build's staging file STAGING_SLICE_SNIPPETS at a time with a turn of
   * the event loop between two slices (issue 17's stalls, round 7: numbering, serializing and
   * writing a long page's hundreds of snippets at once held a server's event loop for 20 - 45 ms
   * of its own run time). Each slice checks the build still takes snippets (not finalized,
   * failed or deleted meanwhile) and numbers its snippets from the staging file's count.
   */
  private async appendInSlices(buildId: string, staged: StagingFile, snippets: Snippet[], first: number): Promise<void> {
    for (let i = 0; i < snippets.length; i += STAGING_SLICE_SNIPPETS) {
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      this.stagedBuild(this.requireWritable(), buildId);
      if (this.staging.get(buildId) !== staged) throw invalid(`Build "${buildId}" no longer accepts changes.`);
      const slice = snippets.slice(i, i + STAGING_SLICE_SNIPPETS);
      staged.append(slice.map((s, j) => toStoredSnippet(s, first + i + j, staged.count + j)));
    }
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
  async discardStaging(buildIds: readonly string[]): Promise<void> {
    for (const id of buildIds) {
      const f = this.staging.get(id);
      this.staging.delete(id);
      await f?.discard().catch((err: unknown) => this.logger.warn('store: could not remove a staging file', { buildId: id, error: String(err) }));
    }
  }

  /** At close: closes the staging files of this process's builds (kept: the next open removes them). */
  closeStaging(): void {
    for (const f of this.staging.values()) f.close();
    this.staging.clear();
  }

  /** At open: removes every staging file (their builds are discarded by the store's recovery). */
  async removeStagingFiles(): Promise<void> {
    await removeStagingFiles(this.segmentDir);
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
    this.markDirty(); // batched like snippets
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

  async servedBuildChunkers(): Promise<ServedBuildChunkers[]> {
    const db = this.requireDb();
    const out = new Map<string, ServedBuildChunkers>();
    // One read for the whole catalog (a server's start checks every served build).
    for (const r of all(
      db,
      `SELECT v.library_id, v.version, v.active_build_id, d.chunker FROM versions v
       LEFT JOIN (SELECT DISTINCT build_id, chunker FROM documents) d ON d.build_id = v.active_build_id
       WHERE v.active_build_id IS NOT NULL ORDER BY v.library_id, v.version, d.chunker`,
    )) {
      const buildId = str(r.active_build_id);
      let entry = out.get(buildId);
      if (!entry) out.set(buildId, (entry = { libraryId: str(r.library_id), version: str(r.version), buildId, chunkers: [] }));
      if (r.chunker != null) entry.chunkers.push(str(r.chunker));
    }
    return [...out.values()];
  }

  async finalizeBuild(buildId: string): Promise<VersionRecord> {
    // The build's snippets still being appended in slices first (addSnippets). Without one, no
    // await comes before the staged count is read: snippets added after this call are not in it,
    // and the finalize is refused below (they are never lost).
    const appending = this.appending.get(buildId);
    if (appending) await appending.catch(() => {});
    const db = this.requireWritable();
    const build = this.stagedBuild(db, buildId);
    const libraryId = str(build.library_id);
    const version = str(build.version);
    // The index segment first: a build is served with its segment written. Both are made from the
    // staging file, side by side and off the event loop: the segment in a worker thread, the pack
    // (build-pack.ts: blocks cut from the staging file's bytes, compressed by async zlib) here,
    // streamed a block at a time.
    const staged = this.stagingFor(buildId);
    const totals: BuildStats = { totalSnippets: staged.count, totalTokens: staged.tokens };
    const [segment, pack] = await Promise.all([
      this.writeSegmentOffThread(buildId, staged.path, staged.count),
      writePackFromStaging(this.segmentDir, buildId, staged.path),
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
    return this.catalog.versionRecord(libraryId, version)!;
  }

  /**
   * Computes and writes a build's segment (segment-build.ts: a worker thread for a large build).
   * A writer process (`refdesk add`: no request waits on its event loop) computes builds of up to
   * WRITER_MAIN_THREAD_SNIPPETS here: starting a thread (its isolate, the index code loaded and
   * compiled again) costs more CPU than such a build, and the main thread has nothing else to do
   * meanwhile but the pack's writes (async zlib).
   */
  private writeSegmentOffThread(buildId: string, source: string, snippets = Infinity): Promise<WrittenSegment> {
    const mainThreadUpTo = this.env.mode === 'writer' ? WRITER_MAIN_THREAD_SNIPPETS : MAIN_THREAD_SNIPPETS;
    return writeSegmentOffThread(this.segmentDir, buildId, source, snippets, this.logger, this.segmentBuilds, mainThreadUpTo);
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

  /**
   * The heads of the served build's snippets, read from its pack a block at a time (each block
   * inflated off the event loop, its heads read from its bytes: build-pack.ts readPackHeads): no
   * snippet text is parsed or kept, and the event loop turns every few milliseconds. A build finalized before packs: getSnippets' snippets, cut.
   */
  async getSnippetHeads(libraryId: string, version: string): Promise<SnippetHead[]> {
    this.requireDb();
    const buildId = this.servedBuildId(libraryId, version);
    const pack = this.packPath(buildId);
    if (!pack) return (await this.getSnippets(libraryId, version)).map(snippetHead);
    const out: SnippetHead[] = [];
    try {
      for await (const block of readPackHeads(pack)) for (const h of block) out.push(h);
    } catch (err) {
      throw this.packUnreadable(buildId, err);
    }
    return out;
  }

  async search(libraryId: string, version: string, query: string, limit: number): Promise<SearchHit[]> {
    this.requireDb();
    const served = this.servedBuild(libraryId, version);
    const buildId = served.buildId;
    const n = Math.floor(limit);
    if (!(n > 0) || typeof query !== 'string') return [];
    const segment = await this.servedSegment(served);
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
    // Asked by every question the search workers answer: from memory until the database changes
    // (read-memo.ts); a version that serves nothing throws, and is read again next time.
    const ref = memoRead(db, `segment\0${libraryId}\0${version}`, () => {
      const buildId = this.servedBuildId(libraryId, version);
      const row = get(db, 'SELECT segment_file, segment_checksum FROM builds WHERE id = ?', [buildId]);
      const file = row ? strOrNull(row.segment_file) : null;
      return file ? { buildId, path: join(this.segmentDir, file), checksum: strOrNull(row!.segment_checksum) } : null;
    });
    return ref && { ...ref };
  }

  /** The index segment of a served build: open, opened from its file, or rebuilt. */
  private servedSegment(served: ServedBuild): Promise<ServedSegment> {
    const { buildId } = served;
    const open = this.segments.get(buildId);
    if (open) return Promise.resolve(open);
    let pending = this.pendingSegments.get(buildId);
    if (!pending) {
      pending = this.loadSegment(served).finally(() => this.pendingSegments.delete(buildId));
      this.pendingSegments.set(buildId, pending);
    }
    return pending;
  }

  private async loadSegment({ buildId, file, checksum }: ServedBuild): Promise<ServedSegment> {
    let segment: ServedSegment;
    try {
      if (!file) throw new SegmentError('missing', 'no index segment is recorded for this build (finalized by an older version)');
      segment = openSegment(join(this.segmentDir, file), buildId, DEFAULT_BM25, checksum);
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
    let written: WrittenSegment;
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
  async removeSegmentFiles(buildIds: readonly string[]): Promise<void> {
    await Promise.all([removeSegments(this.segmentDir, buildIds), removePacks(this.segmentDir, buildIds)]).catch((err: unknown) =>
      this.logger.warn('store: could not remove segment files', { buildIds, error: String(err) }),
    );
  }

  /** At open: removes segment files no finalized build records (a crash between writing and recording one). */
  async removeUnusedSegments(): Promise<void> {
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
  async removeStoredDocs(buildIds: readonly string[]): Promise<void> {
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
    return this.servedBuild(libraryId, version).buildId;
  }

  /**
   * The served build of a version and its segment file's row, read by one statement. Asked by
   * every search (a library search re-ranks by up to ten libraries' documentation): from memory
   * until the database changes (read-memo.ts; the value is shared, never changed), not two sql.js
   * statements (about 0.45 ms each at load 13) each time.
   */
  private servedBuild(libraryId: string, version: string): ServedBuild {
    const db = this.requireDb();
    const served = memoRead(db, `served\0${libraryId}\0${version}`, (): ServedBuild | null => {
      const row = get(
        db,
        `SELECT v.active_build_id AS build_id, b.segment_file AS segment_file, b.segment_checksum AS segment_checksum
           FROM versions v LEFT JOIN builds b ON b.id = v.active_build_id WHERE v.library_id = ? AND v.version = ?`,
        [libraryId, version],
      );
      return row?.build_id != null ? { buildId: str(row.build_id), file: strOrNull(row.segment_file), checksum: strOrNull(row.segment_checksum) } : null;
    });
    if (served !== null) return served;
    if (!get(db, 'SELECT 1 AS x FROM libraries WHERE id = ?', [libraryId])) throw libraryNotFound(libraryId);

    const state = this.catalog.versionRecord(libraryId, version)?.state ?? 'initial';
    const pinned = this.catalog.libraryRecords(libraryId)[0]?.versions ?? [];
    throw notServedError(libraryId, version, state, pinned);
  }
}
