import type Router from '@koa/router';
import { newRouter } from './router.ts';
import busboy from 'busboy';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Context } from 'koa';
import { RefdeskError } from '../../core/errors.ts';
import type { ApiService } from '../api/service.ts';
import { aliasAddRoutes, type AliasAddRoute } from '../api/add-requests.ts';
import { requireKey } from '../api/auth.ts';
import { principalOf } from '../public-api.ts';
import { pumpMultipart, readJsonBody, streamToFile } from '../body.ts';
import type { Access } from '../access.ts';
import { queuedJobAnswer } from '../job-access.ts';
import { defaultSources } from '../source-capabilities.ts';

/**
 * POST /api/v2/add/source/{kind} (any source: the body is its spec), the alias routes the loaded
 * sources declare (Context7's /api/v2/add/repo/github, /website, ... from the built-in plugins),
 * and /api/v2/add/openapi-upload. An alias path no loaded source declares but a source of the
 * default distribution does answers 400 `source_not_enabled` (how to enable it), not 404.
 */
export function addRoutes(service: ApiService, opts: { dataDir: string; maxUploadBytes: number; access: Access }): Router {
  const r = newRouter();
  const aliases = aliasAddRoutes(service.kernel.sources.values());
  const addThrough = async (ctx: Context, alias: AliasAddRoute) => {
    const principal = principalOf(ctx);
    requireKey(principal, 'Adding a library');
    opts.access.requireLicence('Adding a library');
    ctx.body = await service.addLibraryFor(principal, alias, await readJsonBody(ctx));
  };
  r.post('/api/v2/add/source/:kind', async (ctx) => {
    const principal = principalOf(ctx);
    requireKey(principal, 'Adding a library');
    opts.access.requireLicence('Adding a library');
    const { library, job, queued } = await service.addSourceFor(principal, ctx.params.kind, await readJsonBody(ctx));
    const message = queued
      ? `Queued ${library.id} from the ${ctx.params.kind} source (job ${job.id}). Until its first build is finalized the library answers 202; retry then.`
      : `${library.id} has no documentation served yet and its ingest is already ${job.state} (job ${job.id}); until it is finalized the library answers 202.`;
    ctx.status = 202;
    ctx.body = await queuedJobAnswer(service.kernel.store, library.id, job, message);
  });
  for (const [path, alias] of aliases) r.post(`/api/v2/add/${path}`, (ctx) => addThrough(ctx, alias));
  r.post('/api/v2/add/openapi-upload', async (ctx) => {
    const principal = principalOf(ctx);
    requireKey(principal, 'Adding a library');
    opts.access.requireLicence('Adding a library');
    await service.specUploadSource(); // 400 source_not_enabled before the file is received
    ctx.body = await addUploadedSpec(ctx, opts, (upload) => service.addOpenApiUploadFor(principal, upload));
  });
  // A path none of these routes serves, which only a source of the default distribution declares
  // (not a route of its own, so the routes served are the ones documented).
  r.on('not-found', async (ctx, next) => {
    const path = ctx.method === 'POST' && ctx.path.startsWith(ADD_PREFIX) ? ctx.path.slice(ADD_PREFIX.length) : '';
    const alias = path ? (await defaultAliasRoutes()).get(path) : undefined;
    if (!alias) return next();
    await addThrough(ctx, alias); // the body is checked as there, then the source is found not enabled
  });
  return r;
}

const ADD_PREFIX = '/api/v2/add/';
let defaults: Promise<Map<string, AliasAddRoute>> | undefined;

/** The alias routes of the default distribution's sources (config/default.yaml), loaded once, when first asked. */
function defaultAliasRoutes(): Promise<Map<string, AliasAddRoute>> {
  defaults ??= defaultSources().then(aliasAddRoutes, () => new Map()); // a default config that cannot load: unknown paths stay 404s
  return defaults;
}

type SpecUpload = Awaited<ReturnType<typeof receiveSpecFile>>;

/**
 * Receives a multipart specification upload and adds it with `add` (the key route's, or the web
 * UI's for an admin session); the saved file is removed when adding fails.
 */
