import Router from '@koa/router';

/**
 * Every route group's router: paths match exactly as written, case and trailing slash included,
 * like /ping and /mcp (compared as strings) and the public API's auth middleware (a
 * case-sensitive prefix test). `/API/V2/CONTEXT` or `/api/v2/context/` is an unknown path (404),
 * never a route that skipped the auth middleware.
 */
export function newRouter(prefix?: string): Router {
  return new Router({ sensitive: true, strict: true, ...(prefix ? { prefix } : {}) });
}
