/**
 * The public API as plain functions: what every endpoint does, without HTTP. Routes (and the
 * MCP endpoint, in process) call these with plain values and a Principal; every failure is a
 * RefdeskError (an ApiError when it carries a redirect or rate-limit headers).
 *
 *   const service = createApiService(kernel, jobs);
 *   const principal = await service.authenticate(headers, clientAddress);   // 401 on a bad key
 *   service.checkRateLimit(principal);                                      // 429 when over
 *   await service.searchLibrariesFor(principal, { libraryName, query });    // {results, searchFilterApplied}
 *   await service.getContextFor(principal, { libraryId, query, type });     // {type:'txt', text} | {type:'json', body}
 *   await service.getContextBytesFor(principal, { libraryId, query, type }); // {type, bytes} as HTTP sends them
 */
import type { Kernel } from '../../core/kernel.ts';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { JobRecord, LibraryRecord } from '../../core/contracts.ts';
import { rawUploadOf } from '../../core/uploads.ts';
import { removeJobLog } from '../../core/job-log.ts';
import { RefdeskError, isRefdeskError } from '../../core/errors.ts';
import { addLibrary } from '../../core/ingest.ts';
import { formatLibraryId, parseLibraryId, slugifyLibraryName, validateLibraryName } from '../../core/library-id.ts';
import { describeUnknownLibrary, resolveLibraryId } from '../../core/library-resolve.ts';
import { getContext, toContextJson, toContextText, type ContextResult, type ContextSearcher } from '../../core/query.ts';
import { searchLibraries } from '../../core/library-search.ts';
import { RateLimiter, type RateLimitDecision } from '../access/rate-limit.ts';
import { applyPolicyPatch, bindSourceCategories, decide, getPolicy, isRestrictive, setPolicy, type Policy } from '../access/policy.ts';
import { getMcpRequireKey } from '../../core/settings.ts';
import { createApiKey, type CreateApiKeyInput, type CreatedApiKey } from '../access/api-keys.ts';
import type { JobRunner } from '../job-runner.ts';
import { rateLimitCountersOf } from '../access/rate-limit.ts';
import { ApiError } from './api-error.ts';
import { authenticate, requireAdmin, requireKey, type HeaderBag, type Principal } from './auth.ts';
import { libraryJson, type LibraryJson } from './library-json.ts';
import type { CatalogSnapshot } from './answer-etag.ts';
import { optionalBool, optionalEnum, optionalInt, optionalString, objectBody, onlyFields, requiredString, type Params } from './params.ts';
import { parseAddRequest, type AliasAddRoute } from './add-requests.ts';
import { libraryIdForSpec, withDerivedId } from './derive-id.ts';
import { validate } from '../../core/validate.ts';
import { builtinPlugin } from '../../core/config.ts';
import type { SourceEntry } from '../../core/kernel.ts';
import { capableSource, type Capable } from '../source-capabilities.ts';
import { KERNEL_VERSION } from '../../core/version.ts';

export type { Principal, HeaderBag } from './auth.ts';

export interface SearchResponse {
  results: LibraryJson[];
  searchFilterApplied: boolean;
}

export type ContextResponse = { type: 'txt'; text: string; libraryId: string } | { type: 'json'; body: ReturnType<typeof toContextJson>; libraryId: string };

/** A context answer's bytes as the HTTP API sends them (getContextBytesFor). */
export interface ContextBytes {
  type: 'json' | 'txt';
  bytes: Buffer;
  libraryId: string;
}

export interface PolicyResponse extends Policy {
  accessibleLibraryCount: number;
}

export interface AddResponse {
  libraryName: string;
  message: string;
  jobId: string;
}

/** The config line that enables a kind: the built-in plugin plugins/source-<kind> when the package has one. */
const pluginHint = (kind: string) =>
  builtinPlugin(`source-${kind}`) ? `"- use: source-${kind}"` : `the plugin that provides it ("- use: <its path or package name>"; a config with "extends: default" has every built-in source)`;

