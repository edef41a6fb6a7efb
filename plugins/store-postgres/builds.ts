/**
 * The builds role on PostgreSQL (issue 24): builds, snippets, documents, search, and index
 * segments stored in the database as chunked rows and cached per node.
 *
 * - A build's snippets are staged on this node's disk while it runs (the embedded store's
 *   staging file, build-pack.ts, in the cache directory): the node that runs the job is the one
 *   that finalizes the build. Ids come from the `snippet_ids` sequence, unique across builds and
 *   nodes. Document records go to `build_documents` at once.
 * - finalizeBuild computes the segment as the embedded store does (store-embedded/segment-build.ts:
 *   a worker thread for a large build) into this node's segment cache, then in one transaction
 *   writes it to `segment_chunks` in 1 MiB pieces (segment-rows.ts), the build's stored documents
 *   (core/stored-docs.ts) to `document_chunks`, records size, pieces and checksums in `builds`,
 *   switches `versions.active_build_id` and deletes the previous build (its rows cascade);
 *   then tells every node (`library` topic).
 * - Searching and reading snippets go through this node's segment cache (segment-cache.ts): the
 *   served build from the catalog, the segment fetched once to local disk, opened under the
 *   memory budget. The served segment has every snippet of the build, in document order, so no
 *   separate copy of the snippets is kept (the embedded store's pack).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import type { BuildDocument, BuildStore, BuildVectorStore, SearchHit, SegmentFileRef, ServedBuildChunkers, Snippet, SnippetHead, StoredSnippet, VersionRecord } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { invalid, libraryNotFound, notServedError, snippetDefaults, snippetHead } from '../../core/store-rules.ts';
import { hasStoredDocs, removeStoredDocs } from '../../core/stored-docs.ts';
import { StagingFile, stagingFileName } from '../store-embedded/build-pack.ts';
import { SEGMENT_FORMAT, searchServedSegment, type ServedSegment } from '../store-embedded/segment.ts';
import { writeSegmentOffThread } from '../store-embedded/segment-build.ts';
import type { PgCatalog } from './catalog.ts';
import { PgRole, type PgDatabase } from './database.ts';
import { jsonObject, num, str } from './rows.ts';
import { BuildGoneError, PgSegmentCache } from './segment-cache.ts';
import { downloadStoredDocs, uploadSegment, uploadStoredDocs } from './segment-rows.ts';
import { PgRowVectors, PgVectors } from './vectors.ts';

/** Snippets read per slice by getSnippetHeads (the event loop turns between slices). */
const HEADS_SLICE = 1000;

export class PgBuilds extends PgRole implements BuildStore {
  /** This node's served builds, cached segment files and open segments. */
  readonly cache: PgSegmentCache;
  /** Segments of finalized builds computed in a worker thread, and on the main thread. */
  readonly segmentBuilds = { workerThread: 0, mainThread: 0 };
  /** The staging files of the builds this process is building. */
  private readonly staging = new Map<string, StagingFile>();
  /** Per build, the end of its last addSnippets: batches are staged in the order they were given. */
  private readonly appending = new Map<string, Promise<void>>();
  private vectors: Promise<BuildVectorStore | null> | null = null;

  constructor(
    database: PgDatabase,
    protected readonly catalog: PgCatalog,
  ) {
    super(database);
    this.cache = new PgSegmentCache(database);
    catalog.onBuildsDeleted((ids) => {
      void this.forgetBuilds(ids);
    });
  }

  async beginBuild(libraryId: string, version: string, jobId: string | null): Promise<string> {
    if (typeof version !== 'string') throw invalid('The version must be a string ("" for the default version).');
    const [row] = await this.query<{ id: string }>(
      `INSERT INTO builds (id, library_id, version, job_id, state, started_at)
       SELECT $5, id, $2, $3, 'building', $4 FROM libraries WHERE id = $1
       RETURNING id`,
      [String(libraryId), version, jobId, this.now(), randomUUID()],
    );
    if (!row) throw libraryNotFound(libraryId);
    return row.id;
  }

