/**
 * The kernel's contracts. Every plugin implements one of these; the kernel only ever talks to
 * plugins through them. Keep them small: each method says what it promises.
 */

// ---------------------------------------------------------------------------------------------
// Documents and snippets
// ---------------------------------------------------------------------------------------------

/** Content formats a chunker may accept. Sources label every document with one of them. */
export type DocumentFormat = 'markdown' | 'mdx' | 'text' | (string & {});

/** One document as a source read it: a page, a file, an operation group. */
export interface SourceDocument {
  /**
   * Where the document lives inside the library, relative and with forward slashes
   * (a repository path such as `docs/api/context.md`, or a URL path for websites).
   * Snippets keep it as their `sourcePath`; it must be stable across refreshes. No leading '/',
   * no '.', '..' or empty segments, no backslashes; unique within one read.
   */
  path: string;
  /** A public URL for the document when one is known (used as pageId / codeId). */
  url?: string;
  format: DocumentFormat;
  /** The full text, decoded to a string (UTF-8). */
  content: string;
  /**
   * Set when the lines of `content` are not the lines of the file as written (include directives
   * expanded, a format converted): entry i is the 1-based line of the original file that line
   * i + 1 of `content` comes from; lines an include brought in map to the directive's line. One
   * entry per line of `content`, never decreasing. Chunkers report snippet line ranges through
   * it (see core/includes/line-map.ts), so they always cite the original file.
   */
  lineMap?: number[];
  /** A title when the source knows one better than the content does. */
  title?: string;
  /**
   * A fingerprint of the document (a content hash, a git blob id, a page version). When it equals
   * the previous build's hash for the same path, the kernel reuses that document's snippets
   * instead of chunking it again. The kernel computes a content hash when this is absent.
   */
  hash?: string;
  /**
   * Small facts the source wants back on the next refresh (an ETag, a Last-Modified date, a
   * page version); stored with the document and handed back in `SourceContext.previous`.
   */
  meta?: Record<string, string>;
  /**
   * True when the source knows, without reading it again, that the document is the same as in
   * the previous build (e.g. an HTTP 304, an unchanged page version). `content` may then be ''
   * and the kernel reuses the previous snippets; the path must be in `SourceContext.previous`.
   */
  unchanged?: boolean;
}

/** What the previous (served) build held for one document path. */
export interface PreviousDocument {
  hash: string;
  meta: Record<string, string>;
}

/** One document of a build, as the store records it (for refreshes). */
export interface BuildDocument extends PreviousDocument {
  path: string;
  /** Fingerprint of the chunking that made the document's snippets (kernel version and options). */
  chunker: string;
}

/** A served build and the chunkers of its documents (BuildStore.servedBuildChunkers). */
export interface ServedBuildChunkers {
  libraryId: string;
  version: string;
  buildId: string;
  /** The distinct `chunker` fingerprints of the build's document records, sorted (empty: no records). */
  chunkers: string[];
}

export type SnippetType = 'code' | 'info';

/** What a chunker emits: one answerable unit with its provenance. */
export interface Snippet {
  type: SnippetType;
  /** code: the snippet title; info: the section heading text. */
  title: string;
  /**
   * code: the prose that explains the code; info: empty, except on a page's first info snippet,
   * where the markdown chunker puts the page's search words from its front matter (keywords,
   * tags, aliases; one per line), indexed for the whole page and never shown in an answer.
   */
  description: string;
  /** code: the fence language (lower case, '' when unknown); info: ''. */
  language: string;
  /** code: the code, exactly as in the fence; info: ''. */
  code: string;
  /** info: the section prose as markdown; code: ''. */
  content: string;
  /** Heading path from the page title down to this section. */
  breadcrumb: string[];
  pageTitle: string;
  sourcePath: string;
  sourceUrl?: string;
  /** Anchor (slug) of the section heading, for page#section links. */
  anchor?: string;
  /** 1-based inclusive line range in the source document. */
  lineStart: number;
  lineEnd: number;
  /** Approximate token count of what the snippet returns. */
  tokens: number;
}

/** A snippet once stored: its id is unique within the store. */
export interface StoredSnippet extends Snippet {
  id: number;
  /** Order of the snippet within its build (document order). */
  seq: number;
}

/**
 * What listing a build's sections needs of a snippet, without its text (Store.getSnippetHeads):
 * its id and order, its file, heading path and title, as getSnippets gives them.
 */
export type SnippetHead = Pick<StoredSnippet, 'id' | 'seq' | 'sourcePath' | 'breadcrumb' | 'title'>;

/** Where a served build's index segment lives (Store.segmentFile). */
export interface SegmentFileRef {
  buildId: string;
  /** Absolute path of the file. */
  path: string;
  /** The checksum the catalog recorded (null: not recorded, not checked). */
  checksum: string | null;
}

export interface SearchHit {
  snippet: StoredSnippet;
  score: number;
  /**
   * When the hit belongs to a parent section answered as one unit (a heading with all its
   * subsections): the key grouping that unit's hits and its heading path.
   */
  unit?: { key: string; breadcrumb: readonly string[] };
}

