/**
 * HTTP helpers shared by the sources that read over the network (llms.txt, package registries,
 * ...): requests retried with exponential backoff on transient failures, bodies read with a byte
 * cap, and the RefdeskErrors a job ends with when a server keeps failing.
 *
 * Every request goes through the injected `Fetch` (so the operator's network policy applies);
 * nothing here calls the global fetch.
 */
import { STATUS_CODES } from 'node:http';
import type { Fetch } from '../contracts.ts';
import { RefdeskError, isRefdeskError } from '../errors.ts';
import { redactGeneric } from '../redact.ts';

/** How hard to try. */
export interface RetryPolicy {
  /** Requests made in all, the first one included (>= 1). */
  attempts: number;
  /** Delay before the first retry, in milliseconds; doubled for each further retry. */
  baseDelayMs: number;
  /** Largest delay between two attempts (a Retry-After header is capped at it too). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({ attempts: 4, baseDelayMs: 500, maxDelayMs: 8_000 });

/** Statuses worth another try: the server or a proxy says "later". */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504]);

export interface RetryOptions {
  policy?: Partial<RetryPolicy>;
  signal?: AbortSignal;
  /** Called before each retry (for a job log line): the attempt that failed and why. */
  onRetry?(info: { attempt: number; delayMs: number; reason: string }): void;
  /** Waits; replaceable in tests. Rejects when the signal aborts. */
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The outcome of a request that was retried until it gave a final answer. */
export interface RetriedResponse {
  response: Response;
  /** Requests made (1 when the first one answered). */
  attempts: number;
}

/** A URL as shown in logs and errors: no credentials, no query string, no fragment. */
export function displayUrl(url: string | URL): string {
  try {
    const u = new URL(String(url));
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(an invalid URL)';
  }
}

/**
 * `HTTP 503 Service Unavailable`: the status and its standard reason phrase. The reason phrase
 * the server sent is never shown (it is upstream text, and may carry anything).
 */
export function statusLine(status: number): string {
  const phrase = STATUS_CODES[status];
  return phrase ? `HTTP ${status} ${phrase}` : `HTTP ${status}`;
}

/**
 * A Content-Type header for a message: its media type when it has the `type/subtype` shape,
 * else "an unrecognised content type" (header text is upstream text, never echoed as is).
 */
export function mediaTypeLabel(header: string | null | undefined): string {
  if (!header) return 'no content type';
  const m = /^\s*([a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63})\s*(;|$)/i.exec(header);
  return m ? m[1].toLowerCase() : 'an unrecognised content type';
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function sleepAbortable(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Seconds or an HTTP date, in milliseconds from now; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  const s = header.trim();
  if (/^\d+$/.test(s)) return Number(s) * 1000;
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : Math.max(0, t - now);
}

function errorReason(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
    if (e.name === 'TimeoutError') return 'the request timed out';
    if (cause?.code) return redactGeneric(`${e.message} (${cause.code})`);
    return redactGeneric(e.message);
  }
  return redactGeneric(String(e));
}

/**
 * Fetches `url`, retrying network errors and retryable statuses (408, 425, 429, 5xx gateways)
 * with exponential backoff (honouring Retry-After up to maxDelayMs). Resolves with the first
 * non-retryable response, or with the last response when every attempt answered a retryable
 * status (the caller turns it into an error with `httpFailure`). Rejects with a `invalid_source`
 * RefdeskError naming the URL when the last attempt failed at the network level, with a
 * RefdeskError the Fetch threw (a policy refusal is never retried), or with the signal's reason
 * when aborted.
 */
export async function fetchWithRetry(
  fetch: Fetch,
  url: string,
  init: RequestInit & { timeoutMs?: number } = {},
  options: RetryOptions = {},
): Promise<RetriedResponse> {
  const policy = { ...DEFAULT_RETRY, ...options.policy };
  const attempts = Math.max(1, Math.floor(policy.attempts));
  const sleep = options.sleep ?? sleepAbortable;
  const signal = options.signal ?? (init.signal as AbortSignal | undefined) ?? undefined;
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    let response: Response | null = null;
    let reason: string;
    let waitHint: number | null = null;
    try {
      response = await fetch.fetch(url, { ...init, ...(signal ? { signal } : {}) });
      if (!RETRYABLE_STATUSES.has(response.status)) return { response, attempts: attempt };
      reason = statusLine(response.status);
      waitHint = retryAfterMs(response.headers.get('retry-after'));
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (isRefdeskError(e)) throw e;
      reason = errorReason(e);
      if (attempt >= attempts) {
        throw new RefdeskError(
          'invalid_source',
          `Could not reach ${displayUrl(url)}: ${reason} (tried ${attempts} time${attempts === 1 ? '' : 's'}). Check the URL and that the server is up, then run the job again.`,
          { cause: e },
        );
      }
    }
    if (attempt >= attempts) return { response: response!, attempts: attempt };
    // Free the connection of a response we will not read.
    await response?.body?.cancel().catch(() => {});
    const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
    const delayMs = Math.min(policy.maxDelayMs, Math.max(backoff, waitHint ?? 0));
    options.onRetry?.({ attempt, delayMs, reason });
    await sleep(delayMs, signal);
  }
}

/**
 * The error for a response that is not what was asked for: `notFound` (a RefdeskError code)
 * for 404/410, `invalid_source` otherwise, naming the URL, the status and how many attempts
 * were made.
 */
export function httpFailure(
  url: string,
  res: Response,
  what: string,
  opts: { attempts?: number; notFoundCode?: 'library_not_found' | 'version_not_found' | 'invalid_source'; hint?: string } = {},
): RefdeskError {
  const status = statusLine(res.status);
  const tries = opts.attempts && opts.attempts > 1 ? ` after ${opts.attempts} attempts` : '';
  const hint = opts.hint ? ` ${opts.hint}` : '';
  if (res.status === 404 || res.status === 410) {
    return new RefdeskError(opts.notFoundCode ?? 'invalid_source', `${what} was not found at ${displayUrl(url)} (${status}).${hint}`);
  }
  if (RETRYABLE_STATUSES.has(res.status)) {
    return new RefdeskError(
      'invalid_source',
      `${what} could not be read from ${displayUrl(url)}: the server answered ${status}${tries}. Try again later.`,
    );
  }
  if (res.status === 401 || res.status === 403) {
    return new RefdeskError('invalid_source', `${what} at ${displayUrl(url)} is not readable without credentials (${status}).${hint}`);
  }
  return new RefdeskError('invalid_source', `${what} could not be read from ${displayUrl(url)} (${status}).${hint}`);
}

/**
 * Reads a response body, at most `maxBytes` of it: a larger body (declared or real) is cancelled
 * and refused with a `too_large` RefdeskError naming the URL and the limit.
 */
export async function readBodyCapped(res: Response, maxBytes: number, url: string, signal?: AbortSignal): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  const tooBig = () =>
    new RefdeskError('too_large', `The response from ${displayUrl(url)} is larger than ${maxBytes} bytes (the limit for one response).`);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw tooBig();
  }
  if (!res.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = res.body.getReader();
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooBig();
      }
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    }
  } catch (e) {
    if (isRefdeskError(e) || signal?.aborted) throw e;
    throw new RefdeskError('invalid_source', `The response from ${displayUrl(url)} was cut off: ${errorReason(e)}. Run the job again.`, { cause: e });
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks, total);
}
