/**
 * Plugin test kit: the whole Store contract in memory, for tests that need a store without a
 * data directory. Nothing is persisted and there is no lock; otherwise it behaves like the
 * embedded store: the same library/version/job state derivation, build switch-over only on
 * `finalizeBuild`, `failBuild` keeping the served build, the same error codes and messages, and
 * the same lexical search (one BM25F index per served build, built on its first search).
 *
 * Everything handed in is copied and everything handed out is a fresh object (snippets are
 * frozen), so a test cannot change the store by mutating what it passed or got back.
 */
import { randomUUID } from 'node:crypto';
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
  LogLevel,
  SearchHit,
  Snippet,
  Store,
  StoredSnippet,
  VersionRecord,
} from '../contracts.ts';
import { sortVersionsNewestFirst } from '../version-order.ts';
import { RefdeskError } from '../errors.ts';
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
} from '../store-rules.ts';
import { buildLexicalIndex, type LexicalIndex } from '../search/lexical-index.ts';
import { systemClock } from '../services.ts';
import { duplicateApiKey, renameTargetExists, settingJson, validateApiKeyInput, validateRename, validateSettingKey } from '../store-admin-rules.ts';

export interface MemoryStoreOptions {
  /** Where timestamps come from; the system clock unless given. */
  clock?: Clock;
}

/** Job log lines kept per job; older lines are dropped (as the embedded store does). */
export const MEMORY_JOB_LOG_LIMIT = 2000;


interface LibraryRow {
  id: string;
  title: string;
  description: string;
  branch: string;
  sourceKind: string;
  /** JSON, as the embedded store keeps it: what comes back is a copy without undefined values. */
  sourceSpec: string;
  stars: number;
  trustScore: number;
  benchmarkScore: number;
  createdAt: string;
}

interface VersionRow {
  libraryId: string;
  version: string;
  activeBuildId: string;
  lastUpdateDate: string;
  totalTokens: number;
  totalSnippets: number;
}

type BuildState = 'building' | 'finalized' | 'failed';

interface BuildRow {
  id: string;
  libraryId: string;
  version: string;
  jobId: string | null;
  state: BuildState;
  startedAt: string;
  finishedAt: string | null;
  /** Insertion order, the tie-breaker the embedded store's rowid gives. */
  rowid: number;
  snippets: StoredSnippet[];
  documents: Map<string, BuildDocument>;
  byId: Map<number, StoredSnippet> | null;
  index: LexicalIndex | null;
}

interface JobRow {
  id: string;
  libraryId: string;
  version: string;
  kind: string;
  state: JobState;
  progress: string;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  rowid: number;
  log: JobLogLine[];
}

function parseJson<T>(text: string | null, fallback: T): T {
  if (typeof text !== 'string') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** SQLite's BINARY collation (UTF-8 byte order, i.e. code point order), as `ORDER BY` uses it. */
function binaryCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; ) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(i)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    i += ca > 0xffff ? 2 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Newest first: `created_at DESC, rowid DESC`. */
function newestFirst<T extends { rowid: number }>(key: (r: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka !== kb) return ka < kb ? 1 : -1;
    return b.rowid - a.rowid;
  };
}

// ---------------------------------------------------------------------------------------------
// Pinned version order: the same rules as the embedded store (numbers when every version looks
// like one, else last update date, newest first).
// ---------------------------------------------------------------------------------------------


// ---------------------------------------------------------------------------------------------

function versionKey(libraryId: string, version: string): string {
  return JSON.stringify([libraryId, version]);
}

/** A copy of the snippet as the store keeps it (missing fields defaulted), not yet numbered. */
function copySnippet(s: Snippet): Snippet {
  const breadcrumb = parseJson<string[]>(JSON.stringify(s.breadcrumb ?? []), []);
  return {
    type: s.type,
    title: s.title ?? '',
    description: s.description ?? '',
    language: s.language ?? '',
    code: s.code ?? '',
    content: s.content ?? '',
    breadcrumb: Object.freeze(breadcrumb) as string[],
    pageTitle: s.pageTitle ?? '',
    sourcePath: s.sourcePath ?? '',
    ...(s.sourceUrl != null ? { sourceUrl: s.sourceUrl } : {}),
    ...(s.anchor != null ? { anchor: s.anchor } : {}),
    lineStart: s.lineStart ?? 0,
    lineEnd: s.lineEnd ?? 0,
    tokens: s.tokens ?? 0,
  };
}

