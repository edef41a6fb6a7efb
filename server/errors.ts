import type { Context, Next } from 'koa';
import { isRefdeskError } from '../core/errors.ts';
import type { Logger } from '../core/contracts.ts';
import { ApiError } from './api/api-error.ts';

/**
 * Every error leaves as JSON {error, message} (a 301 adds redirectUrl, a 429 its headers) and is
 * never cached; unexpected ones are logged and answered 500.
 */
export function errorMiddleware(logger: Logger) {
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
