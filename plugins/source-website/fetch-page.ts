/**
 * One polite request of the crawler: waits its turn for the host, sends the User-Agent and any
 * conditional headers, follows redirects itself (each hop throttled, and refused when the
 * caller says so, e.g. out of scope), retries network errors, time-outs, 429 and 5xx with a
 * doubling back-off, and reads the body as text in the charset the server names.
 */
import { gunzipSync } from 'node:zlib';
import type { Fetch } from '../../core/contracts.ts';
import { isRefdeskError } from '../../core/errors.ts';
import { redactGeneric } from '../../core/redact.ts';
import { HostThrottle, sleep } from './host-throttle.ts';

export interface PageRequest {
  url: string;
  /** Extra request headers (If-None-Match, If-Modified-Since, Accept). */
  headers?: Record<string, string>;
  /** Read the body only when this says yes for the response's content type. */
  wantBody?: (contentType: string) => boolean;
  /** Why a redirect to this URL must not be followed, or null to follow it (all are followed without it). */
  refuseRedirect?: (target: URL) => string | null;
}

/** Most redirects followed for one page. */
export const MAX_REDIRECTS = 10;

export type PageResponse =
  | { kind: 'ok'; status: number; finalUrl: string; contentType: string; headers: Headers; body: string | null }
  | { kind: 'not-modified'; finalUrl: string }
  | { kind: 'http-error'; status: number; finalUrl: string }
  | { kind: 'redirect-refused'; finalUrl: string; target: string; reason: string }
  | { kind: 'error'; error: unknown; message: string };

export interface PageFetcherConfig {
  fetch: Fetch;
  userAgent: string;
  timeoutMs: number;
  retries: number;
  retryDelayMs: number;
  /** Least time between requests to one host, in ms; may change once robots.txt is read. */
  delayMs: number;
  signal: AbortSignal;
}

function isTransient(e: unknown): boolean {
  const err = e as { name?: string; cause?: { name?: string } } | null;
  if (err?.name === 'TimeoutError' || err?.cause?.name === 'TimeoutError') return true;
  if (isRefdeskError(e)) return false;
  return e instanceof TypeError; // fetch's network failures
}

function describe(e: unknown): string {
  if (isRefdeskError(e)) return e.message;
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  if (err?.name === 'TimeoutError') return 'the request timed out';
  const cause = err?.cause?.code ?? err?.cause?.message;
  return redactGeneric(cause ? `${err?.message ?? 'network error'} (${cause})` : (err?.message ?? String(e)));
}

function charsetOf(contentType: string): string {
  const m = /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType);
  return m ? m[1] : 'utf-8';
}

/** The sitemaps protocol caps a sitemap at 50 MB uncompressed; a gzip body may not inflate past it. */
const MAX_INFLATED_BYTES = 50 * 1024 * 1024;

/** The body as text; a gzip body (a `sitemap.xml.gz`, served without Content-Encoding) is inflated first. */
function decode(raw: ArrayBuffer, contentType: string): string {
  let bytes: Uint8Array = new Uint8Array(raw);
  if (bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes, { maxOutputLength: MAX_INFLATED_BYTES });
  try {
    return new TextDecoder(charsetOf(contentType)).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

export class PageFetcher {
  private readonly throttle = new HostThrottle();
  constructor(readonly config: PageFetcherConfig) {}

  /** Fetches one URL, following redirects itself so each hop is throttled and checked. */
  async get(req: PageRequest): Promise<PageResponse> {
    let url = req.url;
    for (let hop = 0; ; hop++) {
      const r = await this.once({ ...req, url });
      if (r.kind !== 'redirect') return r;
      if (hop >= MAX_REDIRECTS) return { kind: 'error', error: null, message: `more than ${MAX_REDIRECTS} redirects` };
      let target: URL;
      try {
        target = new URL(r.location, url);
      } catch {
        return { kind: 'error', error: null, message: `a redirect to an invalid URL` };
      }
      target.hash = '';
      const refused = req.refuseRedirect?.(target) ?? null;
      if (refused) return { kind: 'redirect-refused', finalUrl: url, target: target.href, reason: refused };
      url = target.href;
    }
  }

  /** One request (with retries), redirects not followed. */
  private async once(req: PageRequest): Promise<PageResponse | { kind: 'redirect'; location: string }> {
    const { fetch, userAgent, timeoutMs, retries, retryDelayMs, signal } = this.config;
    const host = new URL(req.url).host;
    let lastProblem: PageResponse | null = null;
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await sleep(retryDelayMs * 2 ** (attempt - 1), signal);
      await this.throttle.wait(host, this.config.delayMs, signal);
      let res: Response;
      try {
        res = await fetch.fetch(req.url, { headers: { 'user-agent': userAgent, ...req.headers }, timeoutMs, signal, redirect: 'manual' });
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        lastProblem = { kind: 'error', error: e, message: describe(e) };
        if (isTransient(e)) continue;
        return lastProblem;
      }
      const finalUrl = req.url;
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && res.status !== 304 && location) {
        await res.body?.cancel().catch(() => undefined);
        return { kind: 'redirect', location };
      }
      if (res.status === 304) {
        await res.body?.cancel().catch(() => undefined);
        return { kind: 'not-modified', finalUrl };
      }
      if (res.status === 429 || res.status >= 500) {
        await res.body?.cancel().catch(() => undefined);
        lastProblem = { kind: 'http-error', status: res.status, finalUrl };
        continue;
      }
      if (res.status >= 300) {
        await res.body?.cancel().catch(() => undefined);
        return { kind: 'http-error', status: res.status, finalUrl };
      }
      const contentType = res.headers.get('content-type') ?? '';
      if (req.wantBody && !req.wantBody(contentType)) {
        await res.body?.cancel().catch(() => undefined);
        return { kind: 'ok', status: res.status, finalUrl, contentType, headers: res.headers, body: null };
      }
      try {
        const body = decode(await res.arrayBuffer(), contentType);
        return { kind: 'ok', status: res.status, finalUrl, contentType, headers: res.headers, body };
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        lastProblem = { kind: 'error', error: e, message: describe(e) };
        if (isTransient(e)) continue;
        return lastProblem;
      }
    }
    return lastProblem!;
  }
}
