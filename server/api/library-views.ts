/**
 * The libraries as GET /api/libraries and GET /api/libraries/{libraryId} show them, and the
 * refresh of POST /api/libraries/{libraryId}/refresh, as functions of a request: the API routes
 * (server/routes/libraries.ts) and the web UI's pages (server/ui/pages/libraries.ts, library.ts)
 * call these, so the UI shows exactly what the API answers and adds no behaviour of its own.
 */
import type { Context } from 'koa';
import type { Kernel } from '../../core/kernel.ts';
import type { JobRecord, LibraryRecord, LibraryState } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { decide, getPolicy } from '../access/policy.ts';
import { redactSpec } from '../../core/secrets.ts';
import { rawUploadOf, uploadSpecField } from '../../core/uploads.ts';
import { formatLibraryId } from '../../core/library-id.ts';
import { describeUnknownLibrary, resolveLibraryId } from '../../core/library-resolve.ts';
import { libraryJson } from './library-json.ts';
import { ApiError } from './api-error.ts';
import type { ApiService } from './service.ts';
import type { Access } from '../access.ts';
import { jobJson, queuedJobAnswer } from '../job-access.ts';

/** The `/{libraryId}` of a `*id` wildcard route (API and UI), with its leading slash. */
export function libraryIdParam(ctx: Context): string {
  const raw = String(ctx.params.id ?? '');
  return raw.startsWith('/') ? raw : `/${raw}`;
}

/** The states a library (and its filter) can be in, as GET /api/libraries?state= takes them. */
export const LIBRARY_STATES: readonly LibraryState[] = ['initial', 'processing', 'finalized', 'error'];

/** GET /api/libraries filters: `q` (words in the ID, title or description) and `state`. */
export interface LibraryFilter {
  q?: string;
  state?: LibraryState;
}

/** The longest `q` the list takes. */
export const LIBRARY_FILTER_MAX = 200;

/** The spec a library was built with, fit to show: secrets "[set]", a raw upload's server path hidden. */
export function shownSpec(kernel: Kernel, lib: LibraryRecord): Record<string, unknown> {
  const schema = kernel.sources.get(lib.source.kind)?.def.specSchema;
  const spec = schema ? redactSpec(schema, lib.source.spec) : { ...lib.source.spec };
  const uploadField = uploadSpecField(kernel, lib.source.kind);
  if (uploadField && rawUploadOf(kernel, lib.source)) spec[uploadField] = '(uploaded file)';
  else if (kernel.sources.get(lib.source.kind)?.def.addPayload === 'files' && typeof spec.path === 'string') spec.path = '(server path)';
  if (!schema) for (const k of Object.keys(spec)) if (/token|secret|password|key/i.test(k)) spec[k] = '[set]';
  return spec;
}

function lastJobJson(job: JobRecord | undefined) {
  return job ? { id: job.id, version: job.version, state: job.state, error: job.error, createdAt: job.createdAt, finishedAt: job.finishedAt } : null;
}

/**
 * The list filters of a request's query (`q`, `state`); 400 `invalid_request` saying what to fix
 * for a repeated, too long or unknown value.
 */
export function libraryFilterOf(query: Record<string, string | string[] | undefined>): LibraryFilter {
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string') throw new RefdeskError('invalid_request', `Query parameter "${name}" must be given once.`);
    return v;
  };
  const q = one('q')?.trim();
  if (q && q.length > LIBRARY_FILTER_MAX) throw new RefdeskError('invalid_request', `Query parameter "q" must be at most ${LIBRARY_FILTER_MAX} characters.`);
  const state = one('state');
  if (state !== undefined && !LIBRARY_STATES.includes(state as LibraryState)) {
    throw new RefdeskError('invalid_request', `Query parameter "state" must be one of ${LIBRARY_STATES.join(', ')}.`);
  }
  return { ...(q ? { q } : {}), ...(state ? { state: state as LibraryState } : {}) };
}

/** Whether a library passes the filter: every word of `q` in its ID, title or description (any case). */
export function matchesFilter(lib: LibraryRecord, filter: LibraryFilter): boolean {
  if (filter.state && lib.state !== filter.state) return false;
  if (!filter.q) return true;
  const text = `${lib.id}\n${lib.title}\n${lib.description}`.toLowerCase();
  return filter.q.toLowerCase().split(/\s+/).filter(Boolean).every((w) => text.includes(w));
}

