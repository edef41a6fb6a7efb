/**
 * The embedded store's builds-and-snippets role: staged builds, finalize (index segment written
 * off the main thread, snippets packed), documents, snippets, search over the served segments,
 * and the segment and stored-document files of builds.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { gunzip as gunzipCb, gunzipSync, gzip as gzipCb, gzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import type { BuildDocument, BuildStats, BuildStore, SearchHit, SegmentFileRef, Snippet, StoredSnippet, VersionRecord } from '../../core/contracts.ts';
import { invalid, libraryNotFound, notServedError } from '../../core/store-rules.ts';
import { computeIndexData } from '../../core/search/index-data.ts';
import { DEFAULT_BM25 } from '../../core/search/lexical-index.ts';
import { removeOrphanStoredDocs, removeStoredDocs } from '../../core/stored-docs.ts';
import { runWorkerTask, workerUrl } from '../../core/worker-task.ts';
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
  writeSegment,
  type ServedSegment,
} from './segment.ts';
import { SegmentCache } from './segment-cache.ts';
import { all, get, num, parseJson, run, str, strOrNull, transaction, type Database, type Row } from './sqlite.ts';

const SNIPPET_COLUMNS =
  'id, seq, type, title, description, language, code, content, breadcrumb, page_title, source_path, source_url, anchor, line_start, line_end, tokens';

/** Snippet rows read per page while a build is finalized. */
const SNIPPET_PAGE = 1000;
const gzipAsync = promisify(gzipCb);
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

  constructor(
    database: EmbeddedDatabase,
    private readonly catalog: EmbeddedCatalog,
  ) {
    super(database);
    this.segments = new SegmentCache(database.options.segmentCacheBytes, database.options.indexCacheSize);
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
    const last = get(db, 'SELECT MAX(seq) AS seq FROM snippets WHERE build_id = ?', [buildId]);
    let seq = last?.seq == null ? 0 : num(last.seq) + 1;
    transaction(db, () => {
      const stmt = db.prepare(
        `INSERT INTO snippets (build_id, seq, type, title, description, language, code, content, breadcrumb, page_title,
           source_path, source_url, anchor, line_start, line_end, tokens)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      try {
        for (const s of snippets) {
          stmt.run([
            buildId,
            seq++,
            s.type,
            s.title ?? '',
            s.description ?? '',
            s.language ?? '',
            s.code ?? '',
            s.content ?? '',
            JSON.stringify(s.breadcrumb ?? []),
            s.pageTitle ?? '',
            s.sourcePath ?? '',
            s.sourceUrl ?? null,
            s.anchor ?? null,
            s.lineStart ?? 0,
            s.lineEnd ?? 0,
            s.tokens ?? 0,
          ]);
        }
      } finally {
        stmt.free();
      }
    });
    this.markDirty(); // batched: the timer, close() or the next durable call writes it
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

  async finalizeBuild(buildId: string): Promise<VersionRecord> {
    const db = this.requireWritable();
    const build = this.stagedBuild(db, buildId);
    const libraryId = str(build.library_id);
    const version = str(build.version);
    // The index segment first: a build is served with its segment written. The snippets are read
    // in pages and the index is computed and written in a worker thread while the JSON is
    // compressed by async zlib (both off the event loop, side by side): the event loop keeps
    // answering while a large build is finalized.
    const { json, count } = await this.stagedSnippetsJson(buildId);
    const [segment, packed] = await Promise.all([this.writeSegmentOffThread(buildId, json), gzipAsync(json)]);
    try {
      this.stagedBuild(db, buildId); // still staged after the write (not failed or deleted meanwhile)
      if (num(get(db, 'SELECT COUNT(*) AS n FROM snippets WHERE build_id = ?', [buildId])?.n) !== count) {
        throw invalid(`Build "${buildId}" received snippets while it was being finalized; finalize it again.`);
      }
    } catch (err) {
      await this.removeSegmentFiles([buildId]);
      throw err;
    }
    const now = this.now();
    const previous = transaction(db, () => {
      const stats = get(db, 'SELECT COUNT(*) AS n, COALESCE(SUM(tokens), 0) AS t FROM snippets WHERE build_id = ?', [buildId]);
      const totals: BuildStats = { totalSnippets: num(stats?.n), totalTokens: num(stats?.t) };
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
      run(db, "UPDATE builds SET state = 'finalized', finished_at = ?, segment_file = ?, segment_format = ?, segment_checksum = ? WHERE id = ?", [
        now,
        segment.file,
        segment.format,
        segment.checksum,
        buildId,
      ]);
      // The served snippets: one compressed record (the segment serves them; this is its source).
      run(db, 'INSERT OR REPLACE INTO build_snippets (build_id, data) VALUES (?, ?)', [buildId, packed]);
      // Its snippet rows go below, a page at a time (recover() removes any a crash left).
      if (prev && prev !== buildId) {
        run(db, 'DELETE FROM snippets WHERE build_id = ?', [prev]);
        run(db, 'DELETE FROM build_snippets WHERE build_id = ?', [prev]);
        run(db, 'DELETE FROM documents WHERE build_id = ?', [prev]);
        run(db, 'DELETE FROM builds WHERE id = ?', [prev]);
      }
      return prev;
    });
    if (previous) this.segments.delete(previous);
    await this.deleteSnippetRows(buildId);
    this.compactIfMostlyFree(db);
    await this.persist();
    if (previous) await this.removeSegmentFiles([previous]);
    if (previous) await this.removeStoredDocs([previous]);
    return this.catalog.versionRecord(libraryId, version)!;
  }

  /**
   * A staged build's snippets as one JSON array (the records loadBuild gives, in order), read a
   * page at a time with the event loop given back between pages.
   */
  private async stagedSnippetsJson(buildId: string): Promise<{ json: string; count: number }> {
    const parts: string[] = [];
    let from = 0;
    for (;;) {
      const stmt = this.requireDb().prepare(`SELECT ${SNIPPET_COLUMNS} FROM snippets WHERE build_id = ? AND seq >= ? ORDER BY seq LIMIT ?`);
      let rows = 0;
      try {
        stmt.bind([buildId, from, SNIPPET_PAGE]);
        while (stmt.step()) {
          const s = rowToSnippet(stmt.get());
          parts.push(JSON.stringify(s));
          from = s.seq + 1;
          rows++;
        }
      } finally {
        stmt.free();
      }
      if (rows < SNIPPET_PAGE) break;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return { json: `[${parts.join(',')}]`, count: parts.length };
  }

  /**
   * Deletes a finalized build's snippet rows (its compressed record holds them) a page at a time,
   * giving the event loop back between pages: one DELETE of a large build holds it for long.
   */
  private async deleteSnippetRows(buildId: string): Promise<void> {
    for (;;) {
      const db = this.requireDb();
      const first = get(db, 'SELECT MIN(seq) AS seq FROM snippets WHERE build_id = ?', [buildId]);
      if (first?.seq == null) return;
      run(db, 'DELETE FROM snippets WHERE build_id = ? AND seq < ?', [buildId, num(first.seq) + SNIPPET_PAGE]);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Computes and writes a build's segment in a worker thread; here when no worker can start. */
  private async writeSegmentOffThread(buildId: string, json: string): Promise<Awaited<ReturnType<typeof writeSegment>>> {
    try {
      const written = await runWorkerTask<Awaited<ReturnType<typeof writeSegment>>>(workerUrl(import.meta.url, './segment-build-thread'), {
        dir: this.segmentDir,
        buildId,
        json,
        params: DEFAULT_BM25,
      });
      this.segmentBuilds.workerThread++;
      return written;
    } catch (err) {
      this.logger.warn('store: the index segment could not be built in a worker thread; building it on the main thread', { buildId, error: String(err) });
      const snippets = JSON.parse(json) as StoredSnippet[];
      this.segmentBuilds.mainThread++;
      return writeSegment(this.segmentDir, buildId, computeIndexData(snippets, DEFAULT_BM25), snippets, DEFAULT_BM25);
    }
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
    await this.persist();
    await this.removeStoredDocs([buildId]);
  }

  async getSnippets(libraryId: string, version: string): Promise<StoredSnippet[]> {
    const db = this.requireDb();
    const buildId = this.servedBuildId(libraryId, version);
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
    const snippets = this.loadBuild(buildId);
    this.segmentStats.rebuilt++;
    if (this.readOnly) return memorySegment(buildId, computeIndexData(snippets, DEFAULT_BM25), snippets, DEFAULT_BM25);
    // Computed and written in a worker thread, as at finalize: the server keeps answering.
    const written = await this.writeSegmentOffThread(buildId, JSON.stringify(snippets));
    const db = this.requireDb();
    if (!get(db, "SELECT 1 AS x FROM builds WHERE id = ? AND state = 'finalized'", [buildId])) {
      // Replaced or deleted meanwhile: serve this query from memory, keep no file.
      await this.removeSegmentFiles([buildId]);
      return memorySegment(buildId, computeIndexData(snippets, DEFAULT_BM25), snippets, DEFAULT_BM25);
    }
    transaction(db, () => {
      run(db, 'UPDATE builds SET segment_file = ?, segment_format = ?, segment_checksum = ? WHERE id = ?', [
        written.file,
        written.format,
        written.checksum,
        buildId,
      ]);
      // A build finalized by an older version: its snippet rows become one compressed record.
      if (!get(db, 'SELECT 1 AS x FROM build_snippets WHERE build_id = ?', [buildId])) {
        run(db, 'INSERT INTO build_snippets (build_id, data) VALUES (?, ?)', [buildId, gzipSync(JSON.stringify(snippets))]);
        run(db, 'DELETE FROM snippets WHERE build_id = ?', [buildId]);
      }
    });
    await this.persist();
    return openSegment(join(this.segmentDir, written.file), buildId, DEFAULT_BM25, written.checksum);
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

  /** Removes the segment files of these builds; a failure is logged, not thrown (the files are only unused). */
  async removeSegmentFiles(buildIds: readonly string[]): Promise<void> {
    await removeSegments(this.segmentDir, buildIds).catch((err: unknown) =>
      this.logger.warn('store: could not remove segment files', { buildIds, error: String(err) }),
    );
  }

  /** At open: removes segment files no finalized build records (a crash between writing and recording one). */
  async removeUnusedSegments(): Promise<void> {
    const db = this.requireDb();
    const keep = new Set(all(db, "SELECT segment_file FROM builds WHERE state = 'finalized' AND segment_file IS NOT NULL").map((r) => str(r.segment_file)));
    const removed = await removeOrphanSegments(this.segmentDir, keep);
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

    const state = this.catalog.versionRecord(libraryId, version)?.state ?? 'initial';
    const pinned = this.catalog.libraryRecords(libraryId)[0]?.versions ?? [];
    throw notServedError(libraryId, version, state, pinned);
  }
}