/** A source whose spec names files on the server (`addPayload: 'files'`) is added by uploading them, never by a spec. */
function refuseFilePayload(entry: SourceEntry): void {
  if (entry.def.addPayload === 'files') {
    throw new RefdeskError('invalid_request', `The "${entry.kind}" source reads uploaded files: send them with POST /api/libraries/upload or POST /api/admin/upload (refdesk add <folder>), not a server path.`);
  }
}

export class ApiService {
  readonly rateLimiter: RateLimiter;

  constructor(
    readonly kernel: Kernel,
    private readonly jobs: JobRunner,
    /** Where context searches run (server/search-pool.ts); default the store's search, in this thread. */
    private readonly searcher?: ContextSearcher,
  ) {
    this.rateLimiter = new RateLimiter(kernel.config.rateLimits, kernel.clock, { counters: rateLimitCountersOf(kernel.store), logger: kernel.logger });
  }

  // -------------------------------------------------------------------------------------------
  // Callers
  // -------------------------------------------------------------------------------------------

  /** The principal of a request (`client` is its address); 401 `invalid_api_key` for a bad key. */
  authenticate(headers: HeaderBag, client: string): Promise<Principal> {
    return authenticate(this.kernel.store, headers, client);
  }

  /**
   * Counts one request against the caller's limit and returns the RateLimit-* headers to send;
   * throws a 429 ApiError (with Retry-After) when the caller is over its limit.
   */
  checkRateLimit(principal: Principal): { decision: RateLimitDecision; headers: Record<string, string> } {
    const bucket = principal.kind === 'key' ? `key:${principal.key.id}` : `anon:${principal.client}`;
    const decision = this.rateLimiter.consume(bucket, this.rateLimiter.ruleFor(principal.kind === 'key' ? principal.key.plan : null));
    const headers = {
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(decision.resetAt),
    };
    if (!decision.allowed) {
      const who = principal.kind === 'key' ? `this key's plan "${principal.key.plan}"` : 'requests without an API key';
      throw new ApiError(
        'rate_limit_exceeded',
        `Rate limit exceeded: ${who} may make ${decision.limit} requests per ${this.kernel.config.rateLimits.windowSeconds} s. Retry after ${decision.retryAfter} s${principal.kind === 'key' ? '' : ', or use an API key for higher limits'}.`,
        { headers: { ...headers, 'Retry-After': String(decision.retryAfter) }, details: { retryAfterSeconds: decision.retryAfter } },
      );
    }
    return { decision, headers };
  }

  /**
   * What shapes every search and context answer besides the request, the libraries' builds and
   * the policy: the kernel version, the query settings and the reranker and embedder in use. It
   * is part of the answers' ETag (server/api/answer-etag.ts), so a change here makes clients
   * fetch fresh answers. The providers' fingerprint (endpoints and models of Settings, no keys)
   * is part of it, so a provider change invalidates cached answers.
   */
  async answerFingerprint(): Promise<string> {
    const { query, slots } = this.kernel.config;
    // Settings that cannot be read (a key sealed with another ENCRYPTION_KEY) leave the providers off, not the answers.
    const providers = await this.kernel.providers.fingerprint().catch(() => 'unreadable');
    return JSON.stringify([KERNEL_VERSION, query, slots, this.kernel.reranker ? 'reranker' : null, providers]);
  }

  /** Whether the MCP endpoint must refuse requests without a key (setting `mcp.requireKey`). */
  mcpRequireKey(): Promise<boolean> {
    return getMcpRequireKey(this.kernel.store);
  }

  // -------------------------------------------------------------------------------------------
  // Search and context
  // -------------------------------------------------------------------------------------------

