import Router from '@koa/router';
import busboy from 'busboy';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Context } from 'koa';
import { RefdeskError } from '../../core/errors.ts';
import type { ApiService } from '../api/service.ts';
import { ADD_ROUTES, type AddRoute } from '../api/add-requests.ts';
import { requireKey } from '../api/auth.ts';
import { principalOf } from '../public-api.ts';
import { readJsonBody } from '../body.ts';

/** POST /api/v2/add/{repo/github|repo/gitlab|repo/bitbucket|repo/git|openapi|llmstxt|website|confluence} and /api/v2/add/openapi-upload */
export function addRoutes(service: ApiService, opts: { dataDir: string; maxUploadBytes: number }): Router {
  const r = new Router();
  for (const route of ADD_ROUTES) {
    r.post(`/api/v2/add/${route}`, async (ctx) => {
      const principal = principalOf(ctx);
      requireKey(principal, 'Adding a library');
      ctx.body = await service.addLibraryFor(principal, route as AddRoute, await readJsonBody(ctx));
    });
  }
  r.post('/api/v2/add/openapi-upload', async (ctx) => {
    const principal = principalOf(ctx);
    requireKey(principal, 'Adding a library');
    service.ensureSourceEnabled('openapi');
    const upload = await receiveSpecFile(ctx, opts);
    try {
      ctx.body = await service.addOpenApiUploadFor(principal, upload);
    } catch (e) {
      await rm(upload.path, { force: true });
      throw e;
    }
  });
  return r;
}

const FILE_FIELDS = ['openapiFile', 'file'];

/** Saves the multipart upload's one file under <dataDir>/uploads; refuses anything else. */
async function receiveSpecFile(ctx: Context, opts: { dataDir: string; maxUploadBytes: number }): Promise<{ path: string; fileName: string; title?: string; force: boolean }> {
  if (ctx.request.type !== 'multipart/form-data') {
    throw new RefdeskError('invalid_request', 'Send the specification as multipart/form-data with the file in the "openapiFile" field.');
  }
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > opts.maxUploadBytes + 64 * 1024) {
    throw new RefdeskError('too_large', `The specification file is larger than ${opts.maxUploadBytes} bytes (${Math.round(opts.maxUploadBytes / 1048576)} MB), the limit for uploads.`);
  }
  const dir = join(opts.dataDir, 'uploads');
  await mkdir(dir, { recursive: true });
  const fields: Record<string, string> = {};
  let saved: { path: string; fileName: string } | null = null;
  let failure: RefdeskError | null = null;
  const writes: Promise<void>[] = [];
  let bb: busboy.Busboy;
  try {
    bb = busboy({ headers: ctx.req.headers, limits: { fileSize: opts.maxUploadBytes, files: 1, fields: 10, fieldSize: 2000 } });
  } catch {
    throw new RefdeskError('invalid_request', 'The multipart body is malformed (missing boundary).');
  }
  bb.on('field', (name, value) => {
    fields[name] = value;
  });
  bb.on('file', (name, stream, info) => {
    if (!FILE_FIELDS.includes(name) || saved) {
      failure ??= new RefdeskError('invalid_request', saved ? 'Send one specification file per upload.' : `Unexpected file field "${name.slice(0, 40)}"; send the specification in "openapiFile".`);
      stream.resume();
      return;
    }
    const ext = /\.(json|ya?ml)$/i.exec(info.filename ?? '')?.[0].toLowerCase() ?? '';
    const path = join(dir, `${randomUUID()}${ext}`);
    saved = { path, fileName: info.filename || 'openapi.json' };
    stream.on('limit', () => {
      failure = new RefdeskError('too_large', `The specification file is larger than ${opts.maxUploadBytes} bytes (${Math.round(opts.maxUploadBytes / 1048576)} MB), the limit for uploads.`);
    });
    writes.push(pipeline(stream, createWriteStream(path)));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      bb.on('close', resolve);
      bb.on('error', () => reject(new RefdeskError('invalid_request', 'The multipart body is malformed.')));
      ctx.req.pipe(bb);
    });
    await Promise.all(writes);
  } catch (e) {
    if (saved) await rm((saved as { path: string }).path, { force: true });
    throw e;
  }
  const file = saved as { path: string; fileName: string } | null;
  if (failure || !file) {
    if (file) await rm(file.path, { force: true });
    throw failure ?? new RefdeskError('invalid_request', 'No specification file: send it in the "openapiFile" field of a multipart/form-data body.');
  }
  const force = fields.force === 'true';
  const title = fields.libraryTitle?.trim() || undefined;
  return { path: file.path, fileName: file.fileName, title, force };
}
