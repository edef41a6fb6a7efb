/**
 * Koa middleware of the public API (/api/v1/*, /api/v2/*): who is calling (401 on a bad key),
 * the rate limit (RateLimit-* headers on every answer, 429 with Retry-After), and HTTP caching
 * of search and context answers (ETag, Cache-Control, 304 for a matching If-None-Match).
 *
 * The ETag comes from what shapes the answer (server/api/answer-etag.ts: the normalised
 * request, the library's served build, the policy, the service's fingerprint), computed before
 * the route runs: a matching If-None-Match is answered 304 without searching.
 */
import type { Context, Next } from 'koa';
import { RefdeskError } from '../core/errors.ts';
import type { ApiService } from './api/service.ts';
import type { Principal } from './api/auth.ts';
import { ApiError } from './api/api-error.ts';
import { answerEtag } from './api/answer-etag.ts';

const PUBLIC = /^\/api\/v[12]\//;
const CACHEABLE = new Set(['/api/v2/libs/search', '/api/v2/context']);

/**
 * The address of a request's client: the anonymous rate-limit bucket, the same for the REST API
 * and /mcp (one client, one limit).
 */
export function clientAddressOf(ctx: Context): string {
  return ctx.request.ip || ctx.request.socket.remoteAddress || 'unknown';
}

/** The caller of a public API request (set by publicApiMiddleware). */
export function principalOf(ctx: Context): Principal {
  const p = ctx.state.principal as Principal | undefined;
  if (!p) throw new RefdeskError('internal_error', 'No principal on a public API request.');
  return p;
}

/**
 * If-None-Match as an origin server evaluates it (RFC 9110 13.1.2, weak comparison). Koa's
 * `ctx.fresh` is not used: it treats the request's `Cache-Control: no-cache` (which fetch adds
 * to every conditional request) as a reload and never answers 304.
 */
function noneMatch(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => strip(t) === strip(etag));
}

export function publicApiMiddleware(service: ApiService, opts: { cacheMaxAgeSeconds: number }) {
  return async (ctx: Context, next: Next) => {
    if (!PUBLIC.test(ctx.path)) return next();
    const principal = await service.authenticate(ctx.headers, clientAddressOf(ctx));
    ctx.state.principal = principal;
    try {
      const { headers } = service.checkRateLimit(principal);
      ctx.set(headers);
    } catch (e) {
      if (e instanceof ApiError) ctx.set(e.headers);
      throw e;
    }
    if (ctx.method !== 'GET' || !CACHEABLE.has(ctx.path)) return next();
    // A store failure here is not the caller's problem: the route runs and answers for itself.
    const tag = await answerEtag(service, ctx.path, ctx.query).catch(() => null);
    const etag = tag?.etag;
    // The catalog the tag was computed from: library search searches it (read once a request).
    if (tag?.catalog) ctx.state.catalog = tag.catalog;
    const cacheHeaders = () => {
      ctx.set('ETag', etag!);
      ctx.set('Cache-Control', `private, max-age=${opts.cacheMaxAgeSeconds}`);
      ctx.vary('Authorization');
    };
    const ifNoneMatch = ctx.get('if-none-match');
    // `*` matches any current answer, which only the route can tell exists.
    if (etag && ifNoneMatch.trim() !== '*' && noneMatch(ifNoneMatch, etag)) {
      cacheHeaders();
      ctx.status = 304;
      return;
    }
    await next();
    if (etag && ctx.status === 200 && ctx.body !== undefined && ctx.body !== null) {
      cacheHeaders();
      if (noneMatch(ifNoneMatch, etag)) {
        ctx.status = 304;
        ctx.body = null;
      }
    }
  };
}