  /**
   * GET /api/v2/libs/search: libraryName and query (1-500 characters), fast (true/false).
   * `catalog`: the libraries and policy this request already read (for its ETag), searched
   * instead of reading them again.
   */
  async searchLibrariesFor(_principal: Principal, params: Params, catalog?: CatalogSnapshot): Promise<SearchResponse> {
    const libraryName = requiredString(params, 'libraryName');
    const query = requiredString(params, 'query');
    const fast = optionalBool(params, 'fast');
    return this.backend('Library search', async (signal) => {
      const policy = catalog?.policy ?? (await getPolicy(this.kernel.store));
      const now = catalog?.now ?? this.kernel.clock.now();
      const scored = await searchLibraries(this.kernel, libraryName, query, { fast, signal, libraries: catalog?.libraries, filter: (lib) => decide(policy, lib, now).allowed });
      return { results: scored.map((s) => libraryJson(s.library)), searchFilterApplied: isRestrictive(policy) };
    });
  }

  /** GET /api/v2/context: libraryId, query, type (txt|json), tokens, fast. */
  async getContextFor(_principal: Principal, params: Params): Promise<ContextResponse> {
    const { type, result } = await this.contextResult(params, false);
    const id = formatLibraryId(result.library.id, result.version);
    return type === 'json' ? { type, body: toContextJson(result), libraryId: id } : { type, text: toContextText(result), libraryId: id };
  }

