import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';

const require = createRequire(import.meta.url);
const own = (name: string) => fileURLToPath(new URL(`./assets/${name}`, import.meta.url));

/**
 * The UI's static files, all served from this package (nothing from a CDN; the UI works
 * offline): htmx and its SSE extension from their npm packages, our stylesheet and script.
 * Served at /ui/assets/<name> with a long cache (the names change with the package version).
 */
const FILES: Record<string, { path: () => string; type: string }> = {
  'htmx.min.js': { path: () => require.resolve('htmx.org/dist/htmx.min.js'), type: 'application/javascript; charset=utf-8' },
  'sse.js': { path: () => require.resolve('htmx-ext-sse/dist/sse.min.js'), type: 'application/javascript; charset=utf-8' },
  'app.css': { path: () => own('app.css'), type: 'text/css; charset=utf-8' },
  'app.js': { path: () => own('app.js'), type: 'application/javascript; charset=utf-8' },
  'library.js': { path: () => own('library.js'), type: 'application/javascript; charset=utf-8' },
};

const cache = new Map<string, Buffer>();

export function registerAssets(r: Router): void {
  r.get('/ui/assets/:name', (ctx) => {
    const f = FILES[ctx.params.name!];
    if (!f) {
      ctx.status = 404;
      ctx.body = { error: 'not_found', message: `No UI asset ${ctx.params.name}.` };
      return;
    }
    let bytes = cache.get(ctx.params.name!);
    if (!bytes) {
      bytes = readFileSync(f.path());
      cache.set(ctx.params.name!, bytes);
    }
    ctx.type = f.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = bytes;
  });
}
