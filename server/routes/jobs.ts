/**
 * Jobs: list (admins), one job's state, stage, progress, timings and error, its log, a live
 * Server-Sent Events stream of it, and cancel (admins). A job is readable by admins and by the
 * holder of its statusUrl token (server/job-access.ts).
 *
 *   GET  /api/jobs?libraryId=&state=&limit=      admins
 *   GET  /api/jobs/{jobId}[?token=]              admins, or the statusUrl's token
 *   GET  /api/jobs/{jobId}/log[?token=&after=]   the same
 *   GET  /api/jobs/{jobId}/events[?token=]       the same; text/event-stream until the job ends
 *   POST /api/jobs/{jobId}/cancel                admins
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { JobRecord, JobState } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { readJobLog, type JobLogEntry } from '../../core/job-log.ts';
import type { JobEvent, JobRunner } from '../job-runner.ts';
import type { Access } from '../access.ts';
import { JOB_ENDED_STATES, jobJson, readableJob } from '../job-access.ts';

const JOB_STATES: readonly JobState[] = ['queued', 'running', 'succeeded', 'failed', 'interrupted'];

export interface JobRoutesOptions {
  /** How often an idle event stream sends a heartbeat comment (default 15 s). */
  heartbeatMs?: number;
  /** Shortest interval between two progress events of one stream (default 250 ms). */
  progressMs?: number;
}

function queryString(ctx: Context, name: string, max: number): string | undefined {
  const v = ctx.query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > max) throw new RefdeskError('invalid_request', `Query parameter "${name}" must be given once, 1-${max} characters.`);
  return v;
}

function queryInt(ctx: Context, name: string, min: number, max: number): number | undefined {
  const v = queryString(ctx, name, 12);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new RefdeskError('invalid_request', `Query parameter "${name}" must be a whole number from ${min} to ${max}.`);
  return Number(v);
}

/** The job's log: its file, plus the lines the running job wrote and the file does not hold yet; older jobs' lines from the store. */
export async function jobLogLines(kernel: Kernel, jobs: JobRunner, job: JobRecord, afterSeq = 0): Promise<JobLogEntry[]> {
  const byFile = await readJobLog(kernel.env.dataDir, job.id, afterSeq);
  const last = byFile.length ? byFile[byFile.length - 1].seq : afterSeq;
  const lines = [...byFile, ...jobs.recentLog(job.id).filter((e) => e.seq > last)];
  if (lines.length > 0 || afterSeq > 0) return lines;
  // A job from before job log files: the store's lines (no stage, no path).
  return (await kernel.store.getJobLog(job.id)).map((l) => ({ seq: l.seq, at: l.at, level: l.level, stage: '', message: l.message }));
}

/** The library's state once a job has ended (`finalized` when it serves), or null when it is gone. */
async function libraryStateAfter(kernel: Kernel, job: JobRecord): Promise<string | null> {
  const version = await kernel.store.getVersion(job.libraryId, job.version).catch(() => null);
  return version?.state ?? null;
}