  /**
   * The context answer as the HTTP API sends it: the bytes of the text or of the JSON
   * (JSON.stringify of getContextFor's body, as Koa serializes an object), in UTF-8. A search
   * worker that assembled the answer sends these bytes itself; otherwise they are made here.
   */
  async getContextBytesFor(_principal: Principal, params: Params): Promise<ContextBytes> {
    const { type, result } = await this.contextResult(params, true);
    const id = formatLibraryId(result.library.id, result.version);
    const bytes = result.encoded ?? new TextEncoder().encode(type === 'json' ? JSON.stringify(toContextJson(result)) : toContextText(result));
    return { type, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), libraryId: id };
  }

  private async contextResult(params: Params, encode: boolean): Promise<{ type: 'json' | 'txt'; result: ContextResult }> {
    const libraryId = requiredString(params, 'libraryId');
    const query = requiredString(params, 'query');
    const type = optionalEnum(params, 'type', ['json', 'txt'] as const, 'txt');
    const tokens = optionalInt(params, 'tokens');
    const fast = optionalBool(params, 'fast');
    const parsed = await resolveLibraryId(this.kernel.store, libraryId);
    const library = await this.visibleLibrary(parsed.id, parsed.version);
    if (!library) {
      throw new RefdeskError('library_not_found', `Library ${describeUnknownLibrary(libraryId, parsed)} not found. Check the library ID (search with /api/v2/libs/search) or your access permissions.`);
    }
    const result = await this.backend('Documentation search', (signal) =>
      getContext(this.kernel, { libraryId: formatLibraryId(library.id, parsed.version), query, tokens }, { searcher: this.searcher, signal, fast, resolved: { id: parsed, library }, encode: encode ? type : undefined }),
    ).catch(
      async (e: unknown) => {
        const notServed = isRefdeskError(e) && (e.code === 'library_not_finalized' || e.code === 'version_not_found');
        throw library && notServed ? ((await this.unprocessable(library, parsed.version)) ?? e) : e;
      },
    );
    return { type, result };
  }

  /**
   * The library behind an ID as the policy lets this caller see it: 301 for a renamed library,
   * 403 when the policy hides it, null when unknown (the caller's query then answers 404).
   */
  private async visibleLibrary(id: string, version: string): Promise<LibraryRecord | null> {
    const library = await this.kernel.store.getLibrary(id);
    if (!library) {
      const target = await this.kernel.store.resolveLibraryAlias(id);
      if (target) {
        const to = formatLibraryId(target, version);
        throw new ApiError('library_redirected', `Library ${id} has been redirected to this library: ${target}. Use the library ID "${to}".`, { details: { redirectUrl: to } });
      }
      return null;
    }
    const decision = decide(await getPolicy(this.kernel.store), library, this.kernel.clock.now());
    if (!decision.allowed) {
      throw new RefdeskError('access_denied', `Access denied: library ${id} is not available on this server because ${decision.reason}. The server's operator can change the policy (PATCH /api/v2/policies).`);
    }
    return library;
  }

  /**
   * A 422 when the version serves nothing because its newest build failed (a terminal answer:
   * retrying the question will not help): `build_failed` with the job's error message, or the
   * job's own code when it was `no_documentation` or `too_large`. Null otherwise (still
   * processing, or never built: the caller's answer stands).
   */
  private async unprocessable(library: LibraryRecord, version: string): Promise<RefdeskError | null> {
    const newest = (await this.kernel.store.listJobs({ libraryId: library.id, limit: 50 })).find((j) => j.version === version);
    if (!newest || (newest.state !== 'failed' && newest.state !== 'interrupted')) return null;
    if ((await this.kernel.store.getVersion(library.id, version))?.activeBuildId) return null;
    const target = formatLibraryId(library.id, version);
    const reason = newest.error?.message ?? 'the build did not finish.';
    const retry =
      rawUploadOf(this.kernel, library.source) || this.kernel.sources.get(library.source.kind)?.def.addPayload === 'files'
        ? 'upload the documentation again (refdesk add <folder> --name <name>) to retry'
        : `add the same source again or refresh it (POST /api/v1/refresh {"libraryName": "${target}"}) to retry`;
    const code = newest.error?.code;
    if (code === 'no_documentation' || code === 'too_large') {
      return new RefdeskError(code, `Library ${target} has no documentation: ${reason} Fix the source, then ${retry}.`);
    }
    return new RefdeskError('build_failed', `The build of library ${target} failed (job ${newest.id}): ${reason} Fix the source if needed, then ${retry}.`);
  }

  /**
   * Runs a search against the store (and reranker) with the request time limit; backend failures
   * are 503. At the deadline `signal` aborts (with the 504 error as its reason), so work running
   * elsewhere (a search worker) is abandoned, and the caller gets the 504 at once.
   */
  private async backend<T>(what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ms = this.kernel.config.api.requestTimeoutMs;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new RefdeskError('processing_timeout', `${what} did not finish within ${ms} ms; try again, or ask a narrower question.`);
        reject(err);
        controller.abort(err);
      }, ms);
      timer.unref();
    });
    try {
      return await Promise.race([fn(controller.signal), timeout]);
    } catch (e) {
      if (isRefdeskError(e) && e.code !== 'internal_error' && e.code !== 'config_error') throw e;
      this.kernel.logger.error(`${what} failed`, { error: (e as Error).message });
      throw new RefdeskError('search_failed', `${what} is unavailable right now (the search backend failed); try again in a moment.`, { cause: e });
    } finally {
      clearTimeout(timer);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Policies
  // -------------------------------------------------------------------------------------------

  /** GET /api/v2/policies: any key. */
  async getPolicyFor(principal: Principal): Promise<PolicyResponse> {
    requireKey(principal, 'Reading the policy');
    return this.policyResponse(await getPolicy(this.kernel.store));
  }

  /** PATCH /api/v2/policies: admin keys only. */
  async patchPolicyFor(principal: Principal, body: unknown): Promise<PolicyResponse> {
    requireAdmin(principal, 'Changing the policy');
    return this.patchPolicy(body);
  }

  /** The policy change itself, for a caller the route already checked is an admin (key or session). */
  async patchPolicy(body: unknown): Promise<PolicyResponse> {
    const next = applyPolicyPatch(await getPolicy(this.kernel.store), body);
    await setPolicy(this.kernel.store, next);
    return this.policyResponse(next);
  }

  private async policyResponse(policy: Policy): Promise<PolicyResponse> {
    const now = this.kernel.clock.now();
    const libs = await this.kernel.store.listLibraries();
    return { ...policy, accessibleLibraryCount: libs.filter((l) => decide(policy, l, now).allowed).length };
  }

  // -------------------------------------------------------------------------------------------
  // Adding and refreshing libraries
  // -------------------------------------------------------------------------------------------

  /** A 400 `source_not_enabled` naming the kind and how to enable it, unless it is enabled. */
  ensureSourceEnabled(kind: string): void {
    if (this.kernel.sources.has(kind)) return;
    throw new RefdeskError(
      'source_not_enabled',
      `The "${kind}" source is not enabled on this server. To enable it, add ${pluginHint(kind)} to the plugins list of the server's config file (REFDESK_CONFIG, default config/default.yaml) and restart the server. Enabled sources: ${[...this.kernel.sources.keys()].join(', ') || 'none'}.`,
    );
  }

  /**
   * POST /api/v2/add/<route>, an alias route a source declares (server/api/add-requests.ts):
   * validates, creates the library (not finalized) and queues its ingest.
   */
  async addLibraryFor(principal: Principal, route: AliasAddRoute, body: unknown): Promise<AddResponse> {
    requireKey(principal, 'Adding a library');
    const req = parseAddRequest(route, body);
    this.ensureSourceEnabled(req.kind);
    const def = this.kernel.sources.get(req.kind)!.def;
    const id = parseLibraryId(libraryIdForSpec(def, req.spec), { wholePath: true }).id;
    const pending = await this.refuseExisting(id);
    if (pending) {
      return { libraryName: id, jobId: pending.id, message: `${id} has no documentation served yet and its ingest is already ${pending.state} (job ${pending.id}); until it is finalized the library answers 202.` };
    }
    return this.queueAdd({ source: req.kind, id, spec: req.spec, title: req.title, description: req.description }, `Queued ${id} from the ${req.kind} source`);
  }

  /**
   * POST /api/v2/add/source/{kind}: the body is the source's spec (its specSchema is the add
   * payload), plus `libraryTitle?` when the schema has no such field. 404 `not_found` listing the
   * kinds for an unknown kind; 400 naming the field for a bad spec. Resolves with the library, the
   * job (queued, or the one already queued or running for a library with nothing served yet).
   */
  async addSourceFor(principal: Principal, kind: string, body: unknown): Promise<{ library: LibraryRecord; job: JobRecord; queued: boolean }> {
    requireKey(principal, 'Adding a library');
    const entry = this.sourceEntry(kind);
    refuseFilePayload(entry);
    const spec = structuredClone(objectBody(body));
    const props = (entry.def.specSchema.properties ?? {}) as Record<string, unknown>;
    let title: string | undefined;
    if (!Object.hasOwn(props, 'libraryTitle')) {
      title = optionalString(spec, 'libraryTitle', 200)?.trim() || undefined;
      delete spec.libraryTitle;
    }
    const problems = validate(entry.def.specSchema, structuredClone(spec), 'spec');
    if (problems.length > 0) throw new RefdeskError('invalid_request', `Invalid ${kind} source parameters: ${problems.join('; ')}`);
    const id = parseLibraryId(libraryIdForSpec(entry.def, spec), { wholePath: true }).id;
    const pending = await this.refuseExisting(id);
    if (pending) return { library: (await this.kernel.store.getLibrary(id))!, job: pending, queued: false };
    const { library, job } = await addLibrary(this.kernel, { source: kind, id, spec, ...(title ? { title } : {}) });
    this.jobs.enqueue(job.id);
    return { library, job, queued: true };
  }

  /** The enabled source of a kind: 404 `not_found` listing the enabled kinds when there is none. */
  sourceEntry(kind: string): SourceEntry {
    const entry = this.kernel.sources.get(kind);
    if (entry) return entry;
    const kinds = [...this.kernel.sources.keys()];
    throw new ApiError('not_found', `No source of kind "${kind.slice(0, 60)}" on this server. Its sources: ${kinds.join(', ') || 'none'} (GET /api/sources lists them with their spec schemas).`, { details: { kinds } });
  }

  /**
   * POST /api/v2/add/openapi-upload, once the route has saved the file under
   * <dataDir>/uploads: the library is /openapi/<title or file name>.
   */
  async addOpenApiUploadFor(principal: Principal, input: { path: string; fileName: string; title?: string; force?: boolean }): Promise<AddResponse> {
    requireKey(principal, 'Adding a library');
    return this.addOpenApiUpload(input);
  }

  /**
   * The source specification-file uploads add to (SourceDefinition.specUpload, openapi's in the
   * default distribution): 400 source_not_enabled when no loaded source declares it.
   */
  async specUploadSource(): Promise<Capable<'specUpload'>> {
    const source = await capableSource(this.kernel, 'specUpload');
    if (!source) throw new RefdeskError('source_not_enabled', 'No source of this server takes specification files (a source declaring specUpload, e.g. "- use: source-openapi").');
    this.ensureSourceEnabled(source.kind);
    return source;
  }

  /** An uploaded specification file, once the caller may add libraries (a key, or an admin session in the web UI). */
  async addOpenApiUpload(input: { path: string; fileName: string; title?: string; force?: boolean }): Promise<AddResponse> {
    const { kind, def } = await this.specUploadSource();
    const { specField } = def.specUpload;
    await def.specUpload.check(input.path, input.fileName);
    const base = input.title?.trim() || input.fileName.replace(/\.(json|ya?ml)$/i, '');
    const name = slugifyLibraryName(base);
    if (!name) throw new RefdeskError('invalid_request', 'Give the upload a "libraryTitle" (or a file name) with letters or digits; it names the library.');
    validateLibraryName(name);
    const id = parseLibraryId(`/${def.idPrefix ?? kind}/${name}`).id;
    // A new file: queued even when a job is pending (that job then reads this file too).
    if (!input.force) await this.refuseExisting(id, ' Send force=true to replace its specification.');
    return this.queueAdd({ source: kind, id, spec: { [specField]: input.path }, title: input.title?.trim() || undefined }, `Queued ${id} from the uploaded specification`);
  }

  /**
   * A 409 when the library is already added and serves documentation (or was renamed). A library
   * with nothing served (its builds failed, or its first one is under way) may be added again:
   * resolves with its queued or running job when it has one (null when a new job is needed).
   */
  private async refuseExisting(id: string, hint = ''): Promise<JobRecord | null> {
    const existing = await this.kernel.store.getLibrary(id);
    if (existing && existing.state !== 'finalized') {
      return (await this.kernel.store.listJobs({ libraryId: id, limit: 50 })).find((j) => j.state === 'queued' || j.state === 'running') ?? null;
    }
    if (existing) {
      throw new RefdeskError('already_exists', `Library ${id} is already added (from a ${existing.source.kind} source). Refresh it with POST /api/v1/refresh {"libraryName": "${id}"}.${hint}`);
    }
    const target = await this.kernel.store.resolveLibraryAlias(id);
    if (target) throw new RefdeskError('already_exists', `Library ${id} was added before and renamed to ${target}; refresh ${target} instead.`);
    return null;
  }

  /**
   * Any enabled source but upload, from its spec (POST /api/admin/add, `refdesk add --source`, the
   * web UI's add forms): validated against the source's specSchema by addLibrary, then queued.
   */
  async addFromSpec(input: Parameters<typeof addLibrary>[1]): Promise<{ library: LibraryRecord; job: JobRecord }> {
    this.ensureSourceEnabled(input.source);
    refuseFilePayload(this.kernel.sources.get(input.source)!);
    const { library, job } = await addLibrary(this.kernel, withDerivedId(this.kernel, input));
    this.jobs.enqueue(job.id);
    return { library, job };
  }

  private async queueAdd(input: Parameters<typeof addLibrary>[1], what: string): Promise<AddResponse> {
    const { library, job } = await addLibrary(this.kernel, input);
    this.jobs.enqueue(job.id);
    return {
      libraryName: library.id,
      jobId: job.id,
      message: `${what} (job ${job.id}). Until its first build is finalized the library answers 202; retry then.`,
    };
  }

  /** The refresh of POST /api/libraries/{id}/refresh, once the route's permission check passed: the library as it is. */
  refreshLibrary(rawBody: unknown): Promise<{ message: string; libraryName: string; jobId: string }> {
    return this.refreshFor({ kind: 'anonymous' }, rawBody);
  }

  /**
   * POST /api/v1/refresh {libraryName, ...}: queues a new build from the library's source. The
   * fields beside `libraryName` are the ones the loaded sources declare (refreshFields, e.g. git's
   * `branch` and `gitToken`), each for its own source's libraries. The route decides who may (a
   * key, an admin session, or anyone when anonymous refresh is On); an anonymous caller may not
   * send those fields (the library is rebuilt as it is).
   */
  async refreshFor(caller: { kind: 'anonymous' | 'key' | 'session' }, rawBody: unknown): Promise<{ message: string; libraryName: string; jobId: string }> {
    const body = objectBody(rawBody);
    const declared = [...this.kernel.sources.values()].flatMap((e) => (e.def.refreshFields ?? []).map((f) => ({ ...f, kind: e.kind })));
    const names = [...new Set(declared.map((f) => f.field))];
    onlyFields(body, ['libraryName', ...names]);
    const sent = names.filter((n) => body[n] !== undefined);
    if (caller.kind === 'anonymous' && sent.length) {
      throw new RefdeskError('forbidden', `Changing a library's ${quotedList(names, 'or')} needs an API key or an admin; anonymous refresh rebuilds the library as it is (send only "libraryName").`);
    }
    const libraryName = requiredString(body, 'libraryName');
    const parsed = await resolveLibraryId(this.kernel.store, libraryName);
    const given = new Map<string, string>();
    for (const f of declared) {
      const v = given.has(f.field) ? undefined : optionalString(body, f.field, f.maxLength ?? 500);
      if (v !== undefined) given.set(f.field, v);
    }
    const library = await this.visibleLibrary(parsed.id, parsed.version);
    if (!library) {
      throw new RefdeskError('library_not_found', `Library ${describeUnknownLibrary(libraryName, parsed)} not found. Check the library ID (search with /api/v2/libs/search) or your access permissions.`);
    }
    const kind = library.source.kind;
    this.ensureSourceEnabled(kind);
    const own = declared.filter((f) => f.kind === kind);
    const foreign = sent.find((n) => !own.some((f) => f.field === n));
    if (foreign !== undefined) {
      const owner = declared.find((f) => f.field === foreign)!.kind;
      throw new RefdeskError('invalid_request', `${quotedList(declared.filter((f) => f.kind === owner).map((f) => f.field), 'and')} apply to ${owner} libraries only; ${library.id} comes from a ${kind} source.`);
    }
    const running = (await this.kernel.store.listJobs({ libraryId: library.id, limit: 20 })).find(
      (j) => j.version === parsed.version && (j.state === 'queued' || j.state === 'running'),
    );
    const id = formatLibraryId(library.id, parsed.version);
    if (!running && parsed.version && !library.versions.includes(parsed.version)) {
      const built = library.versions.map((v) => formatLibraryId(library.id, v));
      throw new RefdeskError(
        'version_not_found',
        `Version "${parsed.version}" of library ${library.id} was never built, so there is nothing to refresh. ${built.length ? `Its versions: ${built.join(', ')}` : 'It has no pinned versions'}; refresh one of them, or the library itself ("${library.id}").`,
      );
    }
    if (running) return { message: `A refresh of ${id} is already ${running.state} (job ${running.id}).`, libraryName: library.id, jobId: running.id };
    const raw = rawUploadOf(this.kernel, library.source);
    if (raw && !existsSync(raw)) {
      throw new RefdeskError(
        'upload_required',
        `Library ${library.id} was built from an uploaded file, which is not kept once its build has ended: re-upload to refresh (send the file again${this.kernel.sources.get(kind)!.def.addPayload === 'files' ? ' with refdesk add <folder> --name <name>' : ' to POST /api/v2/add/openapi-upload with force=true'}).`,
      );
    }
    const spec = { ...library.source.spec };
    for (const f of own) if (given.get(f.field)) spec[f.specField] = given.get(f.field);
    const { job } = await addLibrary(this.kernel, { source: kind, id, spec });
    this.jobs.enqueue(job.id);
    return { message: `Refresh of ${id} queued (job ${job.id}); the current documentation is served until the new build is finalized.`, libraryName: library.id, jobId: job.id };
  }

  // -------------------------------------------------------------------------------------------
  // Operator actions (loopback admin routes and the CLI)
  // -------------------------------------------------------------------------------------------

  /** Creates an API key on a configured plan; the key is in the result once and nowhere else. */
  createKey(input: CreateApiKeyInput): Promise<CreatedApiKey> {
    const { plans, defaultPlan } = this.kernel.config.rateLimits;
    return createApiKey(this.kernel.store, input, { names: Object.keys(plans), defaultPlan });
  }

  /** Renames a library; the old ID answers 301 with the new one. Refused while it is being built. */
  async renameLibrary(from: string, to: string): Promise<LibraryRecord> {
    return renameLibrary(this.kernel, from, to);
  }
}

