/**
 * Rules every Store follows, written once so the embedded and in-memory stores answer alike:
 * job states, how a job's state shows in its library's state, input checks, snippet defaults,
 * not-found errors.
 */
import type { IngestProgress, JobRecord, JobState, LibraryInput, LibraryRecord, LibraryState, LogLevel, Snippet, SnippetHead, StoredSnippet } from './contracts.ts';
import { RefdeskError } from './errors.ts';
import { sortVersionsNewestFirst } from './version-order.ts';

export const JOB_STATES: readonly JobState[] = ['queued', 'running', 'succeeded', 'failed', 'interrupted'];
export const TERMINAL_JOB_STATES: readonly JobState[] = ['succeeded', 'failed', 'interrupted'];
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export function invalid(message: string): RefdeskError {
  return new RefdeskError('invalid_request', message);
}

/**
 * A snippet as a store keeps it: the fields a caller left out (a plugin written in plain
 * JavaScript may) defaulted, the optional sourceUrl and anchor kept only when given.
 */
export function snippetDefaults(s: Snippet): Snippet {
  return {
    type: s.type,
    title: s.title ?? '',
    description: s.description ?? '',
    language: s.language ?? '',
    code: s.code ?? '',
    content: s.content ?? '',
    breadcrumb: s.breadcrumb ?? [],
    pageTitle: s.pageTitle ?? '',
    sourcePath: s.sourcePath ?? '',
    ...(s.sourceUrl != null ? { sourceUrl: s.sourceUrl } : {}),
    ...(s.anchor != null ? { anchor: s.anchor } : {}),
    lineStart: s.lineStart ?? 0,
    lineEnd: s.lineEnd ?? 0,
    tokens: s.tokens ?? 0,
  };
}

/** The library state a library's newest job implies when no default build is served. */
/** A stored snippet's head (Store.getSnippetHeads): a new object holding no text of the snippet. */
export function snippetHead(s: StoredSnippet): SnippetHead {
  return { id: s.id, seq: s.seq, sourcePath: s.sourcePath, breadcrumb: s.breadcrumb, title: s.title };
}

export function jobStateToLibraryState(state: string | null | undefined): LibraryState | null {
  if (state === 'queued' || state === 'running') return 'processing';
  if (state === 'failed' || state === 'interrupted') return 'error';
  return null;
}

/**
 * A library's state and the version whose date and totals it shows: the default version when
 * it is served, else the most recently updated served pinned version, else none (the state then
 * follows the library's newest job).
 */
export function libraryServing<R>(
  def: R | undefined,
  pinned: ReadonlyArray<{ row: R; lastUpdateDate: string | null }>,
  newestJobState: string | null | undefined,
): { state: LibraryState; shown: R | undefined } {
  if (def) return { state: 'finalized', shown: def };
  if (pinned.length > 0) {
    return { state: 'finalized', shown: pinned.reduce((a, b) => ((b.lastUpdateDate ?? '') > (a.lastUpdateDate ?? '') ? b : a)).row };
  }
  return { state: jobStateToLibraryState(newestJobState) ?? 'initial', shown: undefined };
}

export function validateLibraryInput(input: LibraryInput): void {
  if (!input || typeof input !== 'object') throw invalid('A library needs an id, a title and a source.');
  if (typeof input.id !== 'string' || input.id === '') throw invalid('A library needs a non-empty id.');
  if (typeof input.title !== 'string') throw invalid(`Library "${input.id}": title must be a string.`);
  if (!input.source || typeof input.source.kind !== 'string' || input.source.kind === '') {
    throw invalid(`Library "${input.id}": source.kind must be a non-empty string.`);
  }
  if (input.source.spec !== undefined && (typeof input.source.spec !== 'object' || input.source.spec === null)) {
    throw invalid(`Library "${input.id}": source.spec must be an object.`);
  }
  for (const k of ['description', 'branch'] as const) {
    if (input[k] !== undefined && typeof input[k] !== 'string') throw invalid(`Library "${input.id}": ${k} must be a string.`);
  }
  for (const k of ['stars', 'trustScore', 'benchmarkScore'] as const) {
    if (input[k] !== undefined && !Number.isFinite(input[k])) throw invalid(`Library "${input.id}": ${k} must be a number.`);
  }
}

export function libraryNotFound(id: string): RefdeskError {
  return new RefdeskError('library_not_found', `Library "${id}" not found. Check the library ID, or add the library first.`);
}

