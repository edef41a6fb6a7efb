/**
 * A documentation website served on 127.0.0.1 for the crawler tests, built from the hono corpus:
 * each markdown page rendered to HTML (micromark + GFM) inside realistic chrome (site header and
 * nav, a sidebar, a table of contents, a cookie banner, "edit this page" links, a footer), with
 * VitePress-style heading anchors and code blocks, robots.txt, a sitemap index, redirects, a 404,
 * a slow page, a duplicate page, canonical links, ETag / Last-Modified and 304s.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { corpusFile } from '../../helpers/corpora.ts';
import { listenOnLoopback } from '../../helpers/listen.ts';

/** Hono pages served under /docs/<section>/<name> (from docs/<section>/<name>.md). */
export const PAGES = [
  'api/hono', 'api/routing', 'api/context', 'api/request', 'api/exception', 'api/presets',
  'concepts/motivation', 'concepts/routers', 'concepts/middleware', 'concepts/web-standard', 'concepts/developer-experience',
  'middleware/builtin/basic-auth', 'middleware/builtin/bearer-auth', 'middleware/builtin/cors', 'middleware/builtin/csrf',
  'middleware/builtin/etag', 'middleware/builtin/logger', 'middleware/builtin/secure-headers', 'middleware/builtin/timeout',
  'middleware/builtin/language', 'middleware/builtin/jwt', 'middleware/builtin/compress',
];
/** Listed in the sitemap only: no page links to it. */
export const SITEMAP_ONLY = 'concepts/stacks';

/** Chrome text that must never reach a document. */
export const CHROME_TEXT = ['Hono Test Site', 'Documentation menu', 'We use cookies', 'Accept all cookies', 'Hono Docs Test Footer', 'Edit this page on GitHub', 'On this page'];

export function slug(text: string): string {
  return text.toLowerCase().trim().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s+/g, '-');
}

