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
import type { ApiKeyRole } from '../../core/contracts.ts';
import type { Access } from '../access.ts';
import { backupRoute } from '../backup.ts';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * Operator routes. Until API keys exist they answer only requests from this machine
 * (loopback), which is how the `refdesk` CLI talks to a running server.
 */
export function adminRoutes(kernel: Kernel, jobs: JobRunner, service: ApiService, access: Access, opts: { maxUploadBytes: number }): Router {
  const r = newRouter('/api/admin');
  r.use(async (ctx: Context, next: Next) => {
    if (!LOOPBACK.has(ctx.request.socket.remoteAddress ?? '')) {
      throw new RefdeskError('forbidden', 'Admin routes answer only local requests on this version.');
    }
    await next();
  });

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
    const body = objectBody(await readJsonBody(ctx));
    onlyFields(body, ['name', 'plan', 'role']);
    const role = optionalString(body, 'role', 20) as ApiKeyRole | undefined;
    const { key, record } = await service.createKey({ name: optionalString(body, 'name', 100), plan: optionalString(body, 'plan', 100), role });
    ctx.status = 201;
    ctx.body = { key, record };
  });

  r.get('/keys', async (ctx) => {
    ctx.body = { keys: await kernel.store.listApiKeys() };
  });

  r.delete('/keys/:id', async (ctx) => {
    const record = await kernel.store.revokeApiKey(ctx.params.id);
    if (!record) throw new RefdeskError('invalid_request', `Unknown key id "${ctx.params.id.slice(0, 40)}"; list the keys with refdesk keys list.`);
    ctx.body = { record };
  });

  /** Renames a library: {from, to}; the old ID then answers 301 with the new one. */
  r.post('/rename', async (ctx) => {
    const body = objectBody(await readJsonBody(ctx));
    onlyFields(body, ['from', 'to']);
    const library = await service.renameLibrary(requiredField(body, 'from'), requiredField(body, 'to'));
    ctx.body = { library: libraryJson(library), message: `Renamed to ${library.id}; the old ID answers 301 with redirectUrl ${library.id}.` };
  });

  /**
   * Deletes a library: DELETE /api/admin/libraries/<owner>/<name> (every version, build,
   * snippet, job and raw upload), or with a pinned ID (/<owner>/<name>/<version> or @<version>)
   * that version only. 404 when unknown, 409 `library_busy` while one of its jobs runs.
   */
  r.delete('/libraries/*id', async (ctx) => {
    const raw = String(ctx.params.id ?? '');
    ctx.body = await deleteLibrary(kernel, raw.startsWith('/') ? raw : `/${raw}`);
  });

  /** Settings the operator may change at run time. */
  r.get('/settings', async (ctx) => {
    ctx.body = { [MCP_REQUIRE_KEY]: await getMcpRequireKey(kernel.store) };
  });

  r.patch('/settings', async (ctx) => {
    const body = objectBody(await readJsonBody(ctx));
    onlyFields(body, [MCP_REQUIRE_KEY]);
    if (body[MCP_REQUIRE_KEY] !== undefined) await setMcpRequireKey(kernel.store, body[MCP_REQUIRE_KEY] as boolean);
    ctx.body = { [MCP_REQUIRE_KEY]: await getMcpRequireKey(kernel.store) };
  });

  /**
   * Any enabled source (the CLI's `refdesk add --source <kind>`): body {source, spec, id?, version?,
   * title?, description?}. The upload source is refused here (its paths are the server's disk;
   * POST /upload sends the files instead).
   */
  r.post('/add', async (ctx) => {
    const body = objectBody(await readJsonBody(ctx));
    onlyFields(body, ['source', 'spec', 'id', 'version', 'title', 'description']);
    const source = requiredField(body, 'source', 40);
    if (source === 'upload') throw new RefdeskError('invalid_request', 'Send files with POST /api/admin/upload (refdesk add <folder>), not a server path.');
    const spec = body.spec;
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new RefdeskError('invalid_request', 'The "spec" field must be an object of source parameters.');
    service.ensureSourceEnabled(source);
    const { library, job } = await addLibrary(kernel, {
      source,
      spec: spec as Record<string, unknown>,
      id: optionalString(body, 'id', 500),
      version: optionalString(body, 'version', 100),
      title: optionalString(body, 'title', 200),
      description: optionalString(body, 'description', 2000),
    });
    jobs.enqueue(job.id);
    ctx.status = 202;
    ctx.body = { libraryName: library.id, jobId: job.id, message: `Queued ingest of ${library.id} (job ${job.id}).` };
  });

  /** Body: a .tar.gz or .zip of the docs; query: name (and optional title). Queues an ingest. */
  r.post('/upload', async (ctx) => {
    const name = requiredString(ctx, 'name', 100);
    const title = typeof ctx.query.title === 'string' ? ctx.query.title.trim().slice(0, 200) : undefined;
    const description = typeof ctx.query.description === 'string' ? ctx.query.description.trim().slice(0, 2000) : undefined;
    const dir = join(kernel.env.dataDir, 'uploads');
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${randomUUID()}.upload`);
    try {
      await saveBody(ctx, file, opts.maxUploadBytes, 'The upload');
      const { library, job } = await addLibrary(kernel, { source: 'upload', name, title, description, spec: { path: file } });
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
