import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PreviousDocument, SourceDocument } from '../../../core/contracts.ts';
import { createFetch } from '../../../core/services.ts';
import { runSource, type RunSourceResult } from '../../../core/testing/run-source.ts';
import { MarkdownChunker } from '../../../plugins/chunker-markdown/markdown-chunker.ts';
import { WebsiteSource } from '../../../plugins/source-website/website-source.ts';
import { hasCorpora } from '../../helpers/corpora.ts';
import { CHROME_TEXT, PAGES, SITEMAP_ONLY, slug, startSite, type TestSite } from './site.ts';

const source = () => new WebsiteSource({ delayMs: 0, retries: 0, retryDelayMs: 10 }, { fetch: createFetch() });
const byPath = (docs: SourceDocument[]) => new Map(docs.map((d) => [d.path, d]));

describe('crawling a documentation site on 127.0.0.1', { skip: hasCorpora ? false : 'shared corpora not present' }, () => {
  let site: TestSite;
  let first: RunSourceResult;
  let docs: Map<string, SourceDocument>;
  let firstHits: string[];

  before(async () => {
    site = await startSite();
    first = await runSource(source(), { url: `${site.origin}/docs/`, exclude: ['/docs/slow'] });
    docs = byPath(first.documents);
    firstHits = [...site.hits];
  });
  after(() => site.close());

  test("the library is named as the start page names its site (the site part of its <title>)", () => {
    assert.equal(first.meta.title, 'Hono Test Site');
  });

  test('every page of the site is read once, at the path of its URL, including one only the sitemap lists', () => {
    const expected = ['docs/index', ...PAGES.map((p) => `docs/${p}`), `docs/${SITEMAP_ONLY}`, 'docs/languages'].sort();
    assert.deepEqual([...docs.keys()].sort(), expected);
    for (const d of first.documents) {
      assert.equal(d.format, 'markdown');
      assert.equal(d.url, `${site.origin}/${d.path === 'docs/index' ? 'docs/' : d.path}`);
      assert.match(d.hash!, /^[0-9a-f]{64}$/);
    }
    assert.equal(docs.get('docs/api/routing')!.title, 'Routing');
  });

  test('robots.txt, scope and exclude patterns are obeyed: nothing outside is ever requested', () => {
    const requested = firstHits.map((h) => h.replace(/^GET /, ''));
    assert.equal(requested[0], '/robots.txt');
    for (const p of requested) {
      assert.ok(!p.startsWith('/docs/private/'), `${p} is disallowed by robots.txt`);
      assert.ok(!p.endsWith('.pdf'), `${p} is disallowed by robots.txt`);
      assert.ok(!p.startsWith('/blog/'), `${p} is out of scope`);
      assert.notEqual(p, '/docs/slow', 'excluded');
    }
    assert.ok(requested.includes('/sitemap.xml') && requested.includes('/sitemaps/docs.xml'), 'the sitemap index and its sitemap are read');
    const logs = first.logs.map((l) => l.message);
    assert.ok(logs.some((m) => /private\/secret: disallowed by robots\.txt/.test(m)));
    assert.ok(logs.some((m) => /Not following http:\/\/127\.0\.0\.1:\d+\/blog\/: outside \/docs\//.test(m)));
    assert.ok(logs.some((m) => /moved-out: redirects to .*\/blog\/moved, outside \/docs\//.test(m)), 'a redirect out of scope is not followed');
  });

  test('each URL is fetched at most once: tracking parameters and fragments are ignored, redirects and canonical URLs count as read', () => {
    const count = (p: string) => firstHits.filter((h) => h === `GET ${p}`).length;
    for (const p of ['/docs/', '/docs/api/hono', '/docs/concepts/motivation', '/docs/old/motivation', '/docs/latest/api/request']) assert.equal(count(p), 1, p);
    // The canonical page may have been fetched ahead (concurrency) but is not read twice.
    assert.ok(count('/docs/api/request') <= 1);
    assert.ok(!firstHits.some((h) => h.includes('utm_source')));
  });

  test('a redirect records its final URL; a canonical link gives the document path', () => {
    const motivation = docs.get('docs/concepts/motivation')!;
    assert.equal(motivation.url, `${site.origin}/docs/concepts/motivation`);
    assert.equal(motivation.meta!.url, `${site.origin}/docs/old/motivation`);
    const request = docs.get('docs/api/request')!;
    assert.equal(request.url, `${site.origin}/docs/api/request`);
    assert.equal(request.meta!.url, `${site.origin}/docs/latest/api/request`);
    assert.ok(!docs.has('docs/latest/api/request'));
    const logs = first.logs.map((l) => l.message);
    assert.ok(logs.some((m) => /old\/routing: redirected to .*\/docs\/api\/routing, already read as docs\/api\/routing/.test(m)));
  });

  test('a page served at two URLs is kept once; a 404 and a non-page are skipped with their reason', () => {
    assert.ok(!docs.has('docs/print/context'));
    const logs = first.logs.map((l) => `${l.level} ${l.message}`);
    assert.ok(logs.some((m) => /print\/context: same content as .*\/docs\/api\/context/.test(m)));
    assert.ok(logs.some((m) => /^warn Skipped .*\/docs\/missing: HTTP 404/.test(m)));
    assert.ok(logs.some((m) => /logo\.png: not a page \(image\/png\)/.test(m)));
    assert.ok(first.progress.length >= docs.size && first.progress.at(-1)!.files === docs.size);
  });

  test('the content is the article only: no navigation, sidebar, table of contents, cookie banner, edit link or footer', () => {
    for (const d of first.documents) {
      for (const chrome of CHROME_TEXT) assert.ok(!d.content.includes(chrome), `${d.path} contains "${chrome}"`);
      assert.ok(!/window\.__THEME__|\.sidebar \{/.test(d.content), `${d.path} contains a script or style`);
    }
    // The article text itself is all there.
    const routing = docs.get('docs/api/routing')!.content;
    assert.ok(routing.startsWith('# Routing {#routing}\n'));
    assert.match(routing, /Routing of Hono is flexible and intuitive/);
  });

  test('code blocks keep their language, from the code class or from a highlighter wrapper', () => {
    // api/hono puts the language on a VitePress-style wrapper with a label and a copy button.
    const hono = docs.get('docs/api/hono')!.content;
    assert.match(hono, /\n```ts\nimport \{ Hono \} from 'hono'/);
    assert.ok(!/^ts$/m.test(hono), 'the language label is not left as text');
    // api/routing has <code class="language-ts">.
    assert.match(docs.get('docs/api/routing')!.content, /\n```ts\n/);
    const langs = docs.get('docs/languages')!.content;
    assert.match(langs, /```python\nimport hono_client\nclient = hono_client\.connect\(\)\n```/);
    assert.match(langs, /```bash\ncurl -s http:\/\/localhost:8787\/ \| jq \.\n```/);
    assert.match(langs, /```go\nfmt\.Println\("hono"\)\n```/);
    assert.match(langs, /```\n200 OK\n```/, 'language-text is a block without a language');
  });

  test('headings keep their anchors, and the markdown chunker links snippets to page#section', () => {
    const routing = docs.get('docs/api/routing')!;
    for (const h of ['Basic', 'Path Parameter', 'Optional Parameter', 'Chained route']) {
      assert.ok(routing.content.includes(`\n## ${h} {#${slug(h)}}\n`), h);
    }
    const langs = docs.get('docs/languages')!.content;
    for (const line of ['# Languages {#languages}', '## Python client {#python-client}', '## Shell usage {#shell-usage}', '## Go usage {#go-usage}']) {
      assert.ok(langs.includes(`${line}\n`), line);
    }
    assert.ok(!/[¶]|\u200b/.test(langs), 'permalink symbols are dropped');
    const snippets = new MarkdownChunker({ maxInfoTokens: 400, maxDescriptionChars: 600 }).chunk(routing);
    const basic = snippets.find((s) => s.breadcrumb.at(-1) === 'Basic')!;
    assert.equal(basic.anchor, 'basic');
    assert.equal(basic.sourceUrl, `${site.origin}/docs/api/routing#basic`);
    const python = new MarkdownChunker({ maxInfoTokens: 400, maxDescriptionChars: 600 }).chunk(docs.get('docs/languages')!).find((s) => s.language === 'python')!;
    assert.equal(python.sourceUrl, `${site.origin}/docs/languages#python-client`);
  });

  test('tables come out as GFM tables', () => {
    const presets = docs.get('docs/api/presets')!.content;
    assert.match(presets, /\n\| Preset \| Suitable platforms \|\n\| --- \| --- \|\n\| `hono` \| This is highly recommended/);
    assert.match(docs.get('docs/languages')!.content, /\| Runtime \| Command \|\n\| --- \| --- \|\n\| Node\.js \| `npm run dev` \|/);
  });

  test('a refresh sends If-None-Match / If-Modified-Since and marks 304 pages unchanged; edited pages come back whole', async () => {
    const previous = new Map<string, PreviousDocument>(first.documents.map((d) => [d.path, { hash: d.hash!, meta: d.meta! }]));
    assert.ok(first.documents.every((d) => d.meta!.etag && d.meta!.lastModified === 'Wed, 01 Jan 2025 00:00:00 GMT'));
    site.edit('concepts/middleware', '# Middleware\n\n## Onion {#onion}\n\nThe middleware runs like an onion, edited for the refresh test.\n');
    site.conditional.length = 0;
    const second = await runSource(source(), { url: `${site.origin}/docs/`, exclude: ['/docs/slow'] }, { previous });
    const again = byPath(second.documents);
    assert.deepEqual([...again.keys()].sort(), [...docs.keys()].sort(), 'links of unchanged pages are still followed');
    const changed = again.get('docs/concepts/middleware')!;
    assert.equal(changed.unchanged, undefined);
    assert.match(changed.content, /edited for the refresh test/);
    assert.notEqual(changed.hash, docs.get('docs/concepts/middleware')!.hash);
    const unchanged = second.documents.filter((d) => d.unchanged);
    assert.equal(unchanged.length, docs.size - 1);
    for (const d of unchanged) {
      assert.equal(d.content, '');
      assert.equal(d.hash, previous.get(d.path)!.hash);
      assert.deepEqual(d.meta, previous.get(d.path)!.meta);
    }
    assert.ok(site.conditional.length >= docs.size);
    assert.ok(site.conditional.every((c) => c.ifNoneMatch && c.ifModifiedSince === 'Wed, 01 Jan 2025 00:00:00 GMT'));
    assert.ok(second.logs.some((l) => /Unchanged .*\/docs\/api\/hono \(HTTP 304\) -> docs\/api\/hono/.test(l.message)));
  });
});
