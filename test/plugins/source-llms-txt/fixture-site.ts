/**
 * A test site on 127.0.0.1 serving the frozen llms.txt fixtures (deno, fasthtml), their links
 * rewritten to this server: docs.deno.com pages at the root, other hosts under /ext/<host>/.
 * Pages are generated from their path, in the shapes real sites have:
 * - most pages have a markdown copy at `<page>.md` (or `<dir>/index.html.md`);
 * - pages under /deploy/ exist only as HTML (their .md variant is a 404);
 * - /runtime/contributing/style_guide is missing (404 everywhere);
 * - /llms-full.txt, /llms-full-guide.txt, /llms-summary.txt are missing too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import type { TestContext } from 'node:test';
import { CORPORA_DIR } from '../../helpers/corpora.ts';
import { send, startServer, type TestServer } from '../../helpers/route-server.ts';

export const FIXTURES = join(CORPORA_DIR, 'fixtures');

export function fixture(path: string): string {
  return readFileSync(join(FIXTURES, path), 'utf8');
}

/** The fixture with its absolute links pointing at `base`. */
export function rewriteLinks(text: string, base: string): string {
  return text.replace(/https:\/\/([a-z0-9.-]+)(?=[/)\s'"])/gi, (_m, host: string) => (host === 'docs.deno.com' ? base : `${base}/ext/${host}`));
}

export interface SiteOptions {
  /** Replace the llms.txt served at /llms.txt. */
  llmsTxt?: string;
  /** Extra handlers by exact path, tried first. */
  routes?: Record<string, (res: ServerResponse, req: { headers: Record<string, string | string[] | undefined> }) => void>;
}

function words(path: string): string {
  return path.replace(/\.(html\.md|md|html)$/, '').split(/[/_-]+/).filter(Boolean).join(' ');
}

export function markdownPage(path: string): string {
  const name = words(path);
  return `# Page ${name}\n\nThis page explains ${name} in the Deno documentation.\n\n## Example\n\nRun it like this:\n\n\`\`\`ts\nconsole.log("${name}");\n\`\`\`\n`;
}

export function htmlPage(path: string): string {
  const name = words(path);
  return `<!doctype html><html><head><title>${name} | Deno</title><script>window.track = 1;</script></head><body>
<nav><a href="/">Home</a> navigation menu</nav>
<main><h1>HTML ${name}</h1><p>The deploy guide for ${name} as an HTML page.</p>
<pre><code class="language-bash">deno deploy --prod</code></pre></main>
<footer>Copyright footer</footer></body></html>`;
}

/** Starts the deno site; /llms.txt is the deno fixture (or `opts.llmsTxt`). */
export async function startDenoSite(t: TestContext | undefined, opts: SiteOptions = {}): Promise<TestServer> {
  let base = '';
  const server = await startServer((req, res, url) => {
    const p = url.pathname;
    const extra = opts.routes?.[p];
    if (extra) return extra(res, req);
    if (p === '/llms.txt') return send(res, 200, opts.llmsTxt ?? rewriteLinks(fixture('denoland-docs/llms.txt'), base), 'text/plain; charset=utf-8');
    if (p.startsWith('/llms-') || p.includes('style_guide')) return send(res, 404, 'not found');
    const page = p.endsWith('.md') ? p.replace(/(\/index\.html)?\.md$/, '') : p.replace(/\/$/, '');
    if (p.startsWith('/deploy/') || p.startsWith('/ext/github.com/')) {
      if (p.endsWith('.md')) return send(res, 404, 'not found');
      return send(res, 200, htmlPage(page), 'text/html; charset=utf-8');
    }
    if (p.startsWith('/ext/deno.com/') && p.endsWith('.md')) return send(res, 200, markdownPage(page), 'text/markdown; charset=utf-8');
    if (p.endsWith('.md')) return send(res, 200, markdownPage(page), 'text/markdown; charset=utf-8');
    return send(res, 200, htmlPage(page), 'text/html; charset=utf-8');
  }, t);
  base = server.base;
  return server;
}
