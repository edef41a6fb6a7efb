/**
 * Plugin test kit: fakes of the kernel services (Fetch, Embedder, Clock, Logger), so a plugin
 * can be tested with no server and no network.
 */
import type { Clock, Embedder, Fetch } from '../contracts.ts';

export { createTestLogger, type TestLogger, type TestLogLine } from './run-source.ts';

// ---------------------------------------------------------------------------------------------
// Fetch
// ---------------------------------------------------------------------------------------------

/** Answers one request. Return a fresh Response each call: a body can only be read once. */
export type FakeRoute = (req: Request) => Response | Promise<Response>;

export interface FakeFetchCall {
  /** The URL as requested (a URL object is recorded by its href). */
  url: string;
  /** Upper case, `GET` when not given. */
  method: string;
  /** Request headers, names lower-cased. */
  headers: Record<string, string>;
}

export interface FakeFetchOptions {
  /** Reject requests no route answers, instead of answering 404. */
  strict?: boolean;
}

export interface FakeFetch extends Fetch {
  /** Every call made, in order (including the ones that were aborted or had no route). */
  readonly calls: FakeFetchCall[];
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function normalizeUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/**
 * A Fetch answering from `routes`. Keys are `METHOD url` (e.g. `POST https://api.example.com/v1`)
 * or a plain `url` for any method. A URL is matched exactly (after URL normalization, so
 * `https://example.com` and `https://example.com/` are the same); a key ending in `*` matches
 * every URL starting with what precedes the star. The most specific route wins: an exact
 * `METHOD url`, then an exact `url`, then the longest prefix (a method-specific one first when
 * two prefixes are the same length).
 *
 * Unknown URLs get a 404 response, or a rejection naming the URL with `{ strict: true }`. A route
 * that throws makes the fetch reject (like a network error). `init.signal` is honoured: an
 * aborted signal rejects with its reason (an AbortError unless `abort(reason)` gave another),
 * also while an async route is still answering; `init.timeoutMs` aborts with a TimeoutError.
 */
export function createFakeFetch(routes: Record<string, FakeRoute>, options: FakeFetchOptions = {}): FakeFetch {
  const exact = new Map<string, FakeRoute>();
  const prefixes: Array<{ method: string | null; prefix: string; route: FakeRoute }> = [];
  for (const [key, route] of Object.entries(routes)) {
    if (typeof route !== 'function') throw new TypeError(`createFakeFetch: the route "${key}" must be a function (req) => Response`);
    const m = /^([A-Za-z]+)\s+(\S.*)$/.exec(key.trim());
    const method = m ? m[1].toUpperCase() : null;
    const target = m ? m[2] : key.trim();
    if (target.endsWith('*')) {
      prefixes.push({ method, prefix: target.slice(0, -1), route });
    } else {
      exact.set(`${method ?? '*'} ${normalizeUrl(target)}`, route);
    }
  }
  prefixes.sort((a, b) => b.prefix.length - a.prefix.length || (a.method === null ? 1 : 0) - (b.method === null ? 1 : 0));

  const lookup = (method: string, url: string): FakeRoute | undefined => {
    const href = normalizeUrl(url);
    const hit = exact.get(`${method} ${href}`) ?? exact.get(`* ${href}`);
    if (hit) return hit;
    for (const p of prefixes) {
      if (p.method !== null && p.method !== method) continue;
      if (url.startsWith(p.prefix) || href.startsWith(p.prefix)) return p.route;
    }
    return undefined;
  };

  const calls: FakeFetchCall[] = [];
  return {
    calls,
    async fetch(input, init = {}) {
      const url = input instanceof URL ? input.href : String(input);
      const method = (init.method ?? 'GET').toUpperCase();
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => {
        headers[name] = value;
      });
      calls.push({ url, method, headers });

      const { timeoutMs, signal: given, ...rest } = init;
      // A timer of our own rather than AbortSignal.timeout: that one is unref'd, and with no
      // socket to keep the process alive a test awaiting a route that never answers would end.
      let timer: NodeJS.Timeout | undefined;
      let timeoutSignal: AbortSignal | undefined;
      if (timeoutMs !== undefined) {
        const ctrl = new AbortController();
        timer = setTimeout(() => ctrl.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), timeoutMs);
        timeoutSignal = ctrl.signal;
      }
      const signals = [given, timeoutSignal].filter((s): s is AbortSignal => s != null);
      const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
      try {
        return await answer(url, method, rest, signal);
      } finally {
        clearTimeout(timer);
      }
    },
  };

  async function answer(url: string, method: string, rest: RequestInit, signal: AbortSignal | undefined): Promise<Response> {
    if (signal?.aborted) throw abortReason(signal);

    const route = lookup(method, url);
    if (!route) {
      if (options.strict) {
        throw new Error(
          `createFakeFetch: no route for ${method} ${url}. Known routes: ${Object.keys(routes).join(', ') || '(none)'}`,
        );
      }
      return withUrl(new Response(`Not found: ${url}`, { status: 404, statusText: 'Not Found' }), url);
    }
    const body = rest.body ?? null;
    const req = new Request(url, {
      ...rest,
      method,
      body: method === 'GET' || method === 'HEAD' ? null : body,
      ...(signal ? { signal } : {}),
      ...(body !== null ? { duplex: 'half' } : {}),
    } as RequestInit);
    const answered = Promise.resolve().then(() => route(req));
    if (!signal) return withUrl(await answered, url);
    return withUrl(
      await new Promise<Response>((resolve, reject) => {
        const onAbort = () => reject(abortReason(signal));
        signal.addEventListener('abort', onAbort, { once: true });
        answered.then(
          (res) => {
            signal.removeEventListener('abort', onAbort);
            if (signal.aborted) reject(abortReason(signal));
            else resolve(res);
          },
          (err: unknown) => {
            signal.removeEventListener('abort', onAbort);
            reject(err);
          },
        );
      }),
      url,
    );
  }
}

