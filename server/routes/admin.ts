import Router from '@koa/router';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { Context, Next } from 'koa';
import type { Kernel } from '../../core/kernel.ts';
import { RefdeskError } from '../../core/errors.ts';
import { addLibrary } from '../../core/ingest.ts';
import type { JobRunner } from '../job-runner.ts';
import { libraryJson } from './search.ts';
import { requiredString } from '../params.ts';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * Operator routes. Until API keys exist they answer only requests from this machine
 * (loopback), which is how the `refdesk` CLI talks to a running server.
 */
export function adminRoutes(kernel: Kernel, jobs: JobRunner, opts: { maxUploadBytes: number }): Router {
  const r = new Router({ prefix: '/api/admin' });
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

  r.get('/jobs/:id', async (ctx) => {
    const job = await kernel.store.getJob(ctx.params.id);
    if (!job) throw new RefdeskError('invalid_request', `Unknown job "${ctx.params.id}".`);
    ctx.body = { job, log: await kernel.store.getJobLog(job.id) };
  });

  /** Body: a .tar.gz or .zip of the docs; query: name (and optional title). Queues an ingest. */
  r.post('/upload', async (ctx) => {
    const name = requiredString(ctx, 'name', 100);
    const title = typeof ctx.query.title === 'string' ? ctx.query.title.trim().slice(0, 200) : undefined;
    const description = typeof ctx.query.description === 'string' ? ctx.query.description.trim().slice(0, 2000) : undefined;
    const dir = join(kernel.env.dataDir, 'uploads');
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${randomUUID()}.upload`);
    let size = 0;
    const limit = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > opts.maxUploadBytes) cb(new RefdeskError('too_large', `Upload larger than ${opts.maxUploadBytes} bytes.`));
        else cb(null, chunk);
      },
    });
    try {
      await pipeline(ctx.req, limit, createWriteStream(file));
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