  /** A build that still takes changes, or the invalid_request error saying why not. */
  private async stagedBuild(buildId: string, lock?: pg.ClientBase): Promise<{ libraryId: string; version: string; staged: number }> {
    const sql = `SELECT library_id, version, state, total_snippets FROM builds WHERE id = $1${lock ? ' FOR UPDATE' : ''}`;
    const [build] = lock ? (await lock.query(sql, [String(buildId)])).rows : await this.query(sql, [String(buildId)]);
    if (!build) throw invalid(`Build "${buildId}" not found (its library may have been deleted).`);
    if (str(build.state) !== 'building') throw invalid(`Build "${buildId}" is ${str(build.state)}; it no longer accepts changes.`);
    return { libraryId: str(build.library_id), version: str(build.version), staged: num(build.total_snippets) };
  }

  async addSnippets(buildId: string, snippets: Snippet[]): Promise<void> {
    const before = this.appending.get(buildId) ?? Promise.resolve();
    const done = before.catch(() => {}).then(() => this.appendSnippets(buildId, snippets));
    const tail = done.catch(() => {});
    this.appending.set(buildId, tail);
    void tail.then(() => {
      if (this.appending.get(buildId) === tail) this.appending.delete(buildId);
    });
    return done;
  }

  private async appendSnippets(buildId: string, snippets: Snippet[]): Promise<void> {
    if (snippets.length === 0) {
      await this.stagedBuild(buildId);
      return;
    }
    // The build's count of staged snippets, kept in its row: finalize refuses a build whose
    // snippets were staged by another process (its staging file is not here).
    const counted = await this.query('UPDATE builds SET total_snippets = total_snippets + $2 WHERE id = $1 AND state = $3 RETURNING 1', [String(buildId), snippets.length, 'building']);
    if (counted.length === 0) await this.stagedBuild(buildId); // throws why
    const ids = (await this.query<{ id: string }>("SELECT nextval('snippet_ids') AS id FROM generate_series(1, $1)", [snippets.length]))
      .map((r) => Number(r.id))
      .sort((a, b) => a - b);
    const staged = this.stagingFor(buildId);
    staged.append(snippets.map((s, i) => ({ id: ids[i], seq: staged.count + i, ...snippetDefaults(s) })));
  }

  /** The staging file of a build being built here, opened at its first snippets. */
  private stagingFor(buildId: string): StagingFile {
    let f = this.staging.get(buildId);
    if (!f) {
      mkdirSync(this.database.cacheDir, { recursive: true });
      f = new StagingFile(join(this.database.cacheDir, stagingFileName(buildId)));
      this.staging.set(buildId, f);
    }
    return f;
  }

  private async discardStaging(buildId: string): Promise<void> {
    const f = this.staging.get(buildId);
    this.staging.delete(buildId);
    await f?.discard().catch((err: unknown) => this.logger.warn('store: could not remove a staging file', { buildId, error: String(err) }));
  }

  async addDocuments(buildId: string, documents: BuildDocument[]): Promise<void> {
    await this.stagedBuild(buildId);
    if (documents.length === 0) return;
    // The same path again replaces the record: the last one of the batch wins.
    const byPath = new Map(documents.map((d) => [d.path, d]));
    const docs = [...byPath.values()];
    await this.query(
      `INSERT INTO build_documents (build_id, path, hash, meta, chunker)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::jsonb[], $5::text[])
       ON CONFLICT (build_id, path) DO UPDATE SET hash = EXCLUDED.hash, meta = EXCLUDED.meta, chunker = EXCLUDED.chunker`,
      [buildId, docs.map((d) => d.path), docs.map((d) => d.hash), docs.map((d) => JSON.stringify(d.meta ?? {})), docs.map((d) => d.chunker ?? '')],
    );
  }

