/** The in-memory store's builds-and-snippets role (core/testing/memory-store.ts). */
import { randomUUID } from 'node:crypto';
import type {
  BuildDocument,
  BuildStats,
  BuildStore,
  SearchHit,
  ServedBuildChunkers,
  Snippet,
  SnippetHead,
  StoredSnippet,
  VersionRecord,
} from '../../contracts.ts';
import { invalid, libraryNotFound, notServedError, snippetHead } from '../../store-rules.ts';
import { buildLexicalIndex } from '../../search/lexical-index.ts';
import type { MemoryCatalog } from './catalog.ts';
import { MemoryRole, copySnippet, versionKey, type BuildRow, type MemoryState } from './state.ts';

export class MemoryBuilds extends MemoryRole implements BuildStore {
  constructor(
    state: MemoryState,
    private readonly catalog: MemoryCatalog,
  ) {
    super(state);
  }

  async beginBuild(libraryId: string, version: string, jobId: string | null): Promise<string> {
    this.requireOpen();
    if (typeof version !== 'string') throw invalid('The version must be a string ("" for the default version).');
    if (!this.state.libraries.has(libraryId)) throw libraryNotFound(libraryId);
    const id = randomUUID();
    this.state.builds.set(id, {
      id,
      libraryId,
      version,
      jobId: jobId ?? null,
      state: 'building',
      startedAt: this.now(),
      finishedAt: null,
      rowid: this.state.nextRowid++,
      snippets: [],
      documents: new Map(),
      byId: null,
      index: null,
    });
    return id;
  }

  private stagedBuild(buildId: string): BuildRow {
    const build = this.state.builds.get(buildId);
    if (!build) throw invalid(`Build "${buildId}" not found (its library may have been deleted).`);
    if (build.state !== 'building') throw invalid(`Build "${buildId}" is ${build.state}; it no longer accepts changes.`);
    return build;
  }

  async addSnippets(buildId: string, snippets: Snippet[]): Promise<void> {
    this.requireOpen();
    const build = this.stagedBuild(buildId);
    if (snippets.length === 0) return;
    let seq = build.snippets.length === 0 ? 0 : build.snippets[build.snippets.length - 1].seq + 1;
    // All or nothing, like the embedded store's transaction: copy everything before numbering.
    const copies = snippets.map(copySnippet);
    for (const s of copies) build.snippets.push(Object.freeze({ id: this.state.nextSnippetId++, seq: seq++, ...s }));
  }

  async addDocuments(buildId: string, documents: BuildDocument[]): Promise<void> {
    this.requireOpen();
    const build = this.stagedBuild(buildId);
    for (const d of documents) build.documents.set(d.path, { path: d.path, hash: d.hash, meta: { ...d.meta }, chunker: d.chunker });
  }

  async getDocuments(libraryId: string, version: string): Promise<Map<string, BuildDocument>> {
    this.requireOpen();
    const row = this.state.versions.get(versionKey(libraryId, version));
    const build = row ? this.state.builds.get(row.activeBuildId) : undefined;
    const out = new Map<string, BuildDocument>();
    for (const [p, d] of build?.documents ?? []) out.set(p, { ...d, meta: { ...d.meta } });
    return out;
  }

  async servedBuildChunkers(): Promise<ServedBuildChunkers[]> {
    this.requireOpen();
    const out: ServedBuildChunkers[] = [];
    for (const row of this.state.versions.values()) {
      const build = this.state.builds.get(row.activeBuildId);
      if (!build) continue;
      const chunkers = [...new Set([...build.documents.values()].map((d) => d.chunker))].sort();
      out.push({ libraryId: row.libraryId, version: row.version, buildId: row.activeBuildId, chunkers });
    }
    return out;
  }

  async finalizeBuild(buildId: string): Promise<VersionRecord> {
    this.requireOpen();
    const build = this.stagedBuild(buildId);
    const { libraryId, version } = build;
    const now = this.now();
    const totals: BuildStats = {
      totalSnippets: build.snippets.length,
      totalTokens: build.snippets.reduce((sum, s) => sum + s.tokens, 0),
    };
    const key = versionKey(libraryId, version);
    const prev = this.state.versions.get(key)?.activeBuildId ?? null;
    this.state.versions.set(key, { libraryId, version, activeBuildId: buildId, lastUpdateDate: now, ...totals });
    build.state = 'finalized';
    build.finishedAt = now;
    if (prev && prev !== buildId) this.state.builds.delete(prev);
    return this.catalog.versionRecord(libraryId, version)!;
  }

  async failBuild(buildId: string): Promise<void> {
    this.requireOpen();
    const build = this.state.builds.get(buildId);
    if (!build) throw invalid(`Build "${buildId}" not found (its library may have been deleted).`);
    if (build.state === 'failed') return;
    if (build.state === 'finalized') throw invalid(`Build "${buildId}" is already finalized and served; it cannot be failed.`);
    build.snippets = [];
    build.documents = new Map();
    build.state = 'failed';
    build.finishedAt = this.now();
  }

  async getSnippets(libraryId: string, version: string): Promise<StoredSnippet[]> {
    this.requireOpen();
    return [...this.servedBuild(libraryId, version).snippets];
  }

  async getSnippetHeads(libraryId: string, version: string): Promise<SnippetHead[]> {
    this.requireOpen();
    return this.servedBuild(libraryId, version).snippets.map(snippetHead);
  }

  async search(libraryId: string, version: string, query: string, limit: number): Promise<SearchHit[]> {
    this.requireOpen();
    const build = this.servedBuild(libraryId, version);
    const n = Math.floor(limit);
    if (!(n > 0) || typeof query !== 'string') return [];
    build.index ??= buildLexicalIndex(build.snippets);
    build.byId ??= new Map(build.snippets.map((s) => [s.id, s]));
    const hits: SearchHit[] = [];
    for (const r of build.index.search(query, n)) {
      const snippet = build.byId.get(r.id);
      if (snippet) hits.push(r.unit ? { snippet, score: r.score, unit: r.unit } : { snippet, score: r.score });
    }
    return hits;
  }

  /** The served build of a version, or the not-found error that explains why none is. */
  private servedBuild(libraryId: string, version: string): BuildRow {
    const row = this.state.versions.get(versionKey(libraryId, version));
    if (row) return this.state.builds.get(row.activeBuildId)!;
    if (!this.state.libraries.has(libraryId)) throw libraryNotFound(libraryId);

    const state = this.catalog.versionRecord(libraryId, version)?.state ?? 'initial';
    const pinned = this.catalog.libraryRecord(this.state.libraries.get(libraryId)!).versions;
    throw notServedError(libraryId, version, state, pinned);
  }
}