/**
 * Why a known library serves nothing for `version` ('' = default), given that version's state
 * and the library's finalized pinned versions.
 */
export function notServedError(libraryId: string, version: string, state: LibraryState, pinned: string[]): RefdeskError {
  const available = pinned.length > 0 ? `Available versions: ${pinned.join(', ')}.` : 'It has no pinned versions.';
  if (version !== '') {
    const why = state === 'processing' ? ' yet: it is still being processed' : state === 'error' ? ': its last build failed' : '';
    return new RefdeskError(
      'version_not_found',
      `Version "${version}" of library "${libraryId}" is not available${why}. ${available} Omit the version to use the default.`,
    );
  }
  if (state === 'processing') {
    return new RefdeskError('library_not_finalized', `Library "${libraryId}" is still being processed; try again in a moment.`);
  }
  if (pinned.length > 0) {
    return new RefdeskError('version_not_found', `Library "${libraryId}" has no default version built. ${available}`);
  }
  if (state === 'error') {
    return new RefdeskError(
      'library_not_finalized',
      `Library "${libraryId}" has no documentation yet: its last build failed. See the job log, fix the source and refresh the library.`,
    );
  }
  return new RefdeskError('library_not_finalized', `Library "${libraryId}" has not been built yet; refresh it to build its documentation.`);
}

export type JobPatch = { state?: JobState; progress?: IngestProgress; error?: JobRecord['error'] };

/**
 * The job record after `patch` at time `now`: startedAt is set when the job first runs,
 * finishedAt when it reaches a terminal state (cleared if it runs again), progress is merged.
 */
export function applyJobPatch(job: JobRecord, patch: JobPatch, now: string): JobRecord {
  if (patch.state !== undefined && !JOB_STATES.includes(patch.state)) {
    throw invalid(`Unknown job state "${String(patch.state)}"; expected one of ${JOB_STATES.join(', ')}.`);
  }
  const state = patch.state ?? job.state;
  let { startedAt, finishedAt } = job;
  if (patch.state !== undefined) {
    if (state === 'running' && !startedAt) startedAt = now;
    if (state === 'queued' || state === 'running') finishedAt = null;
    else if (TERMINAL_JOB_STATES.includes(state) && (job.state !== state || !finishedAt)) finishedAt = now;
  }
  const progress = patch.progress ? { ...job.progress, ...patch.progress } : job.progress;
  const error = patch.error !== undefined ? patch.error : job.error;
  return { ...job, state, progress, error, startedAt, finishedAt };
}

/** A change refused because a job of the library (of that version) is running. */
export function libraryBusy(id: string, version: string | undefined, jobId: string): RefdeskError {
  const what = version === undefined ? `Library ${id}` : version === '' ? `The default version of ${id}` : `Version "${version}" of ${id}`;
  return new RefdeskError('library_busy', `${what} has an ingest job running (job ${jobId}); try again once it has finished.`);
}

/** A served version as a library record needs it (a `versions` row with a served build). */
export interface ServedVersion {
  version: string;
  lastUpdateDate: string | null;
  totalTokens: number;
  totalSnippets: number;
}

/** What a library record takes from the library's own row. */
export type LibraryFields = Pick<LibraryRecord, 'id' | 'title' | 'description' | 'branch' | 'stars' | 'trustScore' | 'benchmarkScore' | 'source' | 'createdAt'>;

/**
 * A library record from its row, its served versions (in any order) and its newest job's state:
 * state, date and totals from `libraryServing`, pinned versions newest first (ties in version
 * order, so every store lists them alike).
 */
export function libraryRecordOf(lib: LibraryFields, served: readonly ServedVersion[], newestJobState: string | null | undefined): LibraryRecord {
  const def = served.find((v) => v.version === '');
  const pinned = sortVersionsNewestFirst(
    served
      .filter((v) => v.version !== '')
      .sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : 0))
      .map((v) => ({ row: v, version: v.version, lastUpdateDate: v.lastUpdateDate })),
  );
  const { state, shown } = libraryServing(def, pinned, newestJobState);
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
    source: lib.source,
    createdAt: lib.createdAt,
  };
}

/** Freezes a library record a store's memory shares with every caller (nobody can change the cache through it). */
export function freezeLibraryRecord(r: LibraryRecord): LibraryRecord {
  Object.freeze(r.versions);
  Object.freeze(r.source.spec);
  Object.freeze(r.source);
  return Object.freeze(r);
}
