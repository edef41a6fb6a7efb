/** The in-memory store's catalog role: libraries, versions, renames (core/testing/memory-store.ts). */
import type {
  CatalogStore,
  LibraryInput,
  LibraryRecord,
  LibraryState,
  VersionRecord,
} from '../../contracts.ts';
import { sortVersionsNewestFirst } from '../../version-order.ts';
import { invalid, jobStateToLibraryState, libraryBusy, libraryNotFound, libraryRecordOf, validateLibraryInput } from '../../store-rules.ts';
import { renameTargetExists, validateRename } from '../../store-admin-rules.ts';
import { MemoryRole, binaryCompare, newestFirst, parseJson, versionKey, type BuildRow, type JobRow, type LibraryRow } from './state.ts';

export class MemoryCatalog extends MemoryRole implements CatalogStore {
  async upsertLibrary(input: LibraryInput): Promise<LibraryRecord> {
    this.requireOpen();
    validateLibraryInput(input);
    const existing = this.state.libraries.get(input.id);
    const spec = JSON.stringify(input.source.spec ?? {});
    if (existing) {
      this.state.libraries.set(input.id, {
        ...existing,
        title: input.title,
        description: input.description ?? existing.description,
        branch: input.branch ?? existing.branch,
        sourceKind: input.source.kind,
        sourceSpec: spec,
        stars: input.stars ?? existing.stars,
        trustScore: input.trustScore ?? existing.trustScore,
        benchmarkScore: input.benchmarkScore ?? existing.benchmarkScore,
      });
    } else {
      this.state.libraries.set(input.id, {
        id: input.id,
        title: input.title,
        description: input.description ?? '',
        branch: input.branch ?? '',
        sourceKind: input.source.kind,
        sourceSpec: spec,
        stars: input.stars ?? 0,
        trustScore: input.trustScore ?? 0,
        benchmarkScore: input.benchmarkScore ?? 0,
        createdAt: this.now(),
      });
    }
    return this.libraryRecord(this.state.libraries.get(input.id)!);
  }

  async getLibrary(id: string): Promise<LibraryRecord | null> {
    this.requireOpen();
    const lib = this.state.libraries.get(id);
    return lib ? this.libraryRecord(lib) : null;
  }

  async listLibraries(): Promise<LibraryRecord[]> {
    this.requireOpen();
    return [...this.state.libraries.values()].sort((a, b) => binaryCompare(a.id, b.id)).map((l) => this.libraryRecord(l));
  }

  async deleteLibrary(id: string, version?: string): Promise<boolean> {
    this.requireOpen();
    if (version !== undefined && typeof version !== 'string') throw invalid('The version must be a string ("" for the default version).');
    if (!this.state.libraries.has(id)) return false;
    const inScope = (row: { libraryId: string; version: string }) => row.libraryId === id && (version === undefined || row.version === version);
    const known = [...this.state.versions.values(), ...this.state.builds.values(), ...this.state.jobs.values()].some(inScope);
    if (version !== undefined && !known) return false;
    const busy = [...this.state.jobs.values()].find((j) => inScope(j) && j.state === 'running');
    if (busy) throw libraryBusy(id, version, busy.id);
    for (const [k, b] of this.state.builds) if (inScope(b)) this.state.builds.delete(k);
    for (const [k, v] of this.state.versions) if (inScope(v)) this.state.versions.delete(k);
    for (const [k, j] of this.state.jobs) if (inScope(j)) this.state.jobs.delete(k);
    if (version === undefined) {
      this.state.libraries.delete(id);
      for (const [alias, target] of this.state.aliases) if (target === id) this.state.aliases.delete(alias);
    }
    return true;
  }

