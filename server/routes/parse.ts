/**
 * POST /api/parse {url}: index a library by its address alone, through the first loaded source
 * that declares `parseAddress` (SourceDefinition.parseAddress; git's in the default distribution:
 * an https git repository address, plugins/source-git/parse-address.ts). Only the address's form
 * is checked: reaching it is the job's concern, and its log says why when it cannot.
 *
 * 202 {libraryName, libraryId, jobId, state, statusUrl, message}; 409 `already_exists` with the
 * existing `libraryId` (and its running `jobId`, if any); 400 for anything that is not such an
 * address. Permission: admins, or anyone while the anonymous `parse` permission is On; the
 * licence must be valid.
 */
import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import { RefdeskError } from '../../core/errors.ts';
import { addLibrary } from '../../core/ingest.ts';
import { capableSource } from '../source-capabilities.ts';
import { readJsonBody } from '../body.ts';
import { objectBody, onlyFields, requiredString } from '../api/params.ts';
import { ApiError } from '../api/api-error.ts';
import type { ApiService } from '../api/service.ts';
import type { JobRunner } from '../job-runner.ts';
import type { Access } from '../access.ts';
import { jobUrls, queuedJobAnswer } from '../job-access.ts';

/**
 * Queues the build of the library at address `rawUrl` (POST /api/parse and the web UI's add form
 * for signed-out visitors), once the caller's permission was checked: the 202 answer's body.
 */
export async function parseRepository(kernel: Kernel, service: ApiService, jobs: JobRunner, rawUrl: string): Promise<Record<string, unknown>> {
  const { store } = kernel;
  const source = await capableSource(kernel, 'parseAddress');
  if (!source) throw new RefdeskError('source_not_enabled', 'No source of this server adds a library by its address (a source declaring parseAddress, e.g. "- use: source-git").');
  const address = source.def.parseAddress.parse(rawUrl, { allowHttpHosts: kernel.config.parse?.allowHttpHosts ?? [] });
  service.ensureSourceEnabled(source.kind);

  const existing = await store.getLibrary(address.id);
  if (existing) {
    const pending = (await store.listJobs({ libraryId: existing.id, limit: 50 })).find((j) => j.state === 'queued' || j.state === 'running');
    // A library whose builds all failed may be parsed again (a retry); anything else is there already.
    if (existing.state === 'finalized' || pending) {
      throw new ApiError(
        'already_exists',
        pending
          ? `Library ${existing.id} is already being built (job ${pending.id}, ${pending.state}); follow it at its statusUrl.`
          : `Library ${existing.id} is already there; refresh it with POST /api/libraries${existing.id}/refresh.`,
        { details: { libraryId: existing.id, ...(pending ? { jobId: pending.id, ...(await jobUrls(store, pending.id)) } : {}) } },
      );
    }
  } else {
    const target = await store.resolveLibraryAlias(address.id);
    if (target) throw new ApiError('already_exists', `Library ${address.id} was parsed before and renamed to ${target}.`, { details: { libraryId: target } });
  }

  const { library, job } = await addLibrary(kernel, { source: source.kind, id: address.id, spec: address.spec });
  jobs.enqueue(job.id);
  return queuedJobAnswer(store, library.id, job, `Queued ${library.id} from ${address.url.slice(0, 300)} (job ${job.id}); follow it at the statusUrl, or live at the eventsUrl.`);
}

export function parseRoutes(kernel: Kernel, service: ApiService, jobs: JobRunner, access: Access): Router {
  const r = newRouter();

  r.post('/api/parse', async (ctx) => {
    await access.requirePermission(ctx, 'parse', 'Parsing a repository');
    access.requireLicence('Parsing a repository');
    const body = objectBody(await readJsonBody(ctx));
    onlyFields(body, ['url']);
    const url = requiredString(body, 'url', 2000);
    const answer = await parseRepository(kernel, service, jobs, url);
    ctx.status = 202;
    ctx.body = answer;
  });

  return r;
}
