/**
 * POST /api/parse {url}: index a git repository by its address. The address must be https (or
 * http for a host the operator lists in `parse.allowHttpHosts`) on GitHub, GitLab, Bitbucket or
 * any git host, optionally in a web-page form (`.../tree/<ref>/<folder>`, see core/git-url.ts);
 * `file:`, ssh and scp-style addresses are refused here. Only the address's form is checked:
 * reaching the repository is the job's concern, and its log says why when it cannot.
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
import { parseGitRepoUrl } from '../../core/git-url.ts';
import { readJsonBody } from '../body.ts';
import { objectBody, onlyFields, requiredString } from '../api/params.ts';
import { ApiError } from '../api/api-error.ts';
import type { ApiService } from '../api/service.ts';
import type { JobRunner } from '../job-runner.ts';
import type { Access } from '../access.ts';
import { jobUrls, queuedJobAnswer } from '../job-access.ts';

/** The source POST /api/parse adds to (the web UI's by-address form for signed-out visitors follows it). */
export const PARSE_SOURCE_KIND = 'git';

const FORMS = 'Give the https address of a git repository, e.g. https://github.com/owner/repo or https://gitlab.com/group/project/-/tree/main/docs.';

/** The repository address of a parse request, checked for form only. */
export function parseRepositoryAddress(raw: string, allowHttpHosts: readonly string[]): { url: string; id: string; provider: string } {
  const text = raw.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    const scp = /^([^\s/@]+@)?[^\s/:]+:/.test(text);
    throw new RefdeskError('invalid_request', scp ? `"url" is an scp-style ssh address (user@host:path), which this endpoint does not take. ${FORMS}` : `"url" is not an absolute URL. ${FORMS}`);
  }
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new RefdeskError('invalid_request', `"url" is not an absolute URL. ${FORMS}`);
  }
  if (u.protocol === 'http:') {
    const host = u.hostname.toLowerCase();
    const hostPort = u.host.toLowerCase();
    if (!allowHttpHosts.some((h) => h.toLowerCase() === host || h.toLowerCase() === hostPort)) {
      throw new RefdeskError('invalid_request', `"url" uses http://, which is allowed only for hosts the operator lists in the config's parse.allowHttpHosts (${host} is not one). Use https://.`);
    }
  } else if (u.protocol !== 'https:') {
    throw new RefdeskError('invalid_request', `"url" uses ${u.protocol.slice(0, 20)}//, which this endpoint does not take (file, ssh and git addresses are refused over HTTP). ${FORMS}`);
  }
  if (u.username || u.password) throw new RefdeskError('invalid_request', '"url" must not contain credentials; an operator adds private repositories with a token through the add routes or settings.');
  if (u.search || u.hash) throw new RefdeskError('invalid_request', `"url" must not have a query or fragment. ${FORMS}`);
  if (u.pathname.split('/').filter(Boolean).length < 2) throw new RefdeskError('invalid_request', `"url" must name a repository (https://host/owner/repo), not a host or an owner. ${FORMS}`);
  const ref = parseGitRepoUrl(text);
  return { url: text, id: ref.id, provider: ref.url.provider };
}

/**
 * Queues the build of the git repository at `rawUrl` (POST /api/parse and the web UI's add form
 * for signed-out visitors), once the caller's permission was checked: the 202 answer's body.
 */
export async function parseRepository(kernel: Kernel, service: ApiService, jobs: JobRunner, rawUrl: string): Promise<Record<string, unknown>> {
  const { store } = kernel;
  const address = parseRepositoryAddress(rawUrl, kernel.config.parse?.allowHttpHosts ?? []);
  service.ensureSourceEnabled(PARSE_SOURCE_KIND);

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

  const { library, job } = await addLibrary(kernel, { source: 'git', id: address.id, spec: { url: address.url, provider: address.provider } });
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