  async renameLibrary(oldId: string, newId: string): Promise<LibraryRecord> {
    this.requireOpen();
    validateRename(oldId, newId);
    const lib = this.state.libraries.get(oldId);
    if (!lib) throw libraryNotFound(oldId);
    if (this.state.libraries.has(newId)) throw renameTargetExists(newId);
    this.state.libraries.delete(oldId);
    this.state.libraries.set(newId, { ...lib, id: newId });
    for (const [k, v] of [...this.state.versions]) {
      if (v.libraryId !== oldId) continue;
      this.state.versions.delete(k);
      this.state.versions.set(versionKey(newId, v.version), { ...v, libraryId: newId });
    }
    for (const b of this.state.builds.values()) if (b.libraryId === oldId) b.libraryId = newId;
    for (const j of this.state.jobs.values()) if (j.libraryId === oldId) j.libraryId = newId;
    this.state.aliases.delete(newId);
    for (const [alias, target] of this.state.aliases) if (target === oldId) this.state.aliases.set(alias, newId);
    this.state.aliases.set(oldId, newId);
    return this.libraryRecord(this.state.libraries.get(newId)!);
  }

  async resolveLibraryAlias(id: string): Promise<string | null> {
    this.requireOpen();
    return this.state.aliases.get(String(id)) ?? null;
  }

  private newestJob(libraryId: string, version?: string): JobRow | undefined {
    let best: JobRow | undefined;
    const cmp = newestFirst<JobRow>((j) => j.createdAt);
    for (const j of this.state.jobs.values()) {
      if (j.libraryId !== libraryId || (version !== undefined && j.version !== version)) continue;
      if (!best || cmp(j, best) < 0) best = j;
    }
    return best;
  }

  private newestBuild(libraryId: string, version: string): BuildRow | undefined {
    let best: BuildRow | undefined;
    const cmp = newestFirst<BuildRow>((b) => b.startedAt);
    for (const b of this.state.builds.values()) {
      if (b.libraryId !== libraryId || b.version !== version) continue;
      if (!best || cmp(b, best) < 0) best = b;
    }
    return best;
  }

  libraryRecord(lib: LibraryRow): LibraryRecord {
    const served = [...this.state.versions.values()].filter((v) => v.libraryId === lib.id);
    return libraryRecordOf(
      {
        id: lib.id,
        title: lib.title,
        description: lib.description,
        branch: lib.branch,
        stars: lib.stars,
        trustScore: lib.trustScore,
        benchmarkScore: lib.benchmarkScore,
        source: { kind: lib.sourceKind, spec: parseJson<Record<string, unknown>>(lib.sourceSpec, {}) },
        createdAt: lib.createdAt,
      },
      served,
      this.newestJob(lib.id)?.state,
    );
  }

  async getVersion(libraryId: string, version: string): Promise<VersionRecord | null> {
    this.requireOpen();
    return this.versionRecord(libraryId, version);
  }

  async listVersions(libraryId: string): Promise<VersionRecord[]> {
    this.requireOpen();
    const names = new Set<string>();
    for (const v of this.state.versions.values()) if (v.libraryId === libraryId) names.add(v.version);
    for (const b of this.state.builds.values()) if (b.libraryId === libraryId) names.add(b.version);
    for (const j of this.state.jobs.values()) if (j.libraryId === libraryId) names.add(j.version);
    const records = [...names]
      .sort(binaryCompare)
      .map((v) => this.versionRecord(libraryId, v))
      .filter((r): r is VersionRecord => r !== null);
    const def = records.filter((r) => r.version === '');
    return [...def, ...sortVersionsNewestFirst(records.filter((r) => r.version !== ''))];
  }

  /**
   * A version is known once it has been built, is being built, or has a job. Its state:
   * finalized when it has a served build; otherwise from its newest job (or build).
   */
  versionRecord(libraryId: string, version: string): VersionRecord | null {
    if (!this.state.libraries.has(libraryId)) return null;
    const row = this.state.versions.get(versionKey(libraryId, version));
    const activeBuildId = row ? row.activeBuildId : null;
    let state: LibraryState | null = activeBuildId ? 'finalized' : null;
    const job = this.newestJob(libraryId, version);
    const build = this.newestBuild(libraryId, version);
    if (!row && !job && !build) return null;
    state ??= jobStateToLibraryState(job ? job.state : null);
    if (!state && build) state = build.state === 'building' ? 'processing' : build.state === 'failed' ? 'error' : null;
    return {
      libraryId,
      version,
      state: state ?? 'initial',
      activeBuildId,
      lastUpdateDate: row ? row.lastUpdateDate : null,
      totalTokens: row ? row.totalTokens : 0,
      totalSnippets: row ? row.totalSnippets : 0,
    };
  }
}
