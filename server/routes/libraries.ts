/**
 * Library lifecycle for the UI and automation:
 *
 *   GET    /api/libraries                      every library: state, versions, source, counts, last job
 *   GET    /api/libraries/{libraryId}          one library: its versions, recent jobs, its spec (no secrets)
 *   POST   /api/libraries/{libraryId}/refresh  a new build from its source (permission `refresh` + licence)
 *   DELETE /api/libraries/{libraryId}          every version, snippet, index file, job log and upload
 *                                              (a pinned ID: that version only; permission `delete`;
 *                                              never blocked by an expired licence)
 *
 * A library ID is its slash path (`/api/libraries/owner/repo`). Reading is public like search:
 * callers that are not admins see the libraries the access policy shows them (core/policy.ts),
 * admins see every library.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { JobRecord, LibraryRecord } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { decide } from '../../core/policy.ts';
import { getPolicy } from '../../core/settings.ts';
import { redactSpec } from '../../core/secrets.ts';
import { rawUploadOf } from '../../core/uploads.ts';
import { formatLibraryId } from '../../core/library-id.ts';
import { describeUnknownLibrary, resolveLibraryId } from '../../core/library-resolve.ts';
import { libraryJson } from '../api/library-json.ts';
import { ApiError } from '../api/api-error.ts';
import { deleteLibrary, type ApiService } from '../api/service.ts';
import type { Access } from '../access.ts';
import { jobJson, queuedJobAnswer } from '../job-access.ts';

/** The spec a library was built with, fit to show: secrets "[set]", a raw upload's server path hidden. */
export function shownSpec(kernel: Kernel, lib: LibraryRecord): Record<string, unknown> {
  const schema = kernel.sources.get(lib.source.kind)?.def.specSchema;
  const spec = schema ? redactSpec(schema, lib.source.spec) : { ...lib.source.spec };
  if (rawUploadOf(kernel.env.dataDir, lib.source)) spec.path = '(uploaded file)';
  else if (lib.source.kind === 'upload' && typeof spec.path === 'string') spec.path = '(server path)';
  if (!schema) for (const k of Object.keys(spec)) if (/token|secret|password|key/i.test(k)) spec[k] = '[set]';
  return spec;
}

function lastJobJson(job: JobRecord | undefined) {
  return job ? { id: job.id, version: job.version, state: job.state, error: job.error, createdAt: job.createdAt, finishedAt: job.finishedAt } : null;
}

/** The `/{libraryId}` part of a wildcard route, with its leading slash. */
function idParam(ctx: Context): string {
  const raw = String(ctx.params.id ?? '');
  return raw.startsWith('/') ? raw : `/${raw}`;
}

export function libraryRoutes(kernel: Kernel, service: ApiService, access: Access): Router {
  const r = newRouter();
  const { store } = kernel;

  /** Libraries this caller may see: every one for admins, the policy's for everyone else. */
  const visible = async (ctx: Context, libs: LibraryRecord[]): Promise<LibraryRecord[]> => {
    if (access.isAdmin(await access.caller(ctx))) return libs;
    const policy = await getPolicy(store);
    const now = kernel.clock.now();
    return libs.filter((l) => decide(policy, l, now).allowed);
  };

  r.get('/api/libraries', async (ctx) => {
    const libs = await visible(ctx, await store.listLibraries());
    const out = [];
    for (const lib of libs) {
      const [last] = await store.listJobs({ libraryId: lib.id, limit: 1 });
      out.push({ ...libraryJson(lib), source: { kind: lib.source.kind }, createdAt: lib.createdAt, lastJob: lastJobJson(last) });
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { libraries: out };
  });

  r.get('/api/libraries/*id', async (ctx) => {
    const input = idParam(ctx);
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
    if ((await visible(ctx, [lib])).length === 0) {
      throw new RefdeskError('access_denied', `Access denied: library ${lib.id} is not available on this server under its access policy.`);
    }
    const versions = (await store.listVersions(lib.id)).filter((v) => !parsed.version || v.version === parsed.version);
    if (parsed.version && versions.length === 0) throw new RefdeskError('version_not_found', `Library ${lib.id} has no version "${parsed.version}". Versions: ${lib.versions.join(', ') || 'none pinned'}.`);
    const recent = await store.listJobs({ libraryId: lib.id, limit: 20 });
    const now = kernel.clock.now();
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
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
  });

  r.post('/api/libraries/*id', async (ctx, next) => {
    const path = idParam(ctx);
    if (!path.endsWith('/refresh') || path === '/refresh') return next();
    const id = path.slice(0, -'/refresh'.length);
    await access.requirePermission(ctx, 'refresh', 'Refreshing a library');
    access.requireLicence('Refreshing a library');
    const { message, libraryName, jobId } = await service.refreshLibrary({ libraryName: id });
    const job = await store.getJob(jobId);
    ctx.status = 202;
    ctx.body = await queuedJobAnswer(store, libraryName, { id: jobId, state: job?.state ?? 'queued' }, message);
  });

  r.delete('/api/libraries/*id', async (ctx) => {
    await access.requirePermission(ctx, 'delete', 'Deleting a library');
    ctx.body = await deleteLibrary(kernel, idParam(ctx));
  });

  return r;
}
