import type Router from '@koa/router';
import { newRouter } from './router.ts';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Kernel } from '../../core/kernel.ts';
import { RefdeskError } from '../../core/errors.ts';
import { addLibrary } from '../../core/ingest.ts';
import type { JobRunner } from '../job-runner.ts';
import { libraryJson } from '../api/library-json.ts';
import { requiredString } from '../params.ts';
import { deleteLibrary, type ApiService } from '../api/service.ts';
import { readJsonBody, saveBody } from '../body.ts';
import { objectBody, onlyFields, optionalString, requiredString as requiredField } from '../api/params.ts';
import { MCP_REQUIRE_KEY, getMcpRequireKey, setMcpRequireKey } from '../../core/settings.ts';
import type { Access, Caller } from '../access.ts';
import { actorOf, audit } from '../audit.ts';
import { createApiKeyAudited, listApiKeysWithUsage, revokeApiKeyAudited } from '../operator-actions.ts';
import { resetAdminAccount } from '../auth/reset.ts';
import { backupRoute } from '../backup.ts';
import { filesSourceKind } from '../source-capabilities.ts';

/**
 * Operator routes: an admin session (cookie, with its CSRF token on changes), an admin API key
 * (`Authorization: Bearer rdk_...`) or the local CLI token (DATA_DIR/cli-token), through
 * `access.requireAdmin`. Changes are recorded in the audit log (server/audit.ts).
 */
