import type { Context, Next } from 'koa';

/**
 * The UI's Content-Security-Policy: no inline scripts or styles (htmx's indicator styles are
 * turned off in layout.eta's htmx-config meta), everything from this origin, no framing.
 */
export const UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Security headers for every UI page, fragment and asset. */
export async function uiSecurityHeaders(ctx: Context, next: Next): Promise<void> {
  await next();
  ctx.set('Content-Security-Policy', UI_CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
}