function stripTags(html: string): string {
  return html.replace(/<[^>]+>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
}

/** Markdown to HTML the way a VitePress theme would present it. */
function renderMarkdown(md: string, variant: number): string {
  let html = micromark(md.replace(/^---\n[\s\S]*?\n---\n/, ''), { extensions: [gfm()], htmlExtensions: [gfmHtml()], allowDangerousHtml: true });
  // Headings get ids and a permalink anchor.
  html = html.replace(/<h([1-6])>([\s\S]*?)<\/h\1>/g, (_m, level: string, inner: string) => {
    const id = slug(stripTags(inner));
    return `<h${level} id="${id}" tabindex="-1">${inner} <a class="header-anchor" href="#${id}" aria-label="Permalink to &quot;${id}&quot;">&#8203;</a></h${level}>`;
  });
  // Code blocks: every other page puts the language on a wrapper, with a label and a copy button.
  if (variant % 2 === 1) {
    html = html.replace(/<pre><code class="language-([\w-]+)">/g, (_m, lang: string) => `<div class="language-${lang} vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">${lang}</span><pre class="shiki"><code>`);
    html = html.replace(/<\/code><\/pre>/g, '</code></pre></div>');
  }
  return html;
}

export interface Link {
  href: string;
  text: string;
}

function chrome(opts: { title: string; body: string; sidebar: Link[]; canonical?: string; path: string }): string {
  const headings = [...opts.body.matchAll(/<h2 id="([^"]+)"[^>]*>([\s\S]*?) <a/g)].map((m) => `<li><a href="#${m[1]}">${stripTags(m[2])}</a></li>`);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${opts.title} | Hono Test Site</title>
  ${opts.canonical ? `<link rel="canonical" href="${opts.canonical}">` : ''}
  <link rel="stylesheet" href="/assets/style.css">
  <style>.sidebar { width: 20rem }</style>
  <script>window.__THEME__ = { sidebar: 'Documentation menu' };</script>
</head>
<body>
  <div id="cookie-consent" class="cookie-banner"><p>We use cookies to make this site work.</p><button>Accept all cookies</button></div>
  <header class="site-header">
    <a class="logo" href="/docs/">Hono Test Site</a>
    <nav class="top-nav">
      <a href="/docs/">Docs</a> <a href="/blog/">Blog</a> <a href="https://github.com/honojs/hono">GitHub</a>
    </nav>
  </header>
  <div class="layout">
    <aside class="sidebar">
      <p class="sidebar-title">Documentation menu</p>
      <ul>${opts.sidebar.map((l) => `<li><a href="${l.href}">${l.text}</a></li>`).join('')}</ul>
    </aside>
    <main class="content">
      <div class="vp-doc">
        ${opts.body}
      </div>
      <div class="edit-info"><a href="https://github.com/honojs/website/edit/main/docs/${opts.path}.md">Edit this page on GitHub</a></div>
      <nav class="prev-next"><a href="/docs/">Previous page</a></nav>
    </main>
    <div class="aside-outline"><div class="toc"><p>On this page</p><ul>${headings.join('')}</ul></div></div>
  </div>
  <footer class="site-footer"><p>Released under the MIT License. Hono Docs Test Footer.</p></footer>
  <script src="/assets/app.js"></script>
</body>
</html>`;
}

export interface SiteOptions {
  /** robots.txt body; `{origin}` is replaced. */
  robots?: string;
  /** Delay of /docs/slow, in ms. */
  slowMs?: number;
  /** Status of /robots.txt when not 200. */
  robotsStatus?: number;
}

export interface TestSite {
  origin: string;
  /** Every request the server got: `METHOD /path?query`. */
  hits: string[];
  /** When each of those arrived (ms since the epoch). */
  hitTimes: number[];
  /** Requests with their conditional headers. */
  conditional: Array<{ path: string; ifNoneMatch?: string; ifModifiedSince?: string }>;
  /** Replaces a page's markdown (its ETag changes with it). */
  edit(page: string, markdown: string): void;
  close(): Promise<void>;
}

const LAST_MODIFIED = 'Wed, 01 Jan 2025 00:00:00 GMT';

/** Starts the site on 127.0.0.1 (a free port). */
export async function startSite(options: SiteOptions = {}): Promise<TestSite> {
  const markdown = new Map<string, string>();
  for (const p of [...PAGES, SITEMAP_ONLY]) markdown.set(p, corpusFile('hono', `docs/${p}.md`));
  markdown.set('index', corpusFile('hono', 'docs/index.md'));

  const sidebar: Link[] = [
    { href: '/docs/', text: 'Introduction' },
    { href: '/docs/old/motivation', text: 'Motivation (old link)' },
    { href: '/docs/latest/api/request', text: 'Request (latest)' },
    ...PAGES.map((p) => ({ href: `/docs/${p}`, text: p.split('/').pop()! })),
    { href: '/docs/old/routing', text: 'Routing (old link)' },
    { href: '/docs/print/context', text: 'Context (print view)' },
    { href: '/docs/missing', text: 'Missing page' },
    { href: '/docs/slow', text: 'Slow page' },
    { href: '/docs/private/secret', text: 'Private' },
    { href: '/docs/languages', text: 'Languages' },
    { href: '/docs/moved-out', text: 'Moved out' },
    { href: '/docs/logo.png', text: 'Logo' },
    { href: '/docs/api/hono?utm_source=sidebar#top', text: 'Hono again' },
  ];

  const hits: string[] = [];
  const hitTimes: number[] = [];
  const conditional: TestSite['conditional'] = [];
  let origin = '';

  const rendered = new Map<string, string>();
  const page = (key: string, path: string, extra: { canonical?: string } = {}): string => {
    const cacheKey = `${key} ${path} ${extra.canonical ?? ''}`;
    const cached = rendered.get(cacheKey);
    if (cached !== undefined) return cached;
    const md = markdown.get(key)!;
    const title = stripTags((/^#\s+(.*)$/m.exec(md) ?? ['', key])[1]);
    const html = chrome({ title, body: renderMarkdown(md, PAGES.indexOf(key) + 1), sidebar, path, ...extra });
    rendered.set(cacheKey, html);
    return html;
  };

  // A page in the Sphinx / highlight.js styles, with explicit anchors that are not slugs.
  const languages = chrome({
    title: 'Languages',
    path: 'languages',
    sidebar,
    body: `<h1 id="languages">Languages<a class="headerlink" href="#languages" title="Link to this heading">¶</a></h1>
<section id="python-client"><h2>Python client<a class="headerlink" href="#python-client">¶</a></h2>
<div class="highlight-python notranslate"><div class="highlight"><pre><span class="kn">import</span> <span class="nn">hono_client</span>
<span class="n">client</span> <span class="o">=</span> <span class="n">hono_client</span><span class="o">.</span><span class="n">connect</span><span class="p">()</span></pre></div></div></section>
<h2><a id="shell-usage"></a>Shell usage</h2>
<pre><code class="hljs lang-bash">curl -s http://localhost:8787/ | jq .</code></pre>
<h2 id="go-usage">Go usage</h2>
<pre data-language="go"><code>fmt.Println("hono")</code></pre>
<h3 id="plain-output">Plain output</h3>
<pre><code class="language-text">200 OK</code></pre>
<table><thead><tr><th>Runtime</th><th>Command</th></tr></thead><tbody><tr><td>Node.js</td><td><code>npm run dev</code></td></tr><tr><td>Bun</td><td><code>bun run dev</code></td></tr></tbody></table>`,
  });

  const respond = (req: IncomingMessage, res: import('node:http').ServerResponse, status: number, type: string, body: string, cache = true) => {
    const etag = `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`;
    if (cache) {
      res.setHeader('etag', etag);
      res.setHeader('last-modified', LAST_MODIFIED);
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304).end();
        return;
      }
    }
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };

  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    hitTimes.push(Date.now());
    const url = new URL(req.url!, 'http://site');
    const path = url.pathname;
    if (req.headers['if-none-match'] || req.headers['if-modified-since']) {
      conditional.push({ path, ifNoneMatch: req.headers['if-none-match'] as string | undefined, ifModifiedSince: req.headers['if-modified-since'] as string | undefined });
    }
    const html = 'text/html; charset=utf-8';
    if (path === '/robots.txt') {
      if (options.robotsStatus) return void res.writeHead(options.robotsStatus).end('unavailable');
      const body = (options.robots ?? `# Test robots
User-agent: BadBot
Disallow: /

User-agent: *
Disallow: /docs/private/
Allow: /docs/private/public-note
Disallow: /*.pdf$

Sitemap: {origin}/sitemap.xml
`).replaceAll('{origin}', origin);
      return respond(req, res, 200, 'text/plain', body, false);
    }
    if (path === '/sitemap.xml') {
      return respond(req, res, 200, 'application/xml', `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>${origin}/sitemaps/docs.xml</loc></sitemap>
  <sitemap><loc>${origin}/sitemaps/missing.xml</loc></sitemap>
</sitemapindex>`, false);
    }
    if (path === '/sitemaps/docs.xml') {
      const urls = [`${origin}/docs/`, `${origin}/docs/api/hono`, `${origin}/docs/${SITEMAP_ONLY}`, `${origin}/blog/sitemap-post`, `${origin}/docs/private/from-sitemap`, `${origin}/docs/manual.pdf`];
      return respond(req, res, 200, 'application/xml', `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${urls.map((u) => `  <url><loc>${u.replace(/&/g, '&amp;')}</loc><lastmod>2025-01-01</lastmod></url>`).join('\n')}
</urlset>`, false);
    }
    if (path === '/docs' ) return void res.writeHead(301, { location: '/docs/' }).end();
    if (path === '/docs/') return respond(req, res, 200, html, page('index', 'index'));
    if (path === '/docs/old/motivation') return void res.writeHead(301, { location: '/docs/concepts/motivation' }).end();
    if (path === '/docs/old/routing') return void res.writeHead(301, { location: '/docs/api/routing' }).end();
    if (path === '/docs/moved-out') return void res.writeHead(302, { location: '/blog/moved' }).end();
    if (path === '/docs/latest/api/request') return respond(req, res, 200, html, page('api/request', 'api/request', { canonical: '/docs/api/request' }));
    if (path === '/docs/print/context') return respond(req, res, 200, html, page('api/context', 'api/context'));
    if (path === '/docs/languages') return respond(req, res, 200, html, languages);
    if (path === '/docs/logo.png') return respond(req, res, 200, 'image/png', 'PNG-not-really', false);
    if (path === '/docs/slow') {
      const body = chrome({ title: 'Slow', path: 'slow', sidebar, body: '<h1 id="slow">Slow page</h1><p>This page takes its time.</p>' });
      const timer = setTimeout(() => respond(req, res, 200, html, body), options.slowMs ?? 3000);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    const key = path.replace(/^\/docs\//, '');
    if (path.startsWith('/docs/') && markdown.has(key)) return respond(req, res, 200, html, page(key, key));
    res.writeHead(404, { 'content-type': html }).end('<!doctype html><title>Not found</title><h1>404</h1>');
  });
  origin = await listenOnLoopback(server);
  return {
    origin,
    hits,
    hitTimes,
    conditional,
    edit(key, md) {
      markdown.set(key, md);
      rendered.clear();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The markdown of one corpus page, as the site serves it (for comparisons). */
export function corpusPage(key: string): string {
  return corpusFile('hono', `docs/${key}.md`);
}