  async getDocuments(libraryId: string, version: string): Promise<Map<string, BuildDocument>> {
    const rows = await this.query(
      `SELECT d.path, d.hash, d.meta, d.chunker FROM versions v JOIN build_documents d ON d.build_id = v.active_build_id
       WHERE v.library_id = $1 AND v.version = $2`,
      [String(libraryId), String(version)],
    );
    const out = new Map<string, BuildDocument>();
    for (const r of rows) out.set(str(r.path), { path: str(r.path), hash: str(r.hash), meta: jsonObject<Record<string, string>>(r.meta, {}), chunker: str(r.chunker) });
    return out;
  }

  async servedBuildChunkers(): Promise<ServedBuildChunkers[]> {
    // One read for the whole catalog (every node's start checks every served build).
    const rows = await this.query(
      `SELECT v.library_id, v.version, v.active_build_id,
              COALESCE(array_agg(DISTINCT d.chunker ORDER BY d.chunker) FILTER (WHERE d.chunker IS NOT NULL), '{}') AS chunkers
       FROM versions v LEFT JOIN build_documents d ON d.build_id = v.active_build_id
       WHERE v.active_build_id IS NOT NULL
       GROUP BY v.library_id, v.version, v.active_build_id
       ORDER BY v.library_id, v.version`,
    );
    return rows.map((r) => ({ libraryId: str(r.library_id), version: str(r.version), buildId: str(r.active_build_id), chunkers: (r.chunkers as string[]).map(String) }));
  }

  async finalizeBuild(buildId: string): Promise<VersionRecord> {
    await (this.appending.get(buildId) ?? Promise.resolve());
    const { libraryId, version, staged: recorded } = await this.stagedBuild(buildId);
    // The segment first, into this node's cache (it serves it from there), off the event loop
    // for a large build; then its bytes go to the database with the switch-over.
    if (!this.staging.has(buildId) && recorded > 0) {
      throw invalid(`Build "${buildId}" was staged by another process (its ${recorded} snippets are not on this node); build it again.`);
    }
    const staged = this.stagingFor(buildId);
    const totals = { snippets: staged.count, tokens: staged.tokens };
    const file = this.cache.pathOf(buildId);
    let written!: Awaited<ReturnType<typeof writeSegmentOffThread>>;
    try {
      await this.cache.cacheFile(file, async () => {
        written = await writeSegmentOffThread(this.database.cacheDir, buildId, staged.path, staged.count, this.logger, this.segmentBuilds);
      });
    } catch (err) {
      await this.cache.drop([buildId]);
      throw err;
    }
    let previous: string | null;
    try {
      previous = await this.tx(async (c) => {
        const still = await this.stagedBuild(buildId, c); // still staged (not failed or deleted meanwhile), and locked
        if (staged.count !== totals.snippets || still.staged !== totals.snippets) throw invalid(`Build "${buildId}" received snippets while it was being finalized; finalize it again.`);
        const rows = await uploadSegment(c, buildId, file);
        const docs = await uploadStoredDocs(c, this.database.env.dataDir, buildId).catch((err: unknown) => {
          // The build is served without them: a chunker change then needs the source again.
          this.logger.warn('store: the stored documents of a build could not be copied to the database', { buildId, error: String(err) });
          return 0;
        });
        const now = this.now();
        const current = await c.query('SELECT active_build_id FROM versions WHERE library_id = $1 AND version = $2 FOR UPDATE', [libraryId, version]);
        const prev = (current.rows[0]?.active_build_id as string | null | undefined) ?? null;
        await c.query(
          `UPDATE builds SET state = 'finalized', finished_at = $2, total_snippets = $3, total_tokens = $4, segment_format = $5,
             segment_bytes = $6, segment_chunks = $7, segment_checksum = $8, segment_sha256 = $9 WHERE id = $1`,
          [buildId, now, totals.snippets, totals.tokens, written.format, rows.bytes, rows.chunks, written.checksum, rows.sha256],
        );
        await c.query(
          `INSERT INTO versions (library_id, version, active_build_id, last_update_date, total_tokens, total_snippets)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (library_id, version) DO UPDATE SET active_build_id = EXCLUDED.active_build_id,
             last_update_date = EXCLUDED.last_update_date, total_tokens = EXCLUDED.total_tokens, total_snippets = EXCLUDED.total_snippets`,
          [libraryId, version, buildId, now, totals.tokens, totals.snippets],
        );
        // The previous build goes with its segment rows, documents and vectors (ON DELETE CASCADE).
        if (prev && prev !== buildId) await c.query('DELETE FROM builds WHERE id = $1', [prev]);
        if (docs === 0) await c.query('DELETE FROM document_chunks WHERE build_id = $1', [buildId]);
        return prev && prev !== buildId ? prev : null;
      });
    } catch (err) {
      await this.cache.drop([buildId]);
      throw err;
    }
    await this.discardStaging(buildId);
    await this.catalog.changed(libraryId);
    if (previous) await this.forgetBuilds([previous]);
    return (await this.catalog.getVersion(libraryId, version))!;
  }