/** Renames a library (shared by the admin route and the CLI's direct mode). */
export async function renameLibrary(kernel: Kernel, from: string, to: string): Promise<LibraryRecord> {
  const a = await resolveLibraryId(kernel.store, from);
  const b = parseLibraryId(to, { wholePath: true });
  if (a.version || b.version) throw new RefdeskError('invalid_request', 'Rename whole libraries: give IDs without a version.');
  const busy = (await kernel.store.listJobs({ libraryId: a.id, limit: 50 })).find((j) => j.state === 'queued' || j.state === 'running');
  if (busy) throw new RefdeskError('already_exists', `Library ${a.id} has an ingest job ${busy.state} (job ${busy.id}); rename it once the job has finished.`);
  return kernel.store.renameLibrary(a.id, b.id);
}

export interface DeleteLibraryResult {
  libraryId: string;
  /** The version deleted, or null when the whole library was. */
  version: string | null;
  message: string;
}

/**
 * Deletes a library (every version, build, snippet, job and its raw upload) or, for a pinned
 * library ID (`/owner/repo/v1` or `@v1`), that version only. 404 when unknown; 409
 * `library_busy` while one of its jobs runs (queued jobs are removed with it).
 * Shared by the admin route and the CLI's direct mode.
 */
export async function deleteLibrary(kernel: Kernel, libraryId: string): Promise<DeleteLibraryResult> {
  const { id, version } = await resolveLibraryId(kernel.store, libraryId);
  const library = await kernel.store.getLibrary(id);
  if (!library) throw new RefdeskError('library_not_found', `Library "${id}" not found; list the libraries with refdesk libraries.`);
  const raw = version ? null : rawUploadOf(kernel, library.source);
  const jobIds = (await kernel.store.listJobs({ libraryId: id, limit: 100_000 })).filter((j) => !version || j.version === version).map((j) => j.id);
  const deleted = await kernel.store.deleteLibrary(id, version || undefined);
  if (!deleted) {
    if (version) throw new RefdeskError('version_not_found', `Library ${id} has no version "${version}". Versions: ${library.versions.join(', ') || 'none pinned'}.`);
    throw new RefdeskError('library_not_found', `Library "${id}" not found; list the libraries with refdesk libraries.`);
  }
  if (raw) await rm(raw, { force: true }).catch((e: unknown) => kernel.logger.warn('could not remove a raw upload', { library: id, error: (e as Error).message }));
  for (const jobId of jobIds) await removeJobLog(kernel.env.dataDir, jobId).catch(() => {});
  kernel.logger.info('library deleted', { library: id, ...(version ? { version } : {}) });
  return version
    ? { libraryId: id, version, message: `Deleted version ${version} of ${id} (its builds, snippets and jobs).` }
    : { libraryId: id, version: null, message: `Deleted ${id} (every version, build, snippet and job).` };
}

export function createApiService(kernel: Kernel, jobs: JobRunner, searcher?: ContextSearcher): ApiService {
  // Policies read from this store place libraries by the categories the loaded sources declare.
  bindSourceCategories(kernel.store, kernel.sources);
  return new ApiService(kernel, jobs, searcher);
}

/** `"a"`, `"a" and "b"`, `"a", "b" or "c"`. */
function quotedList(names: readonly string[], last: 'and' | 'or'): string {
  const q = names.map((n) => `"${n}"`);
  return q.length > 1 ? `${q.slice(0, -1).join(', ')} ${last} ${q[q.length - 1]}` : (q[0] ?? '');
}
