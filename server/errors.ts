import type { Context, Next } from 'koa';
import { isRefdeskError } from '../core/errors.ts';
import type { Logger } from '../core/contracts.ts';
import { ApiError } from './api/api-error.ts';

/**
 * Codes of a PostgreSQL store's errors (plugins/store-postgres/pool.ts PostgresStoreError) that
 * mean this node cannot use its database right now: the request is answered 503
 * `database_unavailable` (retry, or another node), never 500. Its other codes (a failing
 * statement: `database_error`) are server errors, logged and answered 500.
 */
const DATABASE_UNAVAILABLE = new Set([
  'database_unavailable',
  'database_auth_failed',
  'database_not_found',
  'database_not_migrated',
  'database_newer',
  'migration_checksum_mismatch',
  'migration_out_of_order',
]);

/** A store's "database unavailable" error (by name and code: server/ does not import plugins). */
function databaseUnavailable(e: unknown): e is Error & { code: string } {
  return e instanceof Error && e.name === 'PostgresStoreError' && DATABASE_UNAVAILABLE.has((e as { code?: unknown }).code as string);
}

/** One log line per code and minute: an outage fails every request, the log needs it once. */
function outageLog(logger: Logger): (e: Error & { code: string }) => void {
  const last = new Map<string, number>();
  return (e) => {
    const now = Date.now();
    if (now - (last.get(e.code) ?? -Infinity) < 60_000) return;
    last.set(e.code, now);
    logger.warn('request failed: the database is unavailable', { code: e.code, error: e.message });
  };
}

/**
 * Every error leaves as JSON {error, message} (a 301 adds redirectUrl, a 429 its headers) and is
 * never cached; a database that cannot be used is 503 `database_unavailable`; unexpected errors
 * are logged and answered 500.
 */
export function errorMiddleware(logger: Logger) {
  const logOutage = outageLog(logger);
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 501 && ctx.body === undefined) {
        // The router's answer to a method it does not know (PROPFIND, PURGE...): a client error,
        // like any other method the path does not take (405), or an unknown path (404).
        ctx.status = ctx.response.get('Allow') ? 405 : 404;
      }
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { error: 'not_found', message: `No route for ${ctx.method} ${ctx.path}. The API is described at /api/openapi.json.` };
      } else if (ctx.status === 405 && ctx.body === undefined) {
        ctx.body = { error: 'method_not_allowed', message: `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow') || 'none'}.` };
      }
    } catch (e) {
      ctx.set('Cache-Control', 'no-store');
      if (isRefdeskError(e)) {
        ctx.status = e.status;
        ctx.body = { error: e.code, message: e.message, ...(e instanceof ApiError ? e.details : {}) };
        if (e instanceof ApiError) ctx.set(e.headers);
        return;
      }
      if (databaseUnavailable(e)) {
        logOutage(e);
        ctx.status = 503;
        ctx.set('Retry-After', '5');
        ctx.body = { error: 'database_unavailable', message: 'This server cannot reach its database right now; retry in a few seconds.' };
        return;
      }
      const status = (e as { status?: number; expose?: boolean }).status;
      if (status && status >= 400 && status < 500) {
        ctx.status = status;
        ctx.body = { error: status === 413 ? 'too_large' : status === 405 ? 'method_not_allowed' : 'invalid_request', message: (e as Error).message };
        return;
      }
      logger.error('request failed', { path: ctx.path, error: (e as Error).message, stack: (e as Error).stack });
      ctx.status = 500;
      ctx.body = { error: 'internal_error', message: 'Internal server error. The operator can find details in the server log.' };
    }
  };
}
