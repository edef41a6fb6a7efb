import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { createFetch } from '../../../core/services.ts';
import { runSource } from '../../../core/testing/run-source.ts';
import { WebsiteSource } from '../../../plugins/source-website/website-source.ts';
import { send, startServer } from '../../helpers/route-server.ts';

const page = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><nav>Menu</nav><main><h1>${title}</h1><p>${body}</p></main></body></html>`;

test('a gzip sitemap named in robots.txt (sitemap.xml.gz, no Content-Encoding) seeds pages no link reaches', async (t) => {
  let origin = '';
  const server = await startServer((_req, res, url) => {
    switch (url.pathname) {
      case '/robots.txt':
        return send(res, 200, `User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml.gz\n`);
      case '/sitemap.xml.gz':
        return send(
          res,
          200,
          gzipSync(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${origin}/docs/hidden</loc></url></urlset>`),
          'application/gzip',
        );
      case '/docs/':
        return send(res, 200, page('Start', 'The start page links nowhere.'), 'text/html; charset=utf-8');
      case '/docs/hidden':
        return send(res, 200, page('Hidden', 'Only the gzip sitemap lists this page.'), 'text/html; charset=utf-8');
      default:
        return send(res, 404, 'not found');
    }
  }, t);
  origin = server.base;
  const source = new WebsiteSource({ delayMs: 0, retries: 0, retryDelayMs: 10 }, { fetch: createFetch() });
  const { documents, logs } = await runSource(source, { url: `${origin}/docs/` });
  const hidden = documents.find((d) => d.content.includes('Only the gzip sitemap lists this page'));
  assert.ok(hidden, `pages: ${documents.map((d) => d.path).join(', ')}; log: ${logs.map((l) => l.message).join(' | ')}`);
  assert.ok(logs.some((l) => /Sitemaps gave 1 URLs in scope/.test(l.message)));
});