export function jobRoutes(kernel: Kernel, jobs: JobRunner, access: Access, options: JobRoutesOptions = {}): Router {
  const r = newRouter();
  const { store } = kernel;

  r.get('/api/jobs', async (ctx) => {
    await access.requireAdmin(ctx, 'Listing jobs');
    const libraryId = queryString(ctx, 'libraryId', 500);
    const state = queryString(ctx, 'state', 20);
    if (state !== undefined && !JOB_STATES.includes(state as JobState)) throw new RefdeskError('invalid_request', `Query parameter "state" must be one of ${JOB_STATES.join(', ')}.`);
    const limit = queryInt(ctx, 'limit', 1, 1000) ?? 50;
    const list = await store.listJobs({ libraryId, state: state as JobState | undefined, limit });
    const now = kernel.clock.now();
    ctx.body = { jobs: list.map((j) => jobJson(j, now)) };
  });

  r.get('/api/jobs/:id', async (ctx) => {
    const job = await readableJob(ctx, store, access, ctx.params.id);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ...jobJson(job, kernel.clock.now()), libraryState: JOB_ENDED_STATES.has(job.state) ? await libraryStateAfter(kernel, job) : null };
  });

  r.get('/api/jobs/:id/log', async (ctx) => {
    const job = await readableJob(ctx, store, access, ctx.params.id);
    const after = queryInt(ctx, 'after', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { jobId: job.id, state: job.state, lines: await jobLogLines(kernel, jobs, job, after) };
  });

  r.post('/api/jobs/:id/cancel', async (ctx) => {
    await access.requireAdmin(ctx, 'Cancelling a job');
    const before = await store.getJob(ctx.params.id);
    const job = await jobs.cancel(ctx.params.id);
    const cancelled = job.error?.code === 'cancelled' && before?.state !== job.state;
    ctx.body = {
      job: jobJson(job, kernel.clock.now()),
      cancelled,
      message: cancelled
        ? `Cancelled job ${job.id}; the served version of ${job.libraryId} is unchanged.`
        : `Job ${job.id} had already ended (${job.state}); nothing to cancel.`,
    };
  });

  r.get('/api/jobs/:id/events', async (ctx) => {
    const job = await readableJob(ctx, store, access, ctx.params.id);
    const lastEventId = Number(ctx.get('last-event-id'));
    let lastSeq = Number.isSafeInteger(lastEventId) && lastEventId > 0 ? lastEventId : 0;
    const req = ctx.req;
    const res = ctx.res;
    ctx.respond = false;
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write(': job events\n\n');

    let closed = false;
    let ended = false;
    let ready = false;
    const pending: JobEvent[] = [];
    let progressTimer: NodeJS.Timeout | null = null;
    let lastProgressAt = 0;
    let latestProgress: Extract<JobEvent, { type: 'progress' }> | null = null;

    const send = (event: string, data: unknown, id?: number) => {
      if (closed) return;
      res.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    const off = jobs.subscribe(job.id, (e) => (ready ? handle(e) : pending.push(e)));
    // Each heartbeat also looks at the record: a job deleted with its library (or ended without
    // an event reaching this stream) still ends the stream.
    const heartbeat = setInterval(() => {
      if (closed || ended) return;
      res.write(': heartbeat\n\n');
      store.getJob(job.id).then(
        (now) => {
          if (!ready || closed || ended) return;
          if (!now) sendGone();
          else if (JOB_ENDED_STATES.has(now.state) && !jobs.recentLog(job.id).length) void sendEnd(now);
        },
        () => {},
      );
    }, options.heartbeatMs ?? 15_000);
    heartbeat.unref();
    const finish = () => {
      if (closed) return;
      closed = true;
      off();
      clearInterval(heartbeat);
      if (progressTimer) clearTimeout(progressTimer);
      res.end();
    };
    req.on('close', finish);
    res.on('close', finish);
    res.on('error', finish);

    const flushProgress = () => {
      if (progressTimer) clearTimeout(progressTimer);
      progressTimer = null;
      if (!latestProgress) return;
      const { progress, elapsedMs } = latestProgress;
      latestProgress = null;
      lastProgressAt = Date.now();
      send('progress', { jobId: job.id, documents: progress.files ?? 0, documentsTotal: progress.total ?? null, snippets: progress.snippets ?? 0, bytes: progress.bytes ?? 0, elapsedMs });
    };
    const sendLog = (entry: JobLogEntry) => {
      if (entry.seq <= lastSeq) return;
      lastSeq = entry.seq;
      send('log', entry, entry.seq);
    };
    const sendEnd = async (record: JobRecord) => {
      if (ended) return;
      ended = true;
      flushProgress();
      // Lines written before the end that this stream has not sent yet (the file is complete now).
      for (const entry of await readJobLog(kernel.env.dataDir, record.id, lastSeq).catch(() => [])) sendLog(entry);
      send('end', { jobId: record.id, state: record.state, error: record.error, libraryId: record.libraryId, version: record.version, libraryState: await libraryStateAfter(kernel, record) });
      finish();
    };
    const sendGone = () => {
      if (ended) return;
      ended = true;
      send('end', { jobId: job.id, state: 'deleted', error: null, libraryId: job.libraryId, version: job.version, libraryState: null });
      finish();
    };
    function handle(e: JobEvent): void {
      if (closed || ended) return;
      if (e.type === 'log') sendLog(e.entry);
      else if (e.type === 'state') send('state', jobJson(e.job));
      else if (e.type === 'end') void sendEnd(e.job);
      else {
        latestProgress = e;
        const wait = (options.progressMs ?? 250) - (Date.now() - lastProgressAt);
        if (wait <= 0) flushProgress();
        else progressTimer ??= setTimeout(flushProgress, wait);
      }
    }

    try {
      send('state', jobJson(job));
      for (const entry of await jobLogLines(kernel, jobs, job, lastSeq)) sendLog(entry);
      ready = true;
      for (const e of pending.splice(0)) handle(e);
      // Ended before (or while) the stream started: its end event now.
      const now = await store.getJob(job.id);
      if (!now) sendGone();
      else if (JOB_ENDED_STATES.has(now.state)) await sendEnd(now);
    } catch (e) {
      kernel.logger.warn('job event stream failed', { job: job.id, error: (e as Error).message });
      finish();
    }
  });

  return r;
}