export function adminRoutes(kernel: Kernel, jobs: JobRunner, service: ApiService, access: Access, opts: { maxUploadBytes: number }): Router {
  const r = newRouter('/api/admin');
  r.use(async (ctx: Context, next: Next) => {
    ctx.state.admin = await access.requireAdmin(ctx, 'This operator route (/api/admin)');
    await next();
  });
  /** Records an admin action of this request. */
  const record_ = (ctx: Context, action: string, target: string | null, details?: Record<string, unknown>) => {
    const caller = ctx.state.admin as Caller;
    return audit(kernel, { actor: actorOf(caller), action, target, outcome: 'success', client: caller.client, details });
  };

  r.get('/libraries', async (ctx) => {
    const libs = await kernel.store.listLibraries();
    ctx.body = { libraries: libs.map((l) => ({ ...libraryJson(l), source: l.source.kind })) };
  });

  /** A consistent .tar.gz of DATA_DIR while the server runs (server/backup.ts; `refdesk backup`). */
  r.get('/backup', backupRoute(kernel));

  r.get('/jobs/:id', async (ctx) => {
    const job = await kernel.store.getJob(ctx.params.id);
    if (!job) throw new RefdeskError('invalid_request', `Unknown job "${ctx.params.id}".`);
    ctx.body = { job, log: await kernel.store.getJobLog(job.id) };
  });

  /** API keys: created (the key is in this answer only), listed, revoked. */
  r.post('/keys', async (ctx) => {
    const { key, record } = await createApiKeyAudited(kernel, service, ctx.state.admin as Caller, await readJsonBody(ctx));
    ctx.status = 201;
    ctx.body = { key, record };
  });

  /** Each key with its use of the current rate-limit window (`usage`: used, limit, remaining, resetAt). */
  r.get('/keys', async (ctx) => {
    ctx.body = { keys: await listApiKeysWithUsage(kernel, service) };
  });

  r.delete('/keys/:id', async (ctx) => {
    ctx.body = { record: await revokeApiKeyAudited(kernel, ctx.state.admin as Caller, ctx.params.id) };
  });

  /**
   * Credential recovery: the admin account back to the factory credentials, every session ended
   * (server/auth/reset.ts). Only the local CLI token (`refdesk account reset`): whoever can read
   * DATA_DIR.
   */
  r.post('/account/reset', async (ctx) => {
    const caller = ctx.state.admin as Caller;
    if (caller.kind !== 'key' || caller.key.id !== 'cli') {
      throw new RefdeskError('forbidden', 'Resetting the admin account is done on the server\'s machine: refdesk account reset (it uses DATA_DIR/cli-token).');
    }
    const { sessionsEnded } = await resetAdminAccount(kernel.store, kernel.env.dataDir);
    await record_(ctx, 'auth.reset', null, { sessionsEnded });
    ctx.body = { sessionsEnded, message: 'The admin account is back to the factory credentials (admin / refdesk); sign in from this machine or with the setup token in DATA_DIR/setup-token, then change them.' };
  });

  /** Renames a library: {from, to}; the old ID then answers 301 with the new one. */
  r.post('/rename', async (ctx) => {
    const body = objectBody(await readJsonBody(ctx));
    onlyFields(body, ['from', 'to']);
    const from = requiredField(body, 'from');
    const library = await service.renameLibrary(from, requiredField(body, 'to'));
    await record_(ctx, 'library.rename', library.id, { from });
    ctx.body = { library: libraryJson(library), message: `Renamed to ${library.id}; the old ID answers 301 with redirectUrl ${library.id}.` };
  });

  /**
   * Deletes a library: DELETE /api/admin/libraries/<owner>/<name> (every version, build,
   * snippet, job and raw upload), or with a pinned ID (/<owner>/<name>/<version> or @<version>)
   * that version only. 404 when unknown, 409 `library_busy` while one of its jobs runs.
   */
  r.delete('/libraries/*id', async (ctx) => {
    const raw = String(ctx.params.id ?? '');
    const id = raw.startsWith('/') ? raw : `/${raw}`;
    ctx.body = await deleteLibrary(kernel, id);
    await record_(ctx, 'library.delete', id);
  });

  /** Settings the operator may change at run time. */
  r.get('/settings', async (ctx) => {
    ctx.body = { [MCP_REQUIRE_KEY]: await getMcpRequireKey(kernel.store) };
  });

  r.patch('/settings', async (ctx) => {
    const body = objectBody(await readJsonBody(ctx));
    onlyFields(body, [MCP_REQUIRE_KEY]);
    if (body[MCP_REQUIRE_KEY] !== undefined) {
      await setMcpRequireKey(kernel.store, body[MCP_REQUIRE_KEY] as boolean);
      await record_(ctx, 'settings.change', MCP_REQUIRE_KEY, { value: body[MCP_REQUIRE_KEY] });
    }
    ctx.body = { [MCP_REQUIRE_KEY]: await getMcpRequireKey(kernel.store) };
  });

  /**
   * Any enabled source (the CLI's `refdesk add --source <kind>`): body {source, spec, id?, version?,
   * title?, description?}. The upload source is refused here (its paths are the server's disk;
   * POST /upload sends the files instead).
   */
  r.post('/add', async (ctx) => {
    access.requireLicence('Adding a library');
    const body = objectBody(await readJsonBody(ctx));
    onlyFields(body, ['source', 'spec', 'id', 'version', 'title', 'description']);
    const source = requiredField(body, 'source', 40);
    const spec = body.spec;
    if (kernel.sources.get(source)?.def.addPayload !== 'files' && (typeof spec !== 'object' || spec === null || Array.isArray(spec))) throw new RefdeskError('invalid_request', 'The "spec" field must be an object of source parameters.');
    const { library, job } = await service.addFromSpec({
      source,
      spec: spec as Record<string, unknown>,
      id: optionalString(body, 'id', 500),
      version: optionalString(body, 'version', 100),
      title: optionalString(body, 'title', 200),
      description: optionalString(body, 'description', 2000),
    });
    ctx.status = 202;
    ctx.body = { libraryName: library.id, jobId: job.id, message: `Queued ingest of ${library.id} (job ${job.id}).` };
  });

  /** Body: a .tar.gz or .zip of the docs; query: name (and optional title). Queues an ingest. */
  r.post('/upload', async (ctx) => {
    access.requireLicence('Adding a library');
    const name = requiredString(ctx, 'name', 100);
    const title = typeof ctx.query.title === 'string' ? ctx.query.title.trim().slice(0, 200) : undefined;
    const description = typeof ctx.query.description === 'string' ? ctx.query.description.trim().slice(0, 2000) : undefined;
    const dir = join(kernel.env.dataDir, 'uploads');
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${randomUUID()}.upload`);
    try {
      await saveBody(ctx, file, opts.maxUploadBytes, 'The upload');
      const { library, job } = await addLibrary(kernel, { source: filesSourceKind(kernel), name, title, description, spec: { path: file } });
      jobs.enqueue(job.id);
      ctx.status = 202;
      ctx.body = { libraryName: library.id, jobId: job.id, message: `Queued ingest of ${library.id} (job ${job.id}).` };
    } catch (e) {
      await rm(file, { force: true });
      throw e;
    }
  });
  return r;
}
