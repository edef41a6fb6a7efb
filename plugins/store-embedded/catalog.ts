/** The embedded store's catalog role: libraries, versions, renames and aliases (tables libraries, versions, library_aliases). */
import type { CatalogStore, LibraryInput, LibraryRecord, LibraryState, VersionRecord } from '../../core/contracts.ts';
import { invalid, jobStateToLibraryState, libraryBusy, libraryNotFound, libraryRecordOf, validateLibraryInput } from '../../core/store-rules.ts';
import { renameTargetExists, validateRename } from '../../core/store-admin-rules.ts';
import { sortVersionsNewestFirst } from '../../core/version-order.ts';
import type { EmbeddedBuilds } from './builds.ts';
import { CatalogCache } from './catalog-cache.ts';
import { EmbeddedRole, type EmbeddedDatabase } from './database.ts';
import { all, get, num, parseJson, run, str, strOrNull, transaction, type Row } from './sqlite.ts';

export class EmbeddedCatalog extends EmbeddedRole implements CatalogStore {
  /** The library records in memory (catalog-cache.ts); every write of a library's rows touches it (`touch`). */
  readonly cache = new CatalogCache((id) => this.libraryRecords(id));

  /** `builds`: the builds role, whose files go with a deleted library (given late: it needs this catalog). */
  constructor(
    database: EmbeddedDatabase,
    private readonly buildsRole: () => EmbeddedBuilds,
  ) {
    super(database);
  }

  private get builds(): EmbeddedBuilds {
    return this.buildsRole();
  }

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
    this.touch(input.id);
    await this.persist();
    return this.cache.one(input.id)!;
  }

  async getLibrary(id: string): Promise<LibraryRecord | null> {
    this.requireDb();
    return this.cache.one(id);
  }

  async listLibraries(): Promise<LibraryRecord[]> {
    this.requireDb();
    return this.cache.all();
  }

  /**
   * These libraries' records changed (their row, served versions or newest job): the cache reads
   * them again at the next read. Every role that writes those rows calls it (builds, jobs).
   */
  touch(...ids: string[]): void {
    this.cache.touch(...ids);
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
    for (const b of buildIds) this.builds.segments.delete(b);
    this.touch(id);
    await this.builds.discardStaging(buildIds);
    await this.persist();
    await this.builds.removeSegmentFiles(buildIds);
    await this.builds.removeStoredDocs(buildIds);
    return true;
  }

  /** Library records, all of them (by id) or the one with this id. */
  libraryRecords(id: string | null): LibraryRecord[] {
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
          source: { kind: str(lib.source_kind), spec: parseJson<Record<string, unknown>>(lib.source_spec, {}) },
          createdAt: str(lib.created_at),
        },
        (versionsByLib.get(str(lib.id)) ?? []).map((v) => ({
          version: str(v.version),
          lastUpdateDate: strOrNull(v.last_update_date),
          totalTokens: num(v.total_tokens),
          totalSnippets: num(v.total_snippets),
        })),
        newestJob.get(str(lib.id)),
      ),
    );
  }

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
  versionRecord(libraryId: string, version: string): VersionRecord | null {
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
    this.touch(oldId, newId);
    await this.persist();
    return this.cache.one(newId)!;
  }

  async resolveLibraryAlias(id: string): Promise<string | null> {
    const row = get(this.requireDb(), 'SELECT target FROM library_aliases WHERE alias = ?', [String(id)]);
    return row ? str(row.target) : null;
  }
}