/** Like the platform fetch, a response knows the URL it answers (a hand-made Response has ''). */
function withUrl(res: Response, url: string): Response {
  if (!(res instanceof Response)) {
    throw new TypeError(`createFakeFetch: the route for ${url} must return a Response, got ${res === null ? 'null' : typeof res}`);
  }
  if (res.url === '') Object.defineProperty(res, 'url', { value: url, enumerable: true });
  return res;
}

// ---------------------------------------------------------------------------------------------
// Embedder
// ---------------------------------------------------------------------------------------------

export interface FakeEmbedderOptions {
  /** Vector length; 16 unless given. */
  dimensions?: number;
  /** The model name the embedder reports; `fake-embedder` unless given. */
  model?: string;
}

export interface FakeEmbedderCall {
  texts: string[];
  purpose: 'document' | 'query';
}

export interface FakeEmbedder extends Embedder {
  /** Every `embed` call, in order (a copy of the texts). */
  readonly calls: FakeEmbedderCall[];
}

/** FNV-1a, 32 bits, with murmur3's finalizer: FNV's low bits alone mix poorly. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The features of a text: its lower-cased words and their character trigrams (with edges). */
function features(text: string): string[] {
  const out: string[] = [];
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  for (const w of words) {
    out.push(`w:${w}`);
    const padded = `#${w}#`;
    for (let i = 0; i + 3 <= padded.length; i++) out.push(`g:${padded.slice(i, i + 3)}`);
  }
  return out;
}

/**
 * A deterministic Embedder: each text becomes a unit vector hashed from its words and character
 * trigrams (signed feature hashing), so the same text always gives the same vector and texts that
 * share words or spellings get close vectors. The purpose does not change the vector. An empty
 * text (no words) gets the first unit vector.
 */
export function createFakeEmbedder(options: FakeEmbedderOptions = {}): FakeEmbedder {
  const dimensions = options.dimensions ?? 16;
  if (!Number.isInteger(dimensions) || dimensions < 1) {
    throw new RangeError(`createFakeEmbedder: dimensions must be a positive integer, got ${String(dimensions)}`);
  }
  const calls: FakeEmbedderCall[] = [];
  const embedOne = (text: string): Float32Array => {
    const v = new Float64Array(dimensions);
    for (const f of features(text)) {
      const h = hash32(f);
      // The top bit picks the sign, the rest the dimension.
      v[(h & 0x7fffffff) % dimensions] += h >>> 31 ? 1 : -1;
    }
    let norm = 0;
    for (const x of v) norm += x * x;
    const out = new Float32Array(dimensions);
    if (norm === 0) {
      out[0] = 1;
      return out;
    }
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < dimensions; i++) out[i] = v[i] * scale;
    return out;
  };
  return {
    model: options.model ?? 'fake-embedder',
    dimensions,
    calls,
    async embed(texts, purpose) {
      calls.push({ texts: [...texts], purpose });
      return texts.map((t) => embedOne(String(t)));
    },
  };
}

/** Cosine similarity of two vectors of the same length (the dot product for unit vectors). */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new RangeError(`cosineSimilarity: lengths differ (${a.length} and ${b.length})`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

// ---------------------------------------------------------------------------------------------
// Clock
// ---------------------------------------------------------------------------------------------

export interface FakeClock extends Clock {
  /** Moves the time forward (or back, with a negative value) by `ms`; returns the new time. */
  advance(ms: number): Date;
  /** Sets the time to an ISO 8601 date. */
  set(iso: string): void;
}

function parseTime(iso: string, what: string): number {
  const t = typeof iso === 'string' ? Date.parse(iso) : NaN;
  if (Number.isNaN(t)) throw new RangeError(`${what}: not an ISO 8601 date: ${JSON.stringify(iso)}`);
  return t;
}

/** A Clock that only moves when told to. `now()` returns a new Date each call. */
export function createFakeClock(start = '2026-01-01T00:00:00.000Z'): FakeClock {
  let t = parseTime(start, 'createFakeClock');
  return {
    now: () => new Date(t),
    advance(ms) {
      if (!Number.isFinite(ms)) throw new RangeError(`FakeClock.advance: ms must be a finite number, got ${String(ms)}`);
      t += ms;
      return new Date(t);
    },
    set(iso) {
      t = parseTime(iso, 'FakeClock.set');
    },
  };
}