// ---------------------------------------------------------------------------------------------
// Services every plugin may depend on
// ---------------------------------------------------------------------------------------------

/** All network I/O goes through Fetch, so tests and operators can control it. */
export interface Fetch {
  /**
   * Same semantics as the WHATWG fetch; rejects on network errors and on timeout. After followed
   * redirects, `response.url` is the final URL and `response.redirected` is true. The kernel's
   * default (core/net/guarded-fetch.ts) checks every URL and redirect hop against the network
   * policy and caps response size and time.
   */
  fetch(url: string | URL, init?: RequestInit & { timeoutMs?: number }): Promise<Response>;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface Clock {
  now(): Date;
}

/** Process-level settings the kernel was started with (read from the environment by main.ts). */
export interface RuntimeEnv {
  /** Absolute path of the data directory. */
  dataDir: string;
  /** Who opens the store: the server, a CLI writer, or a read-only CLI reader. */
  mode: 'server' | 'writer' | 'reader';
  /** The HTTP port when mode is 'server'. */
  port?: number;
}

// ---------------------------------------------------------------------------------------------
// Source
// ---------------------------------------------------------------------------------------------

export interface IngestProgress {
  files?: number;
  /** Documents the source expects to give, when it knows (a file list, a sitemap): `files` of `total`. */
  total?: number;
  bytes?: number;
  snippets?: number;
  message?: string;
}

export interface SourceContext {
  /** The full library ID being built, e.g. `/docs/koa`. */
  libraryId: string;
  /** The pinned version being built, or '' for the default version. */
  version: string;
  /** The library's source parameters, already validated against the source's specSchema. */
  spec: Record<string, unknown>;
  /** Aborted when the job is cancelled or the process shuts down. */
  signal: AbortSignal;
  /**
   * A log line for the job's log (shown to operators; secrets of the spec are redacted). Say what
   * happened to documents (read, skipped and why, fetched, redirected, retried, converted with
   * warnings) and give the document's `path` when the line is about one.
   */
  log(level: LogLevel, message: string, fields?: { path?: string }): void;
  /** Progress for the job record. */
  progress(p: IngestProgress): void;
  /**
   * The documents of the build currently served for this library version, by path (empty on
   * the first ingest). A source uses it for conditional requests and to mark documents
   * `unchanged`; documents it no longer yields are dropped from the new build.
   */
  previous: ReadonlyMap<string, PreviousDocument>;
  /**
   * Optional: versions the upstream asks to have indexed as well (e.g. a repository config's
   * `previousVersions` tags). After the default version is finalized, the kernel queues a job for
   * each one that is not built or queued yet.
   */
  suggestVersions?(versions: string[]): void;
  /**
   * Optional: what the source learned about the library as a whole while reading (its own name
   * for itself, the branch read, stars...). May be called any number of times; each call merges
   * its defined fields over the earlier ones. When the build of the default version is finalized,
   * the kernel stores them on the library (a title or description the user gave wins over the
   * source's). A source that never calls it leaves the library's fields as they were. Call it as
   * `ctx.setLibraryMeta?.(...)`: contexts built by older kernels or test kits may lack it.
   */
  setLibraryMeta?(meta: LibraryMeta): void;
}

/**
 * Facts about a library a source reports during `read` (see `SourceContext.setLibraryMeta`).
 * Every field is optional; leave out what the source does not know rather than guessing.
 */
export interface LibraryMeta {
  /**
   * The project's own name for itself: a README's first H1, package.json `name`, PyPI
   * `info.name`, a site's og:site_name or `<title>`, OpenAPI `info.title`, an llms.txt H1, a
   * Confluence space name. Plain text (no markdown); the kernel trims it to 200 characters.
   */
  title?: string;
  /** One or two sentences on what it is (the kernel trims it to 2,000 characters). */
  description?: string;
  /** The branch that was read (git: the requested or the resolved default branch). */
  branch?: string;
  /** Stars (or likes) on the hosting platform, when its API answered. */
  stars?: number;
  /** The project's home page, when the source knows it. */
  homepage?: string;
  /**
   * True when the source can tell the documentation is the project's own, published by its
   * owner (a registry package's docs, a site's own llms.txt, a repository of an organization).
   * Counts in the trust score (core/trust-score.ts).
   */
  official?: boolean;
  /** ISO 8601 date of the upstream's last change (commit date, release date); counts in the trust score. */
  updatedAt?: string;
}

/**
 * A Source reads documents; it never chunks or stores. The rules (checked by
 * `runSourceContract` of `refdesk/testing`):
 * - Documents: `read` yields each path at most once; paths are relative with forward slashes (no
 *   leading '/', no '.', '..' or empty segments) and stable across refreshes; each has a format
 *   and string content (see SourceDocument).
 * - Ordering and idempotency: reads of the same spec yield the same paths in the same order; a
 *   read changes nothing upstream and may be repeated (a job that a crash interrupted runs again).
 * - Abort: it stops promptly when `ctx.signal` is aborted: it throws (the signal's reason) before
 *   yielding further documents; already aborted, it yields nothing. Pass the signal to fetches.
 * - Errors: it throws a RefdeskError (e.g. `no_documentation`, `too_large`, `invalid_source`,
 *   `unauthorized`) for failures a user must fix; any other error is reported as an internal job
 *   failure. Messages name URLs and statuses, never secrets or upstream bodies.
 */
export interface Source {
  read(ctx: SourceContext): AsyncIterable<SourceDocument>;
  /**
   * Optional: completes or checks a spec when a library is added, before any job is queued
   * (e.g. deciding which registry a `/packages/<name>` comes from). May contact the upstream;
   * throws a RefdeskError the caller can show. The returned spec is validated again and stored.
   */
  prepare?(spec: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>>;
}

// ---------------------------------------------------------------------------------------------
// Chunker
// ---------------------------------------------------------------------------------------------

/**
 * A Chunker turns one document into snippets. The rules (checked by `runChunkerContract` of
 * `refdesk/testing`):
 * - Pure and synchronous: the same document gives the same snippets, and is not changed.
 * - Ordering: snippets come in document order within each type (a section's code snippets may
 *   come before its prose).
 * - Provenance: each snippet's `sourcePath` is the document's path and its 1-based line range lies
 *   in the document, cited through `doc.lineMap` when there is one (the original file's lines).
 * - Errors: it never throws on odd content (empty, binary, unclosed fences, CRLF); it degrades to
 *   plain-text sections instead.
 */
export interface Chunker {
  /** The document formats this chunker accepts. */
  readonly formats: readonly DocumentFormat[];
  /**
   * Raised when the snippets the chunker makes of the same document change (part of the
   * chunking fingerprint: stored builds are re-chunked, core/rechunk.ts). Absent = 0.
   */
  readonly revision?: number;
  chunk(doc: SourceDocument): Snippet[];
}

// ---------------------------------------------------------------------------------------------
// Embedder and Reranker (optional slots)
// ---------------------------------------------------------------------------------------------

/**
 * An Embedder (what an embedder plugin's connector gives for the configured endpoint). The rules
 * (checked by `runEmbedderContract` of `refdesk/testing`): one finite vector of `dimensions`
 * numbers per text, in the texts' order, however the texts are batched; no texts, no vectors;
 * a provider failure rejects the whole call (never a partial answer). Idempotent: the same text
 * and model give the same vector (the kernel reuses vectors of unchanged snippets).
 */
export interface Embedder {
  readonly model: string;
  /** Positive; may be learned from the first answer when the model's is not known in advance. */
  readonly dimensions: number;
  /** One vector per text, in order. Throws on provider failure (the caller decides to retry). */
  embed(texts: string[], purpose: 'document' | 'query'): Promise<Float32Array[]>;
}

/** What a reranker is told of the search it reorders (for its cache and its deadline). */
export interface RerankContext {
  libraryId: string;
  /** '' for the default version. */
  version: string;
  /** Aborted when the caller stops waiting. */
  signal?: AbortSignal;
}

/**
 * A Reranker reorders a question's best hits. The rules (checked by `runRerankerContract` of
 * `refdesk/testing`): it returns at most `n` of the given hits, each once, and changes neither
 * the hits nor their array; an aborted `context.signal` makes it settle promptly; a failure
 * rejects (the question then keeps the lexical order: a reranker never fails a question).
 */
export interface Reranker {
  /** Returns at most n hits, best first; hits it cannot judge keep their relative order. */
  rerank(query: string, hits: SearchHit[], n: number, context?: RerankContext): Promise<SearchHit[]>;
  /**
   * Whether rerank would change anything now (e.g. an LLM is configured in Settings). When false
   * the query runs as without a reranker (the search assembles its answer where it ran).
   */
  active?(): Promise<boolean>;
  /**
   * Library search: the candidate libraries reordered for the user's question (at most the
   * given ones, best first; those it cannot judge keep their relative order).
   */
  rerankLibraries?(query: string, libraryName: string, candidates: LibraryRecord[], signal?: AbortSignal): Promise<LibraryRecord[]>;
}

// ---------------------------------------------------------------------------------------------
// Store
// ---------------------------------------------------------------------------------------------

/** Library states as the public API spells them. */
export type LibraryState = 'initial' | 'processing' | 'finalized' | 'error' | 'delete';

export interface LibrarySource {
  /** The source kind (a Source definition's kind), e.g. `upload`. */
  kind: string;
  /** Source parameters; values under keys marked secret are never returned to clients. */
  spec: Record<string, unknown>;
}

export interface LibraryInput {
  id: string;
  title: string;
  description?: string;
  branch?: string;
  source: LibrarySource;
  stars?: number;
  trustScore?: number;
  benchmarkScore?: number;
}

/** A library as the catalog shows it (the spec's fields plus where it comes from). */
export interface LibraryRecord {
  id: string;
  title: string;
  description: string;
  branch: string;
  /**
   * ISO 8601 with milliseconds and Z, of the default version's last finalized build (when the
   * library has only pinned versions: of the most recently updated one; the same for totals).
   */
  lastUpdateDate: string | null;
  state: LibraryState;
  totalTokens: number;
  totalSnippets: number;
  stars: number;
  trustScore: number;
  benchmarkScore: number;
  /**
   * Pinned versions that have been finalized, newest first (by version number when all look
   * like versions, else by last update; see core/version-order.ts). The default '' is not listed.
   */
  versions: string[];
  source: LibrarySource;
  createdAt: string;
}

export interface VersionRecord {
  libraryId: string;
  /** '' is the default version (the branch head); anything else is a pinned version. */
  version: string;
  state: LibraryState;
  /** The build being served, or null when none has been finalized. */
  activeBuildId: string | null;
  lastUpdateDate: string | null;
  totalTokens: number;
  totalSnippets: number;
}

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'interrupted';

export interface JobRecord {
  id: string;
  libraryId: string;
  version: string;
  /** The source kind that runs this job. */
  kind: string;
  state: JobState;
  progress: IngestProgress;
  error: { code: string; message: string } | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface JobLogLine {
  seq: number;
  at: string;
  level: LogLevel;
  message: string;
}

export interface BuildStats {
  totalSnippets: number;
  totalTokens: number;
}

/** Who an API key belongs to and what it may do; never holds the key itself (only its hash). */
export type ApiKeyRole = 'member' | 'admin';

export interface ApiKeyRecord {
  /** A short public identifier (`key_` + hex), used to list and revoke the key. */
  id: string;
  name: string;
  /** The rate-limit plan (a key of config `rateLimits.plans`). */
  plan: string;
  /** `admin` keys may change the server's policy; `member` keys may read it. */
  role: ApiKeyRole;
  /** The first characters of the key (e.g. `rdk_AbCd`), to recognise it in listings. */
  prefix: string;
  createdAt: string;
  /** When the key was revoked, or null while it is valid. */
  revokedAt: string | null;
}

export interface ApiKeyInput {
  id: string;
  name: string;
  plan: string;
  role: ApiKeyRole;
  prefix: string;
  /** SHA-256 (hex) of the whole key; the key itself is never stored. */
  hash: string;
}

/**
 * The Store keeps the catalog, versions, snippets, jobs and their logs, and the operator's data
 * (API keys, the admin account and its sessions, the audit log, settings). It is split by role,
 * so a store can be written (and tested: core/testing/store-contracts/) one role at a time and
 * a part of the system can depend on the one role it uses (core/di-tokens.ts `StoreTokens`):
 *
 * | role             | interface       | holds                                                 |
 * | ---------------- | --------------- | ----------------------------------------------------- |
 * | lifecycle        | StoreLifecycle  | open, close                                           |
 * | catalog          | CatalogStore    | libraries, their versions, renames (aliases)          |
 * | builds, snippets | BuildStore      | builds, snippets, documents, search, index segments  |
 * | jobs             | JobStore        | the job queue, claims, job logs                       |
 * | keys             | ApiKeyStore     | API key records (hashes only)                         |
 * | sessions         | SessionStore    | the admin account and its sessions                    |
 * | audit            | AuditStore      | the audit log                                         |
 * | settings         | SettingsStore   | settings (the access policy is one of them)           |
 *
 * The roles are not independent tables: a library's state and totals come from its builds and
 * jobs, and deleting or renaming a library takes its builds and jobs with it. One store
 * implements all of them over one database.
 *
 * Durability: every method that resolves has made its change durable, except the ones whose
 * TSDoc says they may be batched (`addSnippets`, `addDocuments`, `appendJobLog`, a session touch,
 * `appendAudit`), which become durable with the next durable call.
 */
export interface Store extends StoreLifecycle, CatalogStore, BuildStore, JobStore, ApiKeyStore, SessionStore, AuditStore, SettingsStore {}

/** The store's names for its roles (core/di-tokens.ts has a DI token per role). */
export type StoreRole = 'catalog' | 'builds' | 'jobs' | 'apiKeys' | 'sessions' | 'audit' | 'settings';

/**
 * Opening and closing the store. `open()` (for writing) discards builds left unfinished by a
 * crash and returns the jobs that were running to `queued` (with a line in their log), so the
 * server runs every unfinished job again; a rerun replaces the half-written build. `interrupted`
 * remains a valid job state for records written by older versions.
 */
export interface StoreLifecycle {
  open(): Promise<void>;
  /** Flushes and releases the store; further calls fail. */
  close(): Promise<void>;
}

/** One rate-limit bucket's request count in one fixed window (RateLimitCounters). */
export interface RateLimitCount {
  /** The limiter's bucket: `key:<api key id>` or `anon:<client address>`. */
  client: string;
  /** Start of the window, ms since the epoch (a multiple of the window length: the same on every node). */
  windowStart: number;
  count: number;
}

/**
 * Optional Store capability (issue 24): request counts shared by the nodes of one deployment,
 * so a rate limit holds across nodes. A store that several nodes share (PostgreSQL) offers it as
 * `rateLimitCounters`; a one-node store (embedded) does not, and server/access/rate-limit.ts
 * then counts in memory only. The limiter counts in memory and calls this in small batches,
 * never once per request.
 */
export interface RateLimitCounters {
  /**
   * Adds each count (0 is allowed: a read) to its bucket's shared total for that window, at
   * once for the whole batch, and returns the totals afterwards, one per distinct bucket and window.
   */
  addCounts(batch: readonly RateLimitCount[]): Promise<RateLimitCount[]>;
  /** Forgets the windows that started before `before` (ms since the epoch). */
  pruneCounts(before: number): Promise<void>;
}

/**
 * Optional Store capability (issue 24): raw uploads (core/uploads.ts: the archive or spec file a
 * node received for an upload or OpenAPI-upload library) kept where every node of the deployment
 * reads them, so whichever node claims the upload's job can run it. A store that several nodes
 * share (PostgreSQL) offers it as `uploads`; the embedded store does not (the file in
 * `<dataDir>/uploads` is all there is). A name is the file's name in the uploads folder of the
 * node that received it (a random UUID and an extension), the same on every node.
 */
export interface UploadStore {
  /** Stores the bytes of the local file `path` under `name` (replacing any), whole or not at all. */
  putUpload(name: string, path: string): Promise<void>;
  /**
   * Writes the upload to the local file `path` (complete and checked, or not at all). False when
   * the store has no upload of that name.
   */
  fetchUpload(name: string, path: string): Promise<boolean>;
  /** Forgets the upload (idempotent). */
  removeUpload(name: string): Promise<void>;
  /** The names of the uploads stored before `before` (for the start-up sweep of unneeded ones). */
  listUploads(before: Date): Promise<string[]>;
}

/** A store with shared raw uploads (see UploadStore). */
export interface UploadStoreHost {
  readonly uploads: UploadStore;
}

/**
 * Optional Store capability: library-search vectors (one per library: core/vectors.ts
 * writeLibraryVector, core/library-vectors.ts) kept in the store, so that every node of a shared
 * store ranks libraries by them (PostgreSQL: `library_vectors`, cached per node and kept current
 * by the change feed). Without it they are files in the data directory (the embedded store).
 */
export interface LibraryVectorStore {
  /** Replaces the library's vector (the library must exist; it goes when the library is deleted). */
  putLibraryVector(v: { libraryId: string; model: string; vector: Float32Array }): Promise<void>;
  /** The vectors of these libraries that exist (any model), in no particular order. */
  getLibraryVectors(libraryIds: readonly string[]): Promise<Array<{ libraryId: string; model: string; vector: Float32Array }>>;
  /** Changes whenever a library vector is written or removed (an answer's ETag holds it). */
  libraryVectorsTag(): Promise<string>;
}

/** A store with library-search vectors of its own (see LibraryVectorStore). */
export interface LibraryVectorStoreHost {
  readonly libraryVectors: LibraryVectorStore;
}

/** A store with shared rate-limit counters (see RateLimitCounters). */
export interface RateLimitCounterHost {
  readonly rateLimitCounters: RateLimitCounters;
}

/** The library catalog: libraries, their versions, and the aliases renames leave behind. */
export interface CatalogStore {
  /** Creates the library, or updates its descriptive fields if it exists (keeps builds). */
  upsertLibrary(input: LibraryInput): Promise<LibraryRecord>;
  getLibrary(id: string): Promise<LibraryRecord | null>;
  listLibraries(): Promise<LibraryRecord[]>;
  /**
   * Removes the library with its versions, builds, snippets, documents, jobs and job logs (and
   * aliases pointing at it); with `version` (a pinned version, or '' for the default one) only
   * that version's builds, snippets, documents and jobs. Queued jobs are removed with it (a
   * runner that then claims one gets null). Refuses with `library_busy` while a job of the
   * library (of that version, when given) is running. Returns false when the library (or the
   * version: no served build, no build and no job) is unknown.
   */
  deleteLibrary(id: string, version?: string): Promise<boolean>;
  /**
   * Moves a library (its versions, builds, snippets and jobs) to a new ID and records the old
   * ID as an alias of the new one; aliases that pointed at the old ID follow. Refuses an unknown
   * old ID (`library_not_found`) and a new ID already in use (`already_exists`).
   */
  renameLibrary(oldId: string, newId: string): Promise<LibraryRecord>;
  /** The library ID an old (renamed) ID now points to, or null when it is not an alias. */
  resolveLibraryAlias(id: string): Promise<string | null>;

