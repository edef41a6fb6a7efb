/**
 * Who may read a job, and the job as the API shows it.
 *
 * Admins read every job. A job started by someone who is not an admin (an anonymous caller, or
 * a member key, under an anonymous permission that is On) is readable by whoever holds its
 * `statusUrl`: the URL carries a token, an HMAC of the job ID under a key this server keeps in
 * its settings (`jobs.statusKey`, created once), so it survives restarts and names that job only.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { JobRecord, Store } from '../core/contracts.ts';
import { RefdeskError } from '../core/errors.ts';
import type { Access } from './access.ts';

const STATUS_KEY_SETTING = 'jobs.statusKey';

let cached: { store: Store; key: Buffer } | null = null;

async function statusKey(store: Store): Promise<Buffer> {
  if (cached?.store === store) return cached.key;
  let stored = await store.getSetting(STATUS_KEY_SETTING);
  if (typeof stored !== 'string' || stored.length < 40) {
    stored = randomBytes(32).toString('base64url');
    await store.setSetting(STATUS_KEY_SETTING, stored);
  }
  cached = { store, key: Buffer.from(stored as string, 'base64url') };
  return cached.key;
}

/** The token of a job's statusUrl. */
export async function jobStatusToken(store: Store, jobId: string): Promise<string> {
  return createHmac('sha256', await statusKey(store)).update(`job:${jobId}`).digest('base64url').slice(0, 32);
}

/** `/api/jobs/<id>?token=...`: what a caller polls (or streams, with /events) to follow its job. */
export async function jobStatusUrl(store: Store, jobId: string): Promise<string> {
  return `/api/jobs/${encodeURIComponent(jobId)}?token=${await jobStatusToken(store, jobId)}`;
}

/** The URLs of a job its starter follows it by: statusUrl (state), eventsUrl (live stream), logUrl. */
export async function jobUrls(store: Store, jobId: string): Promise<{ statusUrl: string; eventsUrl: string; logUrl: string }> {
  const token = await jobStatusToken(store, jobId);
  const base = `/api/jobs/${encodeURIComponent(jobId)}`;
  return { statusUrl: `${base}?token=${token}`, eventsUrl: `${base}/events?token=${token}`, logUrl: `${base}/log?token=${token}` };
}

/**
 * The 202 answer of a route that queued a job (parse, upload, refresh): the fields the v2 add
 * routes answer (`libraryName`) plus `libraryId`, the job, its state and the URLs to follow it.
 */
export async function queuedJobAnswer(store: Store, libraryId: string, job: { id: string; state: string }, message: string): Promise<Record<string, unknown>> {
  return { libraryName: libraryId, libraryId, jobId: job.id, state: job.state, ...(await jobUrls(store, job.id)), message };
}

async function tokenMatches(store: Store, jobId: string, given: unknown): Promise<boolean> {
  if (typeof given !== 'string' || given.length === 0 || given.length > 100) return false;
  const want = Buffer.from(await jobStatusToken(store, jobId));
  const got = Buffer.from(given);
  return got.length === want.length && timingSafeEqual(got, want);
}

/**
 * The job, when this caller may read it: an admin, or the holder of its status token
 * (`?token=`). 404 `not_found` for an unknown job; 401/403 otherwise (the same answer whether
 * or not the job exists, for callers without a token).
 */
export async function readableJob(ctx: Context, store: Store, access: Access, jobId: string): Promise<JobRecord> {
  const caller = await access.caller(ctx);
  const token = ctx.query.token;
  if (!access.isAdmin(caller)) {
    if (token === undefined) await access.requireAdmin(ctx, 'Reading a job without its statusUrl token');
    if (!(await tokenMatches(store, jobId, token))) {
      throw new RefdeskError('forbidden', 'This token is not the one of this job: use the statusUrl the parse, upload or refresh answer gave, or an admin key.');
    }
  }
  const job = await store.getJob(jobId);
  if (!job) throw new RefdeskError('not_found', `Unknown job "${jobId.slice(0, 100)}"; list jobs with GET /api/jobs (admins).`);
  return job;
}

/** A job as the API shows it: state, stage, progress, timings and error. */
export function jobJson(job: JobRecord, now: Date = new Date()) {
  const started = job.startedAt ? Date.parse(job.startedAt) : null;
  const finished = job.finishedAt ? Date.parse(job.finishedAt) : null;
  const ended = job.state === 'succeeded' || job.state === 'failed' || job.state === 'interrupted';
  return {
    id: job.id,
    libraryId: job.libraryId,
    version: job.version,
    kind: job.kind,
    state: job.state,
    stage: stageOf(job),
    progress: {
      documents: job.progress.files ?? 0,
      documentsTotal: job.progress.total ?? null,
      snippets: job.progress.snippets ?? 0,
      bytes: job.progress.bytes ?? 0,
      ...(job.progress.message ? { message: job.progress.message } : {}),
    },
    timings: {
      createdAt: job.createdAt,
      startedAt: job.startedAt,
      finishedAt: ended ? job.finishedAt : null,
      queuedMs: started !== null ? Math.max(0, started - Date.parse(job.createdAt)) : null,
      runMs: started !== null ? Math.max(0, (ended && finished !== null ? finished : now.getTime()) - started) : null,
    },
    error: job.error,
  };
}

/** The stage a job record is at, as far as the record tells (the log says more). */
export function stageOf(job: JobRecord): string {
  switch (job.state) {
    case 'queued':
      return 'queued';
    case 'running':
      return (job.progress.files ?? 0) > 0 ? 'reading' : 'starting';
    case 'succeeded':
      return 'done';
    case 'failed':
      return job.error?.code === 'cancelled' ? 'cancelled' : 'failed';
    default:
      return job.state;
  }
}

export const JOB_ENDED_STATES = new Set(['succeeded', 'failed', 'interrupted']);
