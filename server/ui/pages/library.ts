/**
 * /libraries/{libraryId} (`/libraries/docs/python` for /docs/python; any valid ID, pinned ones
 * too): the library as GET /api/libraries/{libraryId} shows it (versions, what it was built
 * from without secrets, recent jobs), its newest job (or `?job=<id>`) with stage, progress and
 * log, streamed live from GET /api/jobs/{id}/events by assets/library.js while the job runs, a
 * Refresh button (POST /api/libraries/{id}/refresh's function), Delete behind a confirmation
 * naming the library, and a "try a question" box answering as GET /api/v2/context does.
 *
 * Every action is a form post to the page itself with a field `action` (refresh | delete), so
 * no ID can be mistaken for an action path; the page's own query (`query`, `type`, `job`) never
 * clashes with an ID either.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { RefdeskError, isRefdeskError } from '../../../core/errors.ts';
import { QUERY_MAX_LENGTH } from '../../../core/query.ts';
import { formatLibraryId } from '../../../core/library-id.ts';
import { ApiError } from '../../api/api-error.ts';
import { deleteLibrary } from '../../api/service.ts';
import { libraryDetailFor, libraryIdParam, refreshLibraryFor, type LibraryDetail } from '../../api/library-views.ts';
import { jobJson } from '../../job-access.ts';
import { jobLogLines } from '../../routes/jobs.ts';
import { formBody } from '../../auth/sessions.ts';
import { guardPage, type UiDeps } from '../page-access.ts';
import { isHtmx, redirect, renderFragment, renderPage, type Flash, type UiUser } from '../render.ts';
import { formSessionOk, isBusy, libraryPath, renderApiError } from './library-common.ts';

/** The most log lines a page shows (the newest; the whole log is at GET /api/jobs/{id}/log). */
export const LOG_LINES_SHOWN = 1000;
/** How often a library page looks for a newer job (one started elsewhere) to show and follow. */
export const JOB_WATCH_SECONDS = 5;

interface AnswerSnippet {
  rank: number;
  kind: 'code' | 'info';
  title: string;
  description: string;
  breadcrumb: string;
  source: { path: string; url?: string; lineStart: number; lineEnd: number };
  blocks: Array<{ language: string; code: string }>;
  content: string;
}

interface Answer {
  query: string;
  type: 'txt' | 'json';
  /** The answer's body exactly as the API sends it (JSON pretty-printed). */
  raw: string | null;
  snippets: AnswerSnippet[];
  error: string | null;
  /** The same request for an API client. */
  curl: string;
}

/** The try-a-question answer: GET /api/v2/context's function with this library's ID. */
async function ask(ctx: Context, deps: UiDeps, id: string, query: string, type: 'txt' | 'json'): Promise<Answer> {
  const params = new URLSearchParams({ libraryId: id, query, type });
  const answer: Answer = { query, type, raw: null, snippets: [], error: null, curl: `curl '${ctx.origin}/api/v2/context?${params}'` };
  const principal = { kind: 'anonymous' as const, client: ctx.ip };
  try {
    if (query.length > QUERY_MAX_LENGTH) throw new RefdeskError('invalid_request', `The question is longer than ${QUERY_MAX_LENGTH} characters.`);
    const json = await deps.service.getContextFor(principal, { libraryId: id, query, type: 'json' });
    if (json.type !== 'json') throw new Error('context answered text to a JSON request');
    const { codeSnippets, infoSnippets } = json.body;
    answer.snippets = [
      ...codeSnippets.map((c) => ({ rank: c.rank, kind: 'code' as const, title: c.codeTitle, description: c.codeDescription, breadcrumb: c.breadcrumb, source: c.source, blocks: c.codeList, content: '' })),
      ...infoSnippets.map((i) => ({ rank: i.rank, kind: 'info' as const, title: i.breadcrumb, description: '', breadcrumb: i.breadcrumb, source: i.source, blocks: [], content: i.content })),
    ].sort((a, b) => a.rank - b.rank);
    if (type === 'json') answer.raw = JSON.stringify(json.body, null, 2);
    else {
      const text = await deps.service.getContextFor(principal, { libraryId: id, query, type: 'txt' });
      answer.raw = text.type === 'txt' ? text.text : null;
    }
  } catch (e) {
    if (!isRefdeskError(e)) throw e;
    answer.error = e.message;
  }
  return answer;
}

/** The question of a request's query, when it asks one. */
function questionOf(ctx: Context): { query: string; type: 'txt' | 'json' } | null {
  const q = ctx.query.query;
  if (typeof q !== 'string' || !q.trim()) return null;
  return { query: q.trim(), type: ctx.query.type === 'json' ? 'json' : 'txt' };
}

/** The job the page shows (`?job=` or the newest), with its log. */
async function jobPanel(ctx: Context, deps: UiDeps, detail: LibraryDetail) {
  const asked = typeof ctx.query.job === 'string' ? ctx.query.job : null;
  const summary = asked ? detail.recentJobs.find((j) => j.id === asked) : detail.recentJobs[0];
  const record = summary ? await deps.kernel.store.getJob(summary.id) : null;
  if (!record) return null;
  const job = jobJson(record, deps.kernel.clock.now());
  const all = await jobLogLines(deps.kernel, deps.jobs, record);
  const live = isBusy(job.state);
  return {
    job,
    lines: all.slice(-LOG_LINES_SHOWN),
    hiddenLines: Math.max(0, all.length - LOG_LINES_SHOWN),
    live,
    eventsUrl: `/api/jobs/${encodeURIComponent(job.id)}/events`,
    logUrl: `/api/jobs/${encodeURIComponent(job.id)}/log`,
  };
}