/** Libraries this caller may see: every one for admins, the access policy's for everyone else. */
async function visibleTo(kernel: Kernel, access: Access, ctx: Context, libs: LibraryRecord[]): Promise<LibraryRecord[]> {
  if (access.isAdmin(await access.caller(ctx))) return libs;
  const policy = await getPolicy(kernel.store);
  const now = kernel.clock.now();
  return libs.filter((l) => decide(policy, l, now).allowed);
}

/** GET /api/libraries: every library this caller may see (filtered), with its last job. */
export async function listLibrariesFor(kernel: Kernel, access: Access, ctx: Context, filter: LibraryFilter = {}) {
  const libs = (await visibleTo(kernel, access, ctx, await kernel.store.listLibraries())).filter((l) => matchesFilter(l, filter));
  const out = [];
  for (const lib of libs) {
    const [last] = await kernel.store.listJobs({ libraryId: lib.id, limit: 1 });
    out.push({ ...libraryJson(lib), source: { kind: lib.source.kind }, createdAt: lib.createdAt, lastJob: lastJobJson(last) });
  }
  return out;
}

export type LibraryListEntry = Awaited<ReturnType<typeof listLibrariesFor>>[number];

/**
 * GET /api/libraries/{libraryId}: one library with its versions, what it was built from (no
 * secrets) and its recent jobs. 400 for an invalid ID, 404 `library_not_found` (or
 * `version_not_found`), 301 `library_redirected` for a renamed one, 403 when the policy hides it.
 */
export async function libraryDetailFor(kernel: Kernel, access: Access, ctx: Context, input: string) {
  const { store } = kernel;
  const parsed = await resolveLibraryId(store, input);
  const lib = await store.getLibrary(parsed.id);
  if (!lib) {
    const target = await store.resolveLibraryAlias(parsed.id);
    if (target) {
      const to = formatLibraryId(target, parsed.version);
      throw new ApiError('library_redirected', `Library ${parsed.id} has been renamed to ${target}; use /api/libraries${to}.`, { details: { redirectUrl: to } });
    }
    throw new RefdeskError('library_not_found', `Library ${describeUnknownLibrary(input, parsed)} not found; list the libraries with GET /api/libraries.`);
  }
  if ((await visibleTo(kernel, access, ctx, [lib])).length === 0) {
    throw new RefdeskError('access_denied', `Access denied: library ${lib.id} is not available on this server under its access policy.`);
  }
  const versions = (await store.listVersions(lib.id)).filter((v) => !parsed.version || v.version === parsed.version);
  if (parsed.version && versions.length === 0) throw new RefdeskError('version_not_found', `Library ${lib.id} has no version "${parsed.version}". Versions: ${lib.versions.join(', ') || 'none pinned'}.`);
  const recent = await store.listJobs({ libraryId: lib.id, limit: 20 });
  const now = kernel.clock.now();
  return {
    ...libraryJson(lib),
    createdAt: lib.createdAt,
    source: { kind: lib.source.kind, spec: shownSpec(kernel, lib) },
    versionDetails: versions.map((v) => ({
      version: v.version,
      state: v.state,
      lastUpdateDate: v.lastUpdateDate,
      totalSnippets: v.totalSnippets,
      totalTokens: v.totalTokens,
    })),
    lastJob: lastJobJson(recent[0]),
    recentJobs: recent.filter((j) => !parsed.version || j.version === parsed.version).map((j) => jobJson(j, now)),
  };
}

export type LibraryDetail = Awaited<ReturnType<typeof libraryDetailFor>>;

/**
 * POST /api/libraries/{libraryId}/refresh: a new build from the library's source (permission
 * `refresh`, valid licence). The 202 answer: the job and the URLs to follow it.
 */
export async function refreshLibraryFor(kernel: Kernel, service: ApiService, access: Access, ctx: Context, id: string): Promise<Record<string, unknown>> {
  await access.requirePermission(ctx, 'refresh', 'Refreshing a library');
  access.requireLicence('Refreshing a library');
  const { message, libraryName, jobId } = await service.refreshLibrary({ libraryName: id });
  const job = await kernel.store.getJob(jobId);
  return queuedJobAnswer(kernel.store, libraryName, { id: jobId, state: job?.state ?? 'queued' }, message);
}