  getVersion(libraryId: string, version: string): Promise<VersionRecord | null>;
  listVersions(libraryId: string): Promise<VersionRecord[]>;
}

/**
 * Builds and their snippets. A (library, version) is rebuilt by `beginBuild`, any number of
 * `addSnippets`, then `finalizeBuild`, which atomically makes the new build the served one and
 * drops the old one. Until then the previous build keeps being served. `failBuild` (or a crash)
 * discards the staged snippets and leaves the served build untouched.
 */
export interface BuildStore {
  /** Starts a new build; the library must exist. Returns the build id. */
  beginBuild(libraryId: string, version: string, jobId: string | null): Promise<string>;
  /** Stages snippets in document order (may be batched until the next durable call). */
  addSnippets(buildId: string, snippets: Snippet[]): Promise<void>;
  /** Records documents of a staged build (same path again replaces the record; may be batched). */
  addDocuments(buildId: string, documents: BuildDocument[]): Promise<void>;
  /**
   * The document records of the served build of a version, by path; an empty map when the
   * version has no served build (or the library is unknown).
   */
  getDocuments(libraryId: string, version: string): Promise<Map<string, BuildDocument>>;
  /**
   * Optional: every served build (each version's active build) with the distinct chunker
   * fingerprints of its document records, in one read. A starting server checks them to re-chunk
   * what another configuration made (core/rechunk.ts); a store without it is read version by
   * version (listVersions, getDocuments), which on a large catalog is most of a start's work.
   */
  servedBuildChunkers?(): Promise<ServedBuildChunkers[]>;
  /** Switches the version to this build; the previous build is removed. */
  finalizeBuild(buildId: string): Promise<VersionRecord>;
  /** Discards the staged build; the served build (if any) is untouched. */
  failBuild(buildId: string): Promise<void>;