export async function addUploadedSpec<T>(ctx: Context, opts: { dataDir: string; maxUploadBytes: number }, add: (upload: SpecUpload) => Promise<T>): Promise<T> {
  const upload = await receiveSpecFile(ctx, opts);
  try {
    return await add(upload);
  } catch (e) {
    await rm(upload.path, { force: true });
    throw e;
  }
}

const FILE_FIELDS = ['openapiFile', 'file'];

/**
 * Saves the multipart upload's one file under <dataDir>/uploads; refuses anything else. Every
 * stream this starts is awaited and every failure becomes a 4xx: a body that ends before its
 * closing boundary, a connection that drops mid-body, a file over the limit. On any failure the
 * partial file is removed once its write stream has closed.
 */
async function receiveSpecFile(ctx: Context, opts: { dataDir: string; maxUploadBytes: number }): Promise<{ path: string; fileName: string; title?: string; force: boolean }> {
  if (ctx.request.type !== 'multipart/form-data') {
    throw new RefdeskError('invalid_request', 'Send the specification as multipart/form-data with the file in the "openapiFile" field.');
  }
  const tooLarge = () =>
    new RefdeskError('too_large', `The specification file is larger than ${opts.maxUploadBytes} bytes (${Math.round(opts.maxUploadBytes / 1048576)} MB), the limit for uploads.`);
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > opts.maxUploadBytes + 64 * 1024) {
    ctx.set('Connection', 'close');
    throw tooLarge();
  }
  let bb: busboy.Busboy;
  try {
    bb = busboy({ headers: ctx.req.headers, limits: { fileSize: opts.maxUploadBytes, files: 1, fields: 10, fieldSize: 2000, parts: 20 } });
  } catch {
    throw new RefdeskError('invalid_request', 'The multipart body is malformed: its Content-Type needs a boundary (multipart/form-data; boundary=...).');
  }
  const dir = join(opts.dataDir, 'uploads');
  await mkdir(dir, { recursive: true });
  const fields: Record<string, string> = {};
  let saved: { path: string; fileName: string } | null = null;
  let failure: RefdeskError | null = null;
  // Settles when the file's write stream is done (written or failed); never rejects.
  let written: Promise<Error | null> = Promise.resolve(null);
  let fileStream: Readable | null = null;
  bb.on('field', (name, value) => {
    fields[name] = value;
  });
  bb.on('file', (name, stream, info) => {
    if (!FILE_FIELDS.includes(name) || saved) {
      failure ??= new RefdeskError('invalid_request', saved ? 'Send one specification file per upload.' : `Unexpected file field "${name.slice(0, 40)}"; send the specification in "openapiFile".`);
      // Drained and dropped; busboy fails this stream too when the form ends early.
      stream.on('error', () => {});
      stream.resume();
      return;
    }
    const ext = /\.(json|ya?ml)$/i.exec(info.filename ?? '')?.[0].toLowerCase() ?? '';
    const path = join(dir, `${randomUUID()}${ext}`);
    saved = { path, fileName: info.filename || 'openapi.json' };
    fileStream = stream;
    stream.on('limit', () => {
      failure = tooLarge();
    });
    written = streamToFile(path, stream);
  });
  // Busboy stops feeding the file on a failed form: its stream is ended so the write stream closes.
  const parsed = pumpMultipart(ctx.req, bb, () => (fileStream ? [fileStream] : []), 'send the file in the "openapiFile" field of a complete multipart/form-data body.');
  const parseError = await parsed;
  // A failed form fails the file stream too; wait for the write stream before touching the file.
  const writeError = await written;
  const file = saved as { path: string; fileName: string } | null;
  const problem = parseError ?? failure ?? writeError ?? (file ? null : new RefdeskError('invalid_request', 'No specification file: send it in the "openapiFile" field of a multipart/form-data body.'));
  if (problem) {
    if (file) await rm(file.path, { force: true });
    throw problem;
  }
  const force = fields.force === 'true';
  const title = fields.libraryTitle?.trim() || undefined;
  return { path: file!.path, fileName: file!.fileName, title, force };
}