  /** Builds whose rows are gone (replaced, deleted): their cached segments and local stored documents go too. */
  private async forgetBuilds(buildIds: readonly string[]): Promise<void> {
    await this.cache.drop(buildIds);
    await removeStoredDocs(this.database.env.dataDir, buildIds).catch((err: unknown) =>
      this.logger.warn('store: could not remove stored documents', { buildIds, error: String(err) }),
    );
  }

  async failBuild(buildId: string): Promise<void> {
    await (this.appending.get(buildId) ?? Promise.resolve());
    const failed = await this.tx(async (c) => {
      const [build] = (await c.query('SELECT state FROM builds WHERE id = $1 FOR UPDATE', [String(buildId)])).rows;
      if (!build) throw invalid(`Build "${buildId}" not found (its library may have been deleted).`);
      const state = str(build.state);
      if (state === 'failed') return false;
      if (state === 'finalized') throw invalid(`Build "${buildId}" is already finalized and served; it cannot be failed.`);
      await c.query('DELETE FROM build_documents WHERE build_id = $1', [buildId]);
      await c.query('DELETE FROM segment_chunks WHERE build_id = $1', [buildId]);
      await c.query("UPDATE builds SET state = 'failed', finished_at = $2 WHERE id = $1", [buildId, this.now()]);
      return true;
    });
    if (!failed) return;
    await (await this.buildVectors())?.remove(buildId);
    await this.discardStaging(buildId);
    await this.forgetBuilds([buildId]);
  }

  async getSnippets(libraryId: string, version: string): Promise<StoredSnippet[]> {
    return this.withServed(libraryId, version, (segment) => {
      const all = segment.snippets(Array.from(segment.ids ?? []));
      return all.filter((s): s is StoredSnippet => s !== undefined);
    });
  }

  /**
   * The heads of the served build's snippets, read from its segment's records a slice at a time
   * (HEADS_SLICE snippets, the event loop turning between slices), keeping no snippet text. A build
   * replaced meanwhile (by any node) is listed again from its successor, once.
   */
  async getSnippetHeads(libraryId: string, version: string): Promise<SnippetHead[]> {
    for (let attempt = 0; ; attempt++) {
      const { buildId, ids } = await this.withServed(libraryId, version, (segment) => ({ buildId: segment.buildId, ids: Array.from(segment.ids ?? []) }));
      try {
        const out: SnippetHead[] = [];
        for (let i = 0; i < ids.length; i += HEADS_SLICE) {
          if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
          const slice = ids.slice(i, i + HEADS_SLICE);
          const heads = await this.cache.use(buildId, (segment) => segment.snippets(slice));
          for (const s of heads) if (s !== undefined) out.push(snippetHead(s));
        }
        return out;
      } catch (err) {
        if (!(err instanceof BuildGoneError) || attempt > 0) throw this.gone(err);
        this.cache.forgetLibrary(libraryId);
      }
    }
  }

  async search(libraryId: string, version: string, query: string, limit: number): Promise<SearchHit[]> {
    const n = Math.floor(limit);
    return this.withServed(libraryId, version, (segment) => (n > 0 && typeof query === 'string' ? searchServedSegment(segment, query, n) : []));
  }

