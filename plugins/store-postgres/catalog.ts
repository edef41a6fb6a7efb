/**
 * The catalog role on PostgreSQL: libraries, versions, renames (aliases); tables libraries,
 * library_aliases, versions, read with builds and jobs (a library's state and totals come from
 * them). Semantics mirror plugins/store-embedded/catalog.ts.
 *
 * Library records are kept in memory per node (like the embedded store's catalog-cache.ts), so
 * `getLibrary` and `listLibraries` cost no round trip per request. A record is dropped and read
 * again when the change feed names its library (`database.changes`, topic `library`): this node's
 * own writes emit it at once, other nodes' writes through NOTIFY (notify.ts). Every write of a
 * library's rows (here, in jobs.ts, in builds.ts on finalize) calls `database.publish('library', id)`
 * once committed (`changed(...)`).
 */
import type pg from 'pg';
import type { CatalogStore, LibraryInput, LibraryRecord, LibraryState, VersionRecord } from '../../core/contracts.ts';
import { freezeLibraryRecord, invalid, jobStateToLibraryState, libraryBusy, libraryNotFound, libraryRecordOf, validateLibraryInput, type ServedVersion } from '../../core/store-rules.ts';
import { renameTargetExists, validateRename } from '../../core/store-admin-rules.ts';
import { sortVersionsNewestFirst } from '../../core/version-order.ts';
import { PgRole, type PgDatabase } from './database.ts';
import { iso, isoOrNull, jsonObject, num, str, strOrNull } from './rows.ts';

/** Reads library records: all of them (null) or the one with this id. */
type LibraryLoader = (id: string | null) => Promise<LibraryRecord[]>;

/**
 * The records in memory. A touch during a load leaves the touched id stale, so a change that
 * commits while a read is in flight is never lost. Everything is read again once `maxAgeMs` old:
 * the bound on how long a change the feed never delivered (a node cut off for longer than the
 * feed keeps its rows) can go unseen; when that reload fails, the records in memory are kept (and
 * tried again `maxAgeMs` later), so a database outage does not take the catalog away.
 */
export class PgCatalogCache {
  private records: Map<string, LibraryRecord> | null = null;
  private loadedAt = 0;
  private sorted: readonly LibraryRecord[] | null = null;
  private readonly stale = new Set<string>();
  private loading: Promise<void> | null = null;
  /** Counts for tests and reports: full loads and single-library reloads. */
  readonly stats = { loads: 0, reloads: 0 };