interface ShowOptions {
  flash?: Flash | null;
  status?: number;
}

/** Renders the library page (or its 404 / redirect). */
async function showLibrary(ctx: Context, deps: UiDeps, user: UiUser, id: string, opts: ShowOptions = {}): Promise<void> {
  let detail: LibraryDetail;
  try {
    detail = await libraryDetailFor(deps.kernel, deps.access, ctx, id);
  } catch (e) {
    if (e instanceof ApiError && e.code === 'library_redirected' && typeof e.details.redirectUrl === 'string') {
      redirect(ctx, libraryPath(e.details.redirectUrl));
      return;
    }
    renderApiError(ctx, user, e, 'Library not found');
    return;
  }
  const question = questionOf(ctx);
  const data = {
    id,
    detail,
    path: libraryPath(id),
    panel: await jobPanel(ctx, deps, detail),
    answer: question ? await ask(ctx, deps, id, question.query, question.type) : null,
    question,
    queryMax: QUERY_MAX_LENGTH,
    // The newest job is shown unless one was picked: then a newer one replaces it when it starts.
    watchJobs: typeof ctx.query.job !== 'string',
    watchSeconds: JOB_WATCH_SECONDS,
  };
  const known = (v: unknown): string | null => (typeof v === 'string' && detail.recentJobs.some((j) => j.id === v) ? v : null);
  const queued = known(ctx.query.queued);
  const running = known(ctx.query.running);
  const flash =
    opts.flash ??
    (queued
      ? { kind: 'success' as const, text: `Refresh queued as job ${queued}: the current documentation is served until the new build is finalized.` }
      : running
        ? { kind: 'info' as const, text: `A build of ${detail.id} is already under way (job ${running}); it is followed below.` }
        : null);
  renderPage(ctx, 'library/index', { title: detail.title || detail.id, nav: 'libraries', user, flash }, data, opts.status ?? 200);
}

export function registerLibraryPages(r: Router, deps: UiDeps): void {
  r.get('/libraries/', (ctx) => redirect(ctx, '/libraries'));

  r.get('/libraries/*id', async (ctx) => {
    const user = await guardPage(ctx, deps);
    if (!user) return;
    const id = libraryIdParam(ctx);
    ctx.vary('HX-Request');
    if (isHtmx(ctx) && ctx.get('hx-history-restore-request') !== 'true') {
      const question = questionOf(ctx);
      // The answer box asks in place; the summary reloads when a streamed job ends.
      if (question || ctx.query.part === 'answer') {
        const answer = question ? await ask(ctx, deps, id, question.query, question.type) : null;
        renderFragment(ctx, 'library/answer', { answer });
        return;
      }
      if (ctx.query.part === 'job') {
        // 204 (htmx keeps what it has) until a newer job than the one shown exists.
        const detail = await libraryDetailFor(deps.kernel, deps.access, ctx, id).catch(() => null);
        if (!detail || (detail.recentJobs[0]?.id ?? '') === String(ctx.query.since ?? '')) {
          ctx.status = 204;
          return;
        }
        renderFragment(ctx, 'library/job', { panel: await jobPanel(ctx, deps, detail), path: libraryPath(id), watchJobs: true, watchSeconds: JOB_WATCH_SECONDS });
        return;
      }
      if (ctx.query.part === 'summary') {
        try {
          const detail = await libraryDetailFor(deps.kernel, deps.access, ctx, id);
          renderFragment(ctx, 'library/summary', { id, detail, path: libraryPath(id) });
        } catch (e) {
          if (!isRefdeskError(e)) throw e;
          renderFragment(ctx, 'library/gone', { message: e.message }, 200);
        }
        return;
      }
    }
    await showLibrary(ctx, deps, user, id);
  });

  r.post('/libraries/*id', async (ctx) => {
    if (!(await formSessionOk(ctx, deps))) return;
    const user = await guardPage(ctx, deps);
    if (!user) return;
    const id = libraryIdParam(ctx);
    let form: Record<string, string> = {};
    try {
      form = (await formBody(ctx)) ?? {};
      if (form.action === 'refresh') {
        const asked = deps.kernel.clock.now().getTime();
        const answer = await refreshLibraryFor(deps.kernel, deps.service, deps.access, ctx, id);
        // The API answers 202 with the running job when one is already building the library.
        const job = await deps.kernel.store.getJob(String(answer.jobId));
        const already = job !== null && Date.parse(job.createdAt) < asked;
        redirect(ctx, `${libraryPath(id)}?${already ? 'running' : 'queued'}=${encodeURIComponent(String(answer.jobId))}`);
        return;
      }
      if (form.action === 'delete') {
        const detail = await libraryDetailFor(deps.kernel, deps.access, ctx, id);
        const typed = (form.confirm ?? '').trim();
        if (typed !== id) {
          const error = typed ? `"${typed.slice(0, 120)}" is not this library's ID: type ${id} exactly, or go back.` : null;
          renderPage(ctx, 'library/delete', { title: `Delete ${id}?`, nav: 'libraries', user }, { id, detail, path: libraryPath(id), error }, error ? 400 : 200);
          return;
        }
        await deps.access.requirePermission(ctx, 'delete', 'Deleting a library');
        const done = await deleteLibrary(deps.kernel, id);
        redirect(ctx, `/libraries?deleted=${encodeURIComponent(formatLibraryId(done.libraryId, done.version ?? ''))}`);
        return;
      }
      throw new RefdeskError('invalid_request', 'This form sent no known action (refresh or delete); reload the page and use its buttons.');
    } catch (e) {
      if (!isRefdeskError(e)) throw e;
      await showLibrary(ctx, deps, user, id, { flash: { kind: 'error', text: e.message }, status: e.status });
    }
  });
}