  async segmentFile(libraryId: string, version: string): Promise<SegmentFileRef | null> {
    for (let attempt = 0; ; attempt++) {
      const buildId = await this.servedBuildId(libraryId, version);
      try {
        const { checksum } = await this.cache.buildFile(buildId);
        return { buildId, path: await this.cache.file(buildId), checksum };
      } catch (err) {
        if (!(err instanceof BuildGoneError) || attempt > 0) throw this.gone(err);
        this.cache.forgetLibrary(libraryId);
      }
    }
  }

  /**
   * Runs `use` on the served segment of a version. The served build may have been replaced (and
   * its rows deleted) by another node since this node read which one it is: then it reads the
   * served build again, once.
   */
  private async withServed<T>(libraryId: string, version: string, use: (segment: ServedSegment) => T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const buildId = await this.servedBuildId(libraryId, version);
      try {
        return await this.cache.use(buildId, use);
      } catch (err) {
        if (!(err instanceof BuildGoneError) || attempt > 0) throw this.gone(err);
        this.cache.forgetLibrary(libraryId);
      }
    }
  }

  private gone(err: unknown): unknown {
    if (!(err instanceof BuildGoneError)) return err;
    return new RefdeskError('internal_error', `${err.message}; try again.`, { cause: err });
  }

  /** The id of the build serving a version, or the not-found error that explains why none does. */
  private async servedBuildId(libraryId: string, version: string): Promise<string> {
    this.requireOpen();
    const id = await this.cache.servedBuild(String(libraryId), String(version));
    if (id) return id;
    const library = await this.catalog.getLibrary(libraryId);
    if (!library) throw libraryNotFound(libraryId);
    const state = (await this.catalog.getVersion(libraryId, version))?.state ?? 'initial';
    throw notServedError(libraryId, version, state, [...library.versions]);
  }

  /**
   * Optional BuildStore method: makes a finalized build's stored documents (core/stored-docs.ts)
   * available at their local path, fetching them from the database when this node has not got
   * them (the build was made on another node). True when the file is there.
   */
  async localStoredDocs(buildId: string): Promise<boolean> {
    const dataDir = this.database.env.dataDir;
    if (await hasStoredDocs(dataDir, buildId)) return true;
    return downloadStoredDocs((sql, params) => this.query(sql, params), dataDir, buildId);
  }

  /**
   * Optional BuildStore method: the served builds whose segment is of another format than this
   * code reads (an upgrade changed it). Their snippets are inside that segment, so this store
   * cannot rebuild it; the server re-chunks their versions from the stored documents at start
   * (core/rechunk.ts), and until then such a version answers with an error saying so.
   */
  async unreadableBuilds(): Promise<Set<string>> {
    const rows = await this.query(
      `SELECT b.id FROM versions v JOIN builds b ON b.id = v.active_build_id
       WHERE b.state = 'finalized' AND b.segment_format IS DISTINCT FROM $1`,
      [SEGMENT_FORMAT],
    );
    return new Set(rows.map((r) => str(r.id)));
  }

  /**
   * Optional BuildStore method: the builds' vectors in pgvector when the database has the
   * extension and its table; else as chunked rows fetched to each node (vectors.ts PgRowVectors,
   * migration 009), so every node searches every build's vectors.
   */
  buildVectors(): Promise<BuildVectorStore | null> {
    this.vectors ??= (async () => {
      if (await PgVectors.available(this.database)) return new PgVectors(this.database);
      return (await PgRowVectors.available(this.database)) ? new PgRowVectors(this.database, this.cache) : null;
    })().then(
      (store) => store,
      (err: unknown) => {
        this.vectors = null; // asked again next time
        throw err;
      },
    );
    return this.vectors;
  }

  /** Closes the open segments and this process's staging files (kept: the sweep removes them). */
  close(): void {
    for (const f of this.staging.values()) f.close();
    this.staging.clear();
    this.cache.close();
  }

  /** For tests and reports. */
  stats(): { fetched: number; opened: number; refetched: number; open: number } {
    return { ...this.cache.stats, open: num(this.cache.segments.size) };
  }
}