  constructor(
    private readonly load: LibraryLoader,
    private readonly maxAgeMs = 5 * 60_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async all(): Promise<LibraryRecord[]> {
    await this.refresh();
    this.sorted ??= [...this.records!.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return [...this.sorted];
  }

  async one(id: string): Promise<LibraryRecord | null> {
    await this.refresh();
    return this.records!.get(id) ?? null;
  }

  /** These libraries changed (or were added, renamed or deleted): read again at the next read. */
  touch(...ids: string[]): void {
    for (const id of ids) this.stale.add(id);
    this.sorted = null;
  }

  clear(): void {
    this.records = null;
    this.sorted = null;
    this.stale.clear();
  }

  private async refresh(): Promise<void> {
    // One refresh at a time; a read that arrives during one waits for it, then checks again.
    while (this.loading) await this.loading;
    const expired = this.records !== null && this.now() - this.loadedAt >= this.maxAgeMs;
    if (this.records && !expired && this.stale.size === 0) return;
    this.loading = this.reload(expired).finally(() => (this.loading = null));
    await this.loading;
  }

  private async reload(expired: boolean): Promise<void> {
    if (!this.records || expired) {
      const pending = [...this.stale];
      this.stale.clear();
      const at = this.now();
      let all: LibraryRecord[];
      try {
        all = await this.load(null);
      } catch (e) {
        for (const id of pending) this.stale.add(id);
        if (!this.records) throw e;
        this.loadedAt = at;
        return;
      }
      this.loadedAt = at;
      this.records = new Map(all.map((r) => [r.id, freezeLibraryRecord(r)]));
      this.sorted = null;
      this.stats.loads++;
      return;
    }
    const ids = [...this.stale];
    this.stale.clear();
    for (const id of ids) {
      const [fresh] = await this.load(id);
      if (fresh) this.records.set(id, freezeLibraryRecord(fresh));
      else this.records.delete(id);
      this.stats.reloads++;
    }
    this.sorted = null;
  }
}

/** "(library, version) or the whole library": `$2::text IS NULL OR version = $2`. */
const IN_SCOPE = '($2::text IS NULL OR version = $2)';

export class PgCatalog extends PgRole implements CatalogStore {
  readonly cache = new PgCatalogCache((id) => this.libraryRecords(id));
  private readonly buildsDeletedListeners = new Set<(buildIds: string[]) => void>();

  constructor(database: PgDatabase) {
    super(database);
    database.changes.on('change', (topic: string, id: string) => {
      if (topic === 'library') this.cache.touch(id);
    });
  }

  /**
   * These libraries' rows changed (committed): this node's cache and every other node's drop
   * their records (through the change feed). Builds call it on finalize, jobs on state changes.
   */
  async changed(...ids: string[]): Promise<void> {
    for (const id of ids) await this.database.publish('library', id);
  }

  /** Throws `library_not_found` unless the library exists (read from the database, not the cache). */
  async requireLibrary(id: string, client?: pg.ClientBase): Promise<void> {
    const rows = client ? (await client.query('SELECT 1 FROM libraries WHERE id = $1', [id])).rows : await this.query('SELECT 1 FROM libraries WHERE id = $1', [id]);
    if (rows.length === 0) throw libraryNotFound(id);
  }

  /** Called with the ids of the builds a delete removed (their rows are gone; local caches may drop them). */
  onBuildsDeleted(listener: (buildIds: string[]) => void): void {
    this.buildsDeletedListeners.add(listener);
  }

  async upsertLibrary(input: LibraryInput): Promise<LibraryRecord> {
    validateLibraryInput(input);
    // Fields the input leaves out keep their stored value on update (defaults on insert).
    await this.query(
      `INSERT INTO libraries (id, title, description, branch, source_kind, source_spec, stars, trust_score, benchmark_score, created_at, updated_at)
       VALUES ($1, $2, COALESCE($3::text, ''), COALESCE($4::text, ''), $5, $6::jsonb, COALESCE($7::float8, 0), COALESCE($8::float8, 0), COALESCE($9::float8, 0), $10, $10)
       ON CONFLICT (id) DO UPDATE SET
         title = EXCLUDED.title,
         description = COALESCE($3, libraries.description),
         branch = COALESCE($4, libraries.branch),
         source_kind = EXCLUDED.source_kind,
         source_spec = EXCLUDED.source_spec,
         stars = COALESCE($7, libraries.stars),
         trust_score = COALESCE($8, libraries.trust_score),
         benchmark_score = COALESCE($9, libraries.benchmark_score),
         updated_at = EXCLUDED.updated_at`,
      [
        input.id,
        input.title,
        input.description ?? null,
        input.branch ?? null,
        input.source.kind,
        JSON.stringify(input.source.spec ?? {}),
        input.stars ?? null,
        input.trustScore ?? null,
        input.benchmarkScore ?? null,
        this.now(),
      ],
    );
    await this.changed(input.id);
    return (await this.cache.one(input.id))!;
  }

  async getLibrary(id: string): Promise<LibraryRecord | null> {
    this.requireOpen();
    return this.cache.one(id);
  }

  async listLibraries(): Promise<LibraryRecord[]> {
    this.requireOpen();
    return this.cache.all();
  }

  async deleteLibrary(id: string, version?: string): Promise<boolean> {
    if (version !== undefined && typeof version !== 'string') throw invalid('The version must be a string ("" for the default version).');
    const scope = [id, version ?? null];
    const buildIds = await this.tx(async (c) => {
      // The library row locked: a concurrent delete or rename waits; the job rows locked: a
      // claim waits and then finds its job gone.
      if ((await c.query('SELECT 1 FROM libraries WHERE id = $1 FOR UPDATE', [id])).rowCount === 0) return null;
      const jobs = (await c.query(`SELECT id, state FROM jobs WHERE library_id = $1 AND ${IN_SCOPE} FOR UPDATE`, scope)).rows;
      const builds = (await c.query(`SELECT id FROM builds WHERE library_id = $1 AND ${IN_SCOPE}`, scope)).rows.map((r) => str(r.id));
      if (version !== undefined && jobs.length === 0 && builds.length === 0) {
        const v = await c.query('SELECT 1 FROM versions WHERE library_id = $1 AND version = $2', scope);
        if (v.rowCount === 0) return null;
      }
      const busy = jobs.find((j) => j.state === 'running');
      if (busy) throw libraryBusy(id, version, str(busy.id));
      if (version === undefined) {
        // Versions, builds (their chunks and documents), jobs (their logs) and aliases cascade.
        await c.query('DELETE FROM libraries WHERE id = $1', [id]);
      } else {
        await c.query(`DELETE FROM versions WHERE library_id = $1 AND ${IN_SCOPE}`, scope);
        await c.query(`DELETE FROM builds WHERE library_id = $1 AND ${IN_SCOPE}`, scope);
        await c.query(`DELETE FROM jobs WHERE library_id = $1 AND ${IN_SCOPE}`, scope);
      }
      return builds;
    });
    if (buildIds === null) return false;
    await this.changed(id);
    if (buildIds.length > 0) for (const listener of this.buildsDeletedListeners) listener(buildIds);
    return true;
  }

  async renameLibrary(oldId: string, newId: string): Promise<LibraryRecord> {
    validateRename(oldId, newId);
    await this.tx(async (c) => {
      if ((await c.query('SELECT 1 FROM libraries WHERE id = $1 FOR UPDATE', [oldId])).rowCount === 0) throw libraryNotFound(oldId);
      if ((await c.query('SELECT 1 FROM libraries WHERE id = $1', [newId])).rowCount !== 0) throw renameTargetExists(newId);
      // versions, builds, jobs and the aliases pointing at the old id follow (ON UPDATE CASCADE).
      await c.query('UPDATE libraries SET id = $2, updated_at = $3 WHERE id = $1', [oldId, newId, this.now()]);
      await c.query('DELETE FROM library_aliases WHERE alias = $1', [newId]);
      await c.query(
        `INSERT INTO library_aliases (alias, target, created_at) VALUES ($1, $2, $3)
         ON CONFLICT (alias) DO UPDATE SET target = EXCLUDED.target, created_at = EXCLUDED.created_at`,
        [oldId, newId, this.now()],
      );
    });
    await this.changed(oldId, newId);
    return (await this.cache.one(newId))!;
  }

  async resolveLibraryAlias(id: string): Promise<string | null> {
    const [row] = await this.query('SELECT target FROM library_aliases WHERE alias = $1', [String(id)]);
    return row ? str(row.target) : null;
  }

  async getVersion(libraryId: string, version: string): Promise<VersionRecord | null> {
    return (await this.versionRecords(libraryId, version))[0] ?? null;
  }

  async listVersions(libraryId: string): Promise<VersionRecord[]> {
    const records = await this.versionRecords(libraryId, null);
    return [...records.filter((r) => r.version === ''), ...sortVersionsNewestFirst(records.filter((r) => r.version !== ''))];
  }

  /**
   * Version records of a library (one version, or all it has). A version is known once it has
   * been built, is being built, or has a job; finalized when it has a served build, otherwise its
   * state follows its newest job (or build).
   */
  private async versionRecords(libraryId: string, version: string | null): Promise<VersionRecord[]> {
    const rows = await this.query(
      `WITH names AS (
         SELECT version FROM versions WHERE library_id = $1 AND ${IN_SCOPE}
         UNION SELECT version FROM builds WHERE library_id = $1 AND ${IN_SCOPE}
         UNION SELECT version FROM jobs WHERE library_id = $1 AND ${IN_SCOPE})
       SELECT n.version, v.active_build_id, v.last_update_date, v.total_tokens, v.total_snippets,
         (SELECT j.state FROM jobs j WHERE j.library_id = $1 AND j.version = n.version ORDER BY j.created_at DESC, j.seq DESC LIMIT 1) AS job_state,
         (SELECT b.state FROM builds b WHERE b.library_id = $1 AND b.version = n.version ORDER BY b.started_at DESC, b.seq DESC LIMIT 1) AS build_state
       FROM names n JOIN libraries l ON l.id = $1
       LEFT JOIN versions v ON v.library_id = $1 AND v.version = n.version`,
      [libraryId, version],
    );
    return rows.map((r) => {
      const activeBuildId = strOrNull(r.active_build_id);
      let state: LibraryState | null = activeBuildId ? 'finalized' : null;
      state ??= jobStateToLibraryState(strOrNull(r.job_state));
      const build = strOrNull(r.build_state);
      if (!state && build) state = build === 'building' ? 'processing' : build === 'failed' ? 'error' : null;
      return {
        libraryId,
        version: str(r.version),
        state: state ?? 'initial',
        activeBuildId,
        lastUpdateDate: isoOrNull(r.last_update_date),
        totalTokens: num(r.total_tokens),
        totalSnippets: num(r.total_snippets),
      };
    });
  }

  /** Library records from the database, all of them (by id) or the one with this id. */
  async libraryRecords(id: string | null): Promise<LibraryRecord[]> {
    const one = id !== null;
    const params = one ? [id] : [];
    const [libs, served, jobs] = await Promise.all([
      this.query(`SELECT * FROM libraries${one ? ' WHERE id = $1' : ''} ORDER BY id`, params),
      this.query(
        `SELECT library_id, version, last_update_date, total_tokens, total_snippets FROM versions
         WHERE active_build_id IS NOT NULL${one ? ' AND library_id = $1' : ''}`,
        params,
      ),
      this.query(
        `SELECT DISTINCT ON (library_id) library_id, state FROM jobs${one ? ' WHERE library_id = $1' : ''}
         ORDER BY library_id, created_at DESC, seq DESC`,
        params,
      ),
    ]);
    const versionsByLib = new Map<string, ServedVersion[]>();
    for (const v of served) {
      const k = str(v.library_id);
      const row = { version: str(v.version), lastUpdateDate: isoOrNull(v.last_update_date), totalTokens: num(v.total_tokens), totalSnippets: num(v.total_snippets) };
      versionsByLib.set(k, [...(versionsByLib.get(k) ?? []), row]);
    }
    const newestJob = new Map(jobs.map((j) => [str(j.library_id), str(j.state)]));
    return libs.map((lib) =>
      libraryRecordOf(
        {
          id: str(lib.id),
          title: str(lib.title),
          description: str(lib.description),
          branch: str(lib.branch),
          stars: num(lib.stars),
          trustScore: num(lib.trust_score),
          benchmarkScore: num(lib.benchmark_score),
          source: { kind: str(lib.source_kind), spec: jsonObject<Record<string, unknown>>(lib.source_spec, {}) },
          createdAt: iso(lib.created_at),
        },
        versionsByLib.get(str(lib.id)) ?? [],
        newestJob.get(str(lib.id)),
      ),
    );
  }
}