  /** All snippets of the served build of a version, in document order. */
  getSnippets(libraryId: string, version: string): Promise<StoredSnippet[]>;
  /**
   * Optional: the heads (SnippetHead: id, seq, file, heading path, title) of every snippet of the served
   * build of a version, in document order: getSnippets' snippets cut to these fields, and the same
   * errors. For a caller that lists a build's sections (the self-retrieval check,
   * core/self-retrieval.ts): a store reads no more than it must and keeps no snippet text, and
   * reads a large build in pieces, giving the event loop a turn between them. A store without it
   * (one written for an earlier kernel 1.x) is read with getSnippets instead.
   */
  getSnippetHeads?(libraryId: string, version: string): Promise<SnippetHead[]>;
  /** Lexical search over the served build of a version, best first, at most `limit` hits. */
  search(libraryId: string, version: string, query: string, limit: number): Promise<SearchHit[]>;
  /**
   * Optional: the index segment file serving a version (path, build and checksum the catalog
   * recorded), so a search worker can open and search it off the main thread; null when the
   * served build has no file (it is then searched with `search`). Throws like `search` for an
   * unknown library or version. A worker that finds the file damaged falls back to `search`,
   * which repairs it.
   */
  segmentFile?(libraryId: string, version: string): Promise<SegmentFileRef | null>;
  /**
   * Optional: for a store that keeps a finalized build's stored documents (core/stored-docs.ts)
   * elsewhere than this node's data directory (PostgreSQL: rows any node reads), puts them at
   * their local path if they are not there yet. True when the file is then there; false when
   * the build stored none. Without it, the local file is all there is.
   */
  localStoredDocs?(buildId: string): Promise<boolean>;
  /**
   * Optional: the served builds whose index segment this code cannot read (written in another
   * segment format, by an older or newer Refdesk), for a store that cannot rebuild a segment from
   * a snippet pack of its own (PostgreSQL: the snippets live in the segment). core/rechunk.ts
   * re-chunks their versions from their stored documents when a server starts.
   */
  unreadableBuilds?(): Promise<Set<string>>;
  /**
   * Optional: the store's own index of build vectors (PostgreSQL with pgvector), or null when it
   * has none now. Without one (or null), core/vectors.ts keeps vectors in files beside the data
   * directory, as with the embedded store.
   */
  buildVectors?(): Promise<BuildVectorStore | null>;
}

/** What a build's vectors are: the model and dimension that made them, and the text hash of each row (row i: the snippet of seq i). */
export interface StoredVectorsMeta {
  model: string;
  dimensions: number;
  count: number;
  /** Changes whenever the vectors do (an answer's ETag holds it). */
  checksum: string;
  hashes: string[];
}

/** A store's index of build vectors (BuildStore.buildVectors); a build's vectors go with the build. */
export interface BuildVectorStore {
  /** Replaces a build's vectors (row i is the snippet of seq i); the build must exist. Returns their checksum. */
  write(buildId: string, input: { model: string; dimensions: number; hashes: string[]; vectors: Float32Array[] }): Promise<string>;
  /** The build's vectors' description, or null when it has none. */
  meta(buildId: string): Promise<StoredVectorsMeta | null>;
  /** Every row of the build, in order. */
  rows(buildId: string): Promise<Float32Array[]>;
  /** The k rows most similar (cosine) to `vector`, best first: their positions and cosine similarity. */
  query(buildId: string, vector: Float32Array, k: number): Promise<Array<{ position: number; score: number }>>;
  /** Removes a build's vectors (a failed embedding). */
  remove(buildId: string): Promise<void>;
}

/**
 * Optional: a job queue shared by several processes (nodes) on one database (the PostgreSQL
 * store; the embedded store has none: its one process runs its jobs). A node claims the oldest
 * queued job and holds it under a lease that it renews (heartbeat) while the job runs; a job
 * whose lease expires (its node died or stopped renewing) goes back to the queue, its unfinished
 * build discarded, and another node runs it. Once a node has lost a job's lease, the store
 * refuses its writes to that job (`library_busy`) and the finalize of its build, so a stale node
 * never overwrites the result of the node that took the job over. Lease times are the database's.
 */
export interface JobQueue {
  /** Claims the oldest queued job (queued -> running, leased to this node), or null when none is queued. */
  claimNextJob(): Promise<JobRecord | null>;
  /**
   * Renews this node's lease on a running job. `held: false` when the lease was lost (expired,
   * taken over, or the job ended or was deleted): stop the job without writing anything.
   * `cancelRequested`: a cancel was asked for on some node; stop the job as cancelled.
   */
  renewLease(id: string): Promise<{ held: boolean; cancelRequested: boolean }>;
  /** Gives a held job back to the queue (shutdown): queued again, lease cleared, for any node to run. */
  releaseJob(id: string): Promise<void>;
  /**
   * Cancels from any node: a queued job ends `failed` (`cancelled`) at once; a running one gets a
   * cancel request that its node sees at its next heartbeat. Returns the record after, or null for
   * an unknown job; an ended job is returned unchanged.
   */
  requestCancel(id: string): Promise<JobRecord | null>;
  /** Listens to job changes from every node (a job queued, ended, cancel requested); returns the function that stops. */
  watchJobs(listener: (jobId: string) => void): () => void;
  /** Queues again the running jobs whose lease expired (with a line in their log); returns how many. */
  sweepExpiredLeases(): Promise<number>;
  /** How long a lease lasts, how often a holder must renew it, and how often a runner looks for work (ms). */
  leaseTiming(): { leaseMs: number; heartbeatMs: number; pollMs: number };
}

/** The job queue: ingest jobs, their claims by runners, and their logs. */
export interface JobStore extends Partial<JobQueue> {
  createJob(input: { libraryId: string; version: string; kind: string }): Promise<JobRecord>;
  /**
   * Optional (a store several nodes share): queues the job unless a job of the same library and
   * version is queued or running, atomically across every node: of any number of such calls at
   * once, on any nodes, at most one queues a job, the others get null (as does a call while any
   * job of that version is queued or running). For work every starting node may find to do
   * (re-chunking, embeddings). Unknown library: `library_not_found`. Without it, a caller checks
   * `listJobs` itself and calls `createJob` (one process: nothing else queues meanwhile).
   */
  createJobOnce?(input: { libraryId: string; version: string; kind: string }): Promise<JobRecord | null>;
  updateJob(
    id: string,
    patch: { state?: JobState; progress?: IngestProgress; error?: JobRecord['error'] },
  ): Promise<JobRecord>;
  /**
   * Takes a queued job to run it: in one atomic step, moves it from `queued` to `running` (and
   * sets startedAt) only if it is still queued. Resolves with the running job, or null when the
   * job is unknown or not queued (another runner took it, it finished, or it was deleted); the
   * caller must then not run it. Durable when it resolves.
   */
  claimJob(id: string): Promise<JobRecord | null>;
  /** Appends a line to the job's log (may be batched until the next durable call). */
  appendJobLog(id: string, level: LogLevel, message: string): Promise<void>;
  getJob(id: string): Promise<JobRecord | null>;
  getJobLog(id: string): Promise<JobLogLine[]>;
  listJobs(filter?: { libraryId?: string; state?: JobState; limit?: number }): Promise<JobRecord[]>;
}

/** API key records (server/access/api-keys.ts makes and checks the keys themselves). */
export interface ApiKeyStore {
  /** Stores a new API key record; an id or hash already stored is refused (`already_exists`). */
  createApiKey(input: ApiKeyInput): Promise<ApiKeyRecord>;
  /** The key record whose hash this is (revoked ones included), or null. */
  findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** Every key record, oldest first. */
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked (idempotent); null when the id is unknown. */
  revokeApiKey(id: string): Promise<ApiKeyRecord | null>;
}

/** The admin account and its sessions (server/auth/). */
export interface SessionStore {
  /** The admin account, or null while it still has the factory credentials (never changed). */
  getAdminAccount(): Promise<AdminAccountRecord | null>;
  /** Replaces the admin account (there is one); null returns it to the factory credentials. Durable when it resolves. */
  setAdminAccount(account: AdminAccountRecord | null): Promise<void>;
  /** Stores a new session (and drops sessions past their absolute expiry). Durable. */
  createSession(session: SessionRecord): Promise<void>;
  /** The session whose id hash this is, or null. */
  getSession(idHash: string): Promise<SessionRecord | null>;
  /**
   * Changes a session's username, forced-change flag or last activity. With only `lastSeenAt`
   * (a touch on every request) the change may be batched until the next durable call.
   */
  updateSession(idHash: string, patch: { username?: string; mustChangeCredentials?: boolean; lastSeenAt?: string }): Promise<void>;
  /** Removes one session (`idHash`), or every session but `exceptIdHash` (null: all). Durable. Returns how many. */
  deleteSessions(which: { idHash: string } | { exceptIdHash: string | null }): Promise<number>;
}

/** The audit log (server/audit.ts). */
export interface AuditStore {
  /** Appends an audit entry (may be batched until the next durable call); returns it with its id. */
  appendAudit(entry: AuditEntryInput): Promise<AuditEntry>;
  /** Audit entries newest first: at most `limit`, with an id below `before` when given. */
  listAudit(query: { limit: number; before?: number }): Promise<AuditEntry[]>;
}

/** Persisted settings: JSON values by key (core/settings.ts gives them their meaning). */
export interface SettingsStore {
  /** A persisted setting (any JSON value), or undefined when it was never set. */
  getSetting(key: string): Promise<unknown>;
  /** Stores a JSON value under the key; `undefined` removes it. Durable when it resolves. */
  setSetting(key: string, value: unknown): Promise<void>;
}

/** The one admin account once its factory credentials were changed. */
export interface AdminAccountRecord {
  username: string;
  /** scrypt hash with its parameters and per-account salt (server/auth/passwords.ts); never the password. */
  passwordHash: string;
  updatedAt: string;
}

/** A signed-in admin session, stored server-side; the session id itself is never stored. */
export interface SessionRecord {
  /** SHA-256 (hex) of the session id sent in the cookie. */
  idHash: string;
  username: string;
  createdAt: string;
  /** Last request seen (idle expiry counts from here; updated at most once a minute). */
  lastSeenAt: string;
  /** Absolute expiry (ISO). */
  expiresAt: string;
  /** Signed in with the factory credentials: only changing them is allowed. */
  mustChangeCredentials: boolean;
  /** The address that signed in. */
  client: string;
}

export type AuditOutcome = 'success' | 'failure' | 'denied';

export interface AuditEntryInput {
  at: string;
  /** Who acted: `admin:<username>`, `key:<key id>`, `cli`, `anonymous`. */
  actor: string;
  /** What was done, dotted: `auth.login`, `keys.create`, `library.delete`, `settings.change`... */
  action: string;
  /** What it was done to (a library ID, a key id, a setting name), or null. */
  target: string | null;
  outcome: AuditOutcome;
  /** The client's address. */
  client: string;
  /** Small JSON facts about the action; never secrets. */
  details: Record<string, unknown>;
}

export interface AuditEntry extends AuditEntryInput {
  /** Increasing with time: `before` pages by it. */
  id: number;
}

/**
 * One record of a deployment as `refdesk migrate-store` moves it from one store to another
 * (StoreTransfer), in the order a target can write them: libraries, aliases, served versions
 * (their snippets, document records and snippet vectors), library-search vectors, the raw uploads
 * of jobs still queued or running, jobs with their logs, API keys (with their hashes),
 * the admin account, sessions, audit entries (oldest first), settings. Secrets inside library
 * specs and settings are sealed values; the mover re-seals them, the store writes what it gets.
 */
export type TransferRow =
  | { kind: 'library'; library: LibraryInput; createdAt: string }
  | { kind: 'alias'; alias: string; target: string; createdAt: string }
  | {
      kind: 'version';
      libraryId: string;
      version: string;
      lastUpdateDate: string | null;
      snippets: Snippet[];
      documents: BuildDocument[];
      /** The served build's stored documents file (core/stored-docs.ts, gzip bytes), or null when it has none. */
      storedDocs: Uint8Array | null;
      /** The served build's snippet vectors (row i: the snippet of seq i), or null when it has none. */
      vectors: TransferVectors | null;
    }
  | { kind: 'libraryVector'; libraryId: string; model: string; vector: Float32Array }
  | { kind: 'upload'; name: string; bytes: Uint8Array }
  | { kind: 'job'; job: JobRecord; log: JobLogLine[] }
  | { kind: 'apiKey'; key: ApiKeyRecord; hash: string }
  | { kind: 'adminAccount'; account: AdminAccountRecord }
  | { kind: 'session'; session: SessionRecord }
  | { kind: 'audit'; entry: AuditEntryInput }
  | { kind: 'setting'; key: string; value: unknown };

/** A build's snippet vectors as `refdesk migrate-store` moves them (core/vectors.ts readBuildVectors). */
export interface TransferVectors {
  model: string;
  dimensions: number;
  /** sha1 of each row's embedded text, in build order. */
  hashes: string[];
  vectors: Float32Array[];
}

/**
 * Optional Store capability: reading every record back (API key hashes, sessions, setting keys,
 * ids and times included, which the role methods cannot give) and writing records as they were.
 * Implemented by plugins/store-embedded/transfer.ts and plugins/store-postgres/transfer.ts.
 */
export interface StoreTransfer {
  /** Every record, in TransferRow's order. Runs on a store no one else writes meanwhile. */
  exportRows(): AsyncIterable<TransferRow>;
  /** Writes one record keeping its ids, hashes and times (a library before its versions and jobs). */
  importRow(row: TransferRow): Promise<void>;
  /** Removes every record (a target refused as not empty, replaced with --force). */
  clearAll(): Promise<void>;
}