export class MemoryStore implements Store {
  private readonly clock: Clock;
  private opened = false;
  private closed = false;

  private libraries = new Map<string, LibraryRow>();
  /** Served versions, by `versionKey`. */
  private versions = new Map<string, VersionRow>();
  private builds = new Map<string, BuildRow>();
  private jobs = new Map<string, JobRow>();
  private nextSnippetId = 1;
  private nextRowid = 1;
  /** Settings as JSON text, as the embedded store keeps them. */
  private settings = new Map<string, string>();
  private apiKeys = new Map<string, ApiKeyRecord & { hash: string; rowid: number }>();
  private aliases = new Map<string, string>();
  private adminAccount: AdminAccountRecord | null = null;
  private sessions = new Map<string, SessionRecord>();
  private audit: AuditEntry[] = [];

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  // -------------------------------------------------------------------------------------------
  // Lifecycle
  // -------------------------------------------------------------------------------------------

  async open(): Promise<void> {
    if (this.opened) return;
    if (this.closed) throw new RefdeskError('internal_error', 'The store was closed; create a new one to open it again.');
    this.opened = true;
  }

  async close(): Promise<void> {
    this.opened = false;
    this.closed = true;
    this.libraries = new Map();
    this.versions = new Map();
    this.builds = new Map();
    this.jobs = new Map();
    this.settings = new Map();
    this.apiKeys = new Map();
    this.aliases = new Map();
    this.adminAccount = null;
    this.sessions = new Map();
    this.audit = [];
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  private requireOpen(): void {
    if (!this.opened) {
      throw new RefdeskError('internal_error', this.closed ? 'The store is closed.' : 'The store is not open yet: call open() first.');
    }
  }

  // -------------------------------------------------------------------------------------------
  // Catalog
  // -------------------------------------------------------------------------------------------

  async upsertLibrary(input: LibraryInput): Promise<LibraryRecord> {
    this.requireOpen();
    validateLibraryInput(input);
    const existing = this.libraries.get(input.id);
    const spec = JSON.stringify(input.source.spec ?? {});
    if (existing) {
      this.libraries.set(input.id, {
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
      this.libraries.set(input.id, {
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
    return this.libraryRecord(this.libraries.get(input.id)!);
  }

  async getLibrary(id: string): Promise<LibraryRecord | null> {
    this.requireOpen();
    const lib = this.libraries.get(id);
    return lib ? this.libraryRecord(lib) : null;
  }

  async listLibraries(): Promise<LibraryRecord[]> {
    this.requireOpen();
    return [...this.libraries.values()].sort((a, b) => binaryCompare(a.id, b.id)).map((l) => this.libraryRecord(l));
  }

  async deleteLibrary(id: string, version?: string): Promise<boolean> {
    this.requireOpen();
    if (version !== undefined && typeof version !== 'string') throw invalid('The version must be a string ("" for the default version).');
    if (!this.libraries.has(id)) return false;
    const inScope = (row: { libraryId: string; version: string }) => row.libraryId === id && (version === undefined || row.version === version);
    const known = [...this.versions.values(), ...this.builds.values(), ...this.jobs.values()].some(inScope);
    if (version !== undefined && !known) return false;
    const busy = [...this.jobs.values()].find((j) => inScope(j) && j.state === 'running');
    if (busy) throw libraryBusy(id, version, busy.id);
    for (const [k, b] of this.builds) if (inScope(b)) this.builds.delete(k);
    for (const [k, v] of this.versions) if (inScope(v)) this.versions.delete(k);
    for (const [k, j] of this.jobs) if (inScope(j)) this.jobs.delete(k);
    if (version === undefined) {
      this.libraries.delete(id);
      for (const [alias, target] of this.aliases) if (target === id) this.aliases.delete(alias);
    }
    return true;
  }

  private newestJob(libraryId: string, version?: string): JobRow | undefined {
    let best: JobRow | undefined;
    const cmp = newestFirst<JobRow>((j) => j.createdAt);
    for (const j of this.jobs.values()) {
      if (j.libraryId !== libraryId || (version !== undefined && j.version !== version)) continue;
      if (!best || cmp(j, best) < 0) best = j;
    }
    return best;
  }

  private newestBuild(libraryId: string, version: string): BuildRow | undefined {
    let best: BuildRow | undefined;
    const cmp = newestFirst<BuildRow>((b) => b.startedAt);
    for (const b of this.builds.values()) {
      if (b.libraryId !== libraryId || b.version !== version) continue;
      if (!best || cmp(b, best) < 0) best = b;
    }
    return best;
  }

  private libraryRecord(lib: LibraryRow): LibraryRecord {
    const served = [...this.versions.values()].filter((v) => v.libraryId === lib.id);
    const def = served.find((v) => v.version === '');
    const pinned = sortVersionsNewestFirst(
      served
        .filter((v) => v.version !== '')
        .sort((a, b) => binaryCompare(a.version, b.version))
        .map((v) => ({ row: v, version: v.version, lastUpdateDate: v.lastUpdateDate })),
    );
    const { state, shown } = libraryServing(def, pinned, this.newestJob(lib.id)?.state);
    return {
      id: lib.id,
      title: lib.title,
      description: lib.description,
      branch: lib.branch,
      lastUpdateDate: shown ? shown.lastUpdateDate : null,
      state,
      totalTokens: shown ? shown.totalTokens : 0,
      totalSnippets: shown ? shown.totalSnippets : 0,
      stars: lib.stars,
      trustScore: lib.trustScore,
      benchmarkScore: lib.benchmarkScore,
      versions: pinned.map((p) => p.version),
      source: { kind: lib.sourceKind, spec: parseJson<Record<string, unknown>>(lib.sourceSpec, {}) },
      createdAt: lib.createdAt,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Versions
  // -------------------------------------------------------------------------------------------

  async getVersion(libraryId: string, version: string): Promise<VersionRecord | null> {
    this.requireOpen();
    return this.versionRecord(libraryId, version);
  }

  async listVersions(libraryId: string): Promise<VersionRecord[]> {
    this.requireOpen();
    const names = new Set<string>();
    for (const v of this.versions.values()) if (v.libraryId === libraryId) names.add(v.version);
    for (const b of this.builds.values()) if (b.libraryId === libraryId) names.add(b.version);
    for (const j of this.jobs.values()) if (j.libraryId === libraryId) names.add(j.version);
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
  private versionRecord(libraryId: string, version: string): VersionRecord | null {
    if (!this.libraries.has(libraryId)) return null;
    const row = this.versions.get(versionKey(libraryId, version));
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

  // -------------------------------------------------------------------------------------------
  // Builds
  // -------------------------------------------------------------------------------------------

  async beginBuild(libraryId: string, version: string, jobId: string | null): Promise<string> {
    this.requireOpen();
    if (typeof version !== 'string') throw invalid('The version must be a string ("" for the default version).');
    if (!this.libraries.has(libraryId)) throw libraryNotFound(libraryId);
    const id = randomUUID();
    this.builds.set(id, {
      id,
      libraryId,
      version,
      jobId: jobId ?? null,
      state: 'building',
      startedAt: this.now(),
      finishedAt: null,
      rowid: this.nextRowid++,
      snippets: [],
      documents: new Map(),
      byId: null,
      index: null,
    });
    return id;
  }

  private stagedBuild(buildId: string): BuildRow {
    const build = this.builds.get(buildId);
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
    for (const s of copies) build.snippets.push(Object.freeze({ id: this.nextSnippetId++, seq: seq++, ...s }));
  }

  async addDocuments(buildId: string, documents: BuildDocument[]): Promise<void> {
    this.requireOpen();
    const build = this.stagedBuild(buildId);
    for (const d of documents) build.documents.set(d.path, { path: d.path, hash: d.hash, meta: { ...d.meta }, chunker: d.chunker });
  }

  async getDocuments(libraryId: string, version: string): Promise<Map<string, BuildDocument>> {
    this.requireOpen();
    const row = this.versions.get(versionKey(libraryId, version));
    const build = row ? this.builds.get(row.activeBuildId) : undefined;
    const out = new Map<string, BuildDocument>();
    for (const [p, d] of build?.documents ?? []) out.set(p, { ...d, meta: { ...d.meta } });
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
    const prev = this.versions.get(key)?.activeBuildId ?? null;
    this.versions.set(key, { libraryId, version, activeBuildId: buildId, lastUpdateDate: now, ...totals });
    build.state = 'finalized';
    build.finishedAt = now;
    if (prev && prev !== buildId) this.builds.delete(prev);
    return this.versionRecord(libraryId, version)!;
  }

  async failBuild(buildId: string): Promise<void> {
    this.requireOpen();
    const build = this.builds.get(buildId);
    if (!build) throw invalid(`Build "${buildId}" not found (its library may have been deleted).`);
    if (build.state === 'failed') return;
    if (build.state === 'finalized') throw invalid(`Build "${buildId}" is already finalized and served; it cannot be failed.`);
    build.snippets = [];
    build.documents = new Map();
    build.state = 'failed';
    build.finishedAt = this.now();
  }

  // -------------------------------------------------------------------------------------------
  // Snippets and search
  // -------------------------------------------------------------------------------------------

  async getSnippets(libraryId: string, version: string): Promise<StoredSnippet[]> {
    this.requireOpen();
    return [...this.servedBuild(libraryId, version).snippets];
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
    const row = this.versions.get(versionKey(libraryId, version));
    if (row) return this.builds.get(row.activeBuildId)!;
    if (!this.libraries.has(libraryId)) throw libraryNotFound(libraryId);

    const state = this.versionRecord(libraryId, version)?.state ?? 'initial';
    const pinned = this.libraryRecord(this.libraries.get(libraryId)!).versions;
    throw notServedError(libraryId, version, state, pinned);
  }

  // -------------------------------------------------------------------------------------------
  // Jobs
  // -------------------------------------------------------------------------------------------

  async createJob(input: { libraryId: string; version: string; kind: string }): Promise<JobRecord> {
    this.requireOpen();
    if (!input || typeof input.version !== 'string' || typeof input.kind !== 'string' || !input.kind) {
      throw invalid('A job needs a libraryId, a version ("" for the default) and a kind.');
    }
    if (!this.libraries.has(input.libraryId)) throw libraryNotFound(input.libraryId);
    const id = randomUUID();
    const job: JobRow = {
      id,
      libraryId: input.libraryId,
      version: input.version,
      kind: input.kind,
      state: 'queued',
      progress: '{}',
      error: null,
      createdAt: this.now(),
      startedAt: null,
      finishedAt: null,
      rowid: this.nextRowid++,
      log: [],
    };
    this.jobs.set(id, job);
    return toJobRecord(job);
  }

  async updateJob(
    id: string,
    patch: { state?: JobState; progress?: IngestProgress; error?: JobRecord['error'] },
  ): Promise<JobRecord> {
    this.requireOpen();
    const row = this.jobs.get(id);
    if (!row) throw invalid(`Job "${id}" not found.`);
    const job = toJobRecord(row);
    const { state, progress, error, startedAt, finishedAt } = applyJobPatch(job, patch, this.now());
    row.state = state;
    row.progress = JSON.stringify(progress);
    row.error = error ? JSON.stringify(error) : null;
    row.startedAt = startedAt;
    row.finishedAt = finishedAt;
    return toJobRecord(row);
  }

  async claimJob(id: string): Promise<JobRecord | null> {
    this.requireOpen();
    const row = this.jobs.get(id);
    if (!row || row.state !== 'queued') return null;
    row.state = 'running';
    row.startedAt ??= this.now();
    row.finishedAt = null;
    return toJobRecord(row);
  }

  async appendJobLog(id: string, level: LogLevel, message: string): Promise<void> {
    this.requireOpen();
    const job = this.jobs.get(id);
    if (!job) throw invalid(`Job "${id}" not found.`);
    const seq = job.log.length === 0 ? 1 : job.log[job.log.length - 1].seq + 1;
    job.log.push({ seq, at: this.now(), level: LOG_LEVELS.includes(level) ? level : 'info', message: String(message) });
    if (job.log.length > MEMORY_JOB_LOG_LIMIT) job.log.splice(0, job.log.length - MEMORY_JOB_LOG_LIMIT);
  }

  async getJob(id: string): Promise<JobRecord | null> {
    this.requireOpen();
    const job = this.jobs.get(id);
    return job ? toJobRecord(job) : null;
  }

  async getJobLog(id: string): Promise<JobLogLine[]> {
    this.requireOpen();
    const job = this.jobs.get(id);
    if (!job) throw invalid(`Job "${id}" not found.`);
    return job.log.map((l) => ({ ...l }));
  }

  async listJobs(filter: { libraryId?: string; state?: JobState; limit?: number } = {}): Promise<JobRecord[]> {
    this.requireOpen();
    let limit = Infinity;
    if (filter.limit !== undefined) {
      if (!Number.isInteger(filter.limit) || filter.limit < 0) throw invalid('limit must be a non-negative integer.');
      limit = filter.limit;
    }
    return [...this.jobs.values()]
      .filter((j) => (filter.libraryId === undefined || j.libraryId === filter.libraryId) && (filter.state === undefined || j.state === filter.state))
      .sort(newestFirst<JobRow>((j) => j.createdAt))
      .slice(0, limit)
      .map(toJobRecord);
  }

  // -------------------------------------------------------------------------------------------
  // Settings, API keys, aliases
  // -------------------------------------------------------------------------------------------

  async getSetting(key: string): Promise<unknown> {
    this.requireOpen();
    validateSettingKey(key);
    const text = this.settings.get(key);
    return text === undefined ? undefined : parseJson<unknown>(text, undefined);
  }

  async setSetting(key: string, value: unknown): Promise<void> {
    this.requireOpen();
    validateSettingKey(key);
    if (value === undefined) this.settings.delete(key);
    else this.settings.set(key, settingJson(key, value));
  }

  async createApiKey(input: ApiKeyInput): Promise<ApiKeyRecord> {
    this.requireOpen();
    validateApiKeyInput(input);
    if (this.apiKeys.has(input.id) || [...this.apiKeys.values()].some((k) => k.hash === input.hash)) throw duplicateApiKey();
    const row = {
      id: input.id,
      name: input.name,
      plan: input.plan,
      role: input.role,
      prefix: input.prefix,
      hash: input.hash,
      createdAt: this.now(),
      revokedAt: null,
      rowid: this.nextRowid++,
    };
    this.apiKeys.set(input.id, row);
    return publicKey(row);
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    this.requireOpen();
    const row = [...this.apiKeys.values()].find((k) => k.hash === String(hash));
    return row ? publicKey(row) : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    this.requireOpen();
    return [...this.apiKeys.values()]
      .sort((a, b) => (a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? -1 : 1) : a.rowid - b.rowid))
      .map(publicKey);
  }

  async revokeApiKey(id: string): Promise<ApiKeyRecord | null> {
    this.requireOpen();
    const row = this.apiKeys.get(String(id));
    if (!row) return null;
    if (row.revokedAt === null) this.apiKeys.set(row.id, { ...row, revokedAt: this.now() });
    return publicKey(this.apiKeys.get(row.id)!);
  }

  async renameLibrary(oldId: string, newId: string): Promise<LibraryRecord> {
    this.requireOpen();
    validateRename(oldId, newId);
    const lib = this.libraries.get(oldId);
    if (!lib) throw libraryNotFound(oldId);
    if (this.libraries.has(newId)) throw renameTargetExists(newId);
    this.libraries.delete(oldId);
    this.libraries.set(newId, { ...lib, id: newId });
    for (const [k, v] of [...this.versions]) {
      if (v.libraryId !== oldId) continue;
      this.versions.delete(k);
      this.versions.set(versionKey(newId, v.version), { ...v, libraryId: newId });
    }
    for (const b of this.builds.values()) if (b.libraryId === oldId) b.libraryId = newId;
    for (const j of this.jobs.values()) if (j.libraryId === oldId) j.libraryId = newId;
    this.aliases.delete(newId);
    for (const [alias, target] of this.aliases) if (target === oldId) this.aliases.set(alias, newId);
    this.aliases.set(oldId, newId);
    return this.libraryRecord(this.libraries.get(newId)!);
  }

  async resolveLibraryAlias(id: string): Promise<string | null> {
    this.requireOpen();
    return this.aliases.get(String(id)) ?? null;
  }

  // -------------------------------------------------------------------------------------------
  // Admin account, sessions, audit log
  // -------------------------------------------------------------------------------------------

  async getAdminAccount(): Promise<AdminAccountRecord | null> {
    this.requireOpen();
    return this.adminAccount ? { ...this.adminAccount } : null;
  }

  async setAdminAccount(account: AdminAccountRecord | null): Promise<void> {
    this.requireOpen();
    this.adminAccount = account ? { ...account } : null;
  }

  async createSession(session: SessionRecord): Promise<void> {
    this.requireOpen();
    const now = this.now();
    for (const [k, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(k);
    this.sessions.set(session.idHash, { ...session });
  }

  async getSession(idHash: string): Promise<SessionRecord | null> {
    this.requireOpen();
    const s = this.sessions.get(String(idHash));
    return s ? { ...s } : null;
  }

  async updateSession(idHash: string, patch: { username?: string; mustChangeCredentials?: boolean; lastSeenAt?: string }): Promise<void> {
    this.requireOpen();
    const s = this.sessions.get(idHash);
    if (!s) return;
    this.sessions.set(idHash, {
      ...s,
      ...(patch.username !== undefined ? { username: patch.username } : {}),
      ...(patch.mustChangeCredentials !== undefined ? { mustChangeCredentials: patch.mustChangeCredentials } : {}),
      ...(patch.lastSeenAt !== undefined ? { lastSeenAt: patch.lastSeenAt } : {}),
    });
  }

  async deleteSessions(which: { idHash: string } | { exceptIdHash: string | null }): Promise<number> {
    this.requireOpen();
    let n = 0;
    for (const k of [...this.sessions.keys()]) {
      const hit = 'idHash' in which ? k === which.idHash : k !== which.exceptIdHash;
      if (hit && this.sessions.delete(k)) n++;
    }
    return n;
  }

  async appendAudit(entry: AuditEntryInput): Promise<AuditEntry> {
    this.requireOpen();
    const saved: AuditEntry = { ...entry, details: { ...entry.details }, id: (this.audit.at(-1)?.id ?? 0) + 1 };
    this.audit.push(saved);
    if (this.audit.length > 20_000) this.audit.splice(0, this.audit.length - 20_000);
    return saved;
  }

  async listAudit(query: { limit: number; before?: number }): Promise<AuditEntry[]> {
    this.requireOpen();
    const before = query.before;
    return this.audit
      .filter((e) => before === undefined || e.id < before)
      .reverse()
      .slice(0, query.limit)
      .map((e) => ({ ...e, details: { ...e.details } }));
  }
}

function toJobRecord(r: JobRow): JobRecord {
  return {
    id: r.id,
    libraryId: r.libraryId,
    version: r.version,
    kind: r.kind,
    state: r.state,
    progress: parseJson<IngestProgress>(r.progress, {}),
    error: parseJson<JobRecord['error']>(r.error, null),
    createdAt: r.createdAt,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
  };
}

function publicKey(row: ApiKeyRecord & { hash: string }): ApiKeyRecord {
  return { id: row.id, name: row.name, plan: row.plan, role: row.role, prefix: row.prefix, createdAt: row.createdAt, revokedAt: row.revokedAt };
}
