import { test } from 'node:test';
import assert from 'node:assert/strict';
import plugin from '../../../plugins/source-website/index.ts';
import { parseRobots, robotsAgentName } from '../../../plugins/source-website/robots.ts';
import { Scope, compilePattern, pathPrefix } from '../../../plugins/source-website/scope.ts';
import { parseSitemap } from '../../../plugins/source-website/sitemap.ts';
import { documentPath, normalizeUrl, websiteName } from '../../../plugins/source-website/urls.ts';
import { extractPage } from '../../../plugins/source-website/extract.ts';
import type { SourceDefinition } from '../../../core/define.ts';

const base = new URL('https://docs.example.com/robots.txt');

test('robots.txt: our own group wins over *, longest match decides, Allow wins a tie, * and $ work', () => {
  const text = `User-agent: *
Disallow: /

User-agent: Refdesk
User-agent: other
Disallow: /private/
Allow: /private/open
Disallow: /*.pdf$
Disallow: /tmp*/cache
Allow: /same
Disallow: /same
Crawl-delay: 1.5

Sitemap: /sitemap-a.xml
Sitemap: https://cdn.example.com/sitemap-b.xml
`;
  assert.equal(robotsAgentName('Refdesk/1.0 (documentation indexer)'), 'refdesk');
  const r = parseRobots(text, 'refdesk', base);
  assert.ok(r.allows('/docs/intro'));
  assert.ok(!r.allows('/private/x'));
  assert.ok(r.allows('/private/open/page'), 'the longer Allow wins');
  assert.ok(!r.allows('/files/manual.pdf'));
  assert.ok(r.allows('/files/manual.pdf?download=1'), '$ anchors the end');
  assert.ok(!r.allows('/tmp-1/cache/x'));
  assert.ok(r.allows('/same'), 'Allow wins a tie');
  assert.ok(r.allows('/robots.txt'));
  assert.equal(r.crawlDelayMs, 1500);
  assert.deepEqual(r.sitemaps, ['https://docs.example.com/sitemap-a.xml', 'https://cdn.example.com/sitemap-b.xml']);
  // Another agent falls back to the * group.
  const other = parseRobots(text, 'somebot', base);
  assert.ok(!other.allows('/docs/intro'));
  assert.equal(other.crawlDelayMs, null);
  // No groups, comments and junk: everything allowed.
  assert.ok(parseRobots('# nothing here\n<html>oops</html>\n', 'refdesk', base).allows('/a'));
  assert.ok(parseRobots('User-agent: *\nDisallow:\n', 'refdesk', base).allows('/a'), 'an empty Disallow allows all');
});

test('scope: same origin and path prefix by default; include replaces the prefix; exclude always wins', () => {
  assert.equal(pathPrefix(new URL('https://x.dev/learn')), '/learn');
  assert.equal(pathPrefix(new URL('https://x.dev/docs/')), '/docs/');
  assert.equal(pathPrefix(new URL('https://x.dev/docs/index.html')), '/docs/');
  const s = new Scope(new URL('https://x.dev/learn'));
  assert.equal(s.refuse(new URL('https://x.dev/learn')), null);
  assert.equal(s.refuse(new URL('https://x.dev/learn/state')), null);
  assert.match(s.refuse(new URL('https://x.dev/learning'))!, /outside \/learn/);
  assert.match(s.refuse(new URL('https://y.dev/learn/a'))!, /another origin/);
  assert.match(s.refuse(new URL('http://x.dev/learn/a'))!, /another origin/);
  const t = new Scope(new URL('https://x.dev/docs/'), ['/docs/api/**', '/reference/*'], ['**/*.pdf', 're:[?&]print=1']);
  assert.equal(t.refuse(new URL('https://x.dev/docs/')), null, 'the start URL is always in scope');
  assert.equal(t.refuse(new URL('https://x.dev/docs/api/a/b')), null);
  assert.equal(t.refuse(new URL('https://x.dev/reference/hooks')), null);
  assert.match(t.refuse(new URL('https://x.dev/reference/hooks/deep'))!, /no include/);
  assert.match(t.refuse(new URL('https://x.dev/docs/guide'))!, /no include/);
  assert.match(t.refuse(new URL('https://x.dev/docs/api/manual.pdf'))!, /exclude/);
  assert.match(t.refuse(new URL('https://x.dev/docs/api/a?print=1'))!, /exclude/);
  // A glob without wildcards is a path prefix; a glob without a leading '/' matches anywhere.
  assert.ok(compilePattern('/docs/v1/', 'exclude')(new URL('https://x.dev/docs/v1/a/b')));
  assert.ok(compilePattern('changelog', 'exclude')(new URL('https://x.dev/docs/changelog/2024')));
  assert.ok(!compilePattern('changelog', 'exclude')(new URL('https://x.dev/docs/my-changelog')));
  assert.throws(() => compilePattern('re:([', 'include'), (e: any) => e.code === 'invalid_source' && /include pattern "re:\(\[" is not a valid regular expression/.test(e.message));
});

test('sitemaps: urlset, sitemap index with entities and CDATA, plain text lists', () => {
  const b = new URL('https://x.dev/sitemap.xml');
  assert.deepEqual(parseSitemap(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc> https://x.dev/a?x=1&amp;y=2 </loc></url><url><loc><![CDATA[https://x.dev/b]]></loc></url><url><loc>/c</loc></url></urlset>`, b), {
    kind: 'urls',
    locations: ['https://x.dev/a?x=1&y=2', 'https://x.dev/b', 'https://x.dev/c'],
  });
  assert.deepEqual(parseSitemap('<sitemapindex><sitemap><loc>https://x.dev/s1.xml</loc></sitemap></sitemapindex>', b), { kind: 'index', locations: ['https://x.dev/s1.xml'] });
  assert.deepEqual(parseSitemap('https://x.dev/a\nnot a url\nhttps://x.dev/b\n', b), { kind: 'urls', locations: ['https://x.dev/a', 'https://x.dev/b'] });
});

test('URLs: normalized keys, document paths, and the library ID a spec derives', () => {
  assert.equal(normalizeUrl('HTTPS://Docs.Example.com:443/a?utm_source=x&b=1#frag'), 'https://docs.example.com/a?b=1');
  assert.equal(normalizeUrl('https://x.dev/a?utm_medium=y'), 'https://x.dev/a');
  assert.equal(documentPath('https://x.dev/'), 'index');
  assert.equal(documentPath('https://x.dev/docs/'), 'docs/index');
  assert.equal(documentPath('https://x.dev/docs/api/hooks.html'), 'docs/api/hooks.html');
  assert.equal(documentPath('https://x.dev/search?q=1'), 'search?q=1');
  assert.equal(documentPath('https://x.dev/a/../b/./c'), 'b/c');
  const def = plugin.definitions[0] as SourceDefinition;
  assert.equal(def.kind, 'website');
  assert.equal(def.idPrefix, 'websites');
  assert.equal(def.deriveId!({ url: 'https://react.dev/learn' }), '/websites/react_dev_learn');
  assert.equal(def.deriveId!({ url: 'https://docs.example.com/' }), '/websites/docs_example_com');
  assert.equal(def.deriveId!({ url: 'https://docs.example.com/v2/Guide%20Book/index.html' }), '/websites/docs_example_com_v2_Guide_Book');
  assert.equal(websiteName('http://127.0.0.1:8080/docs/'), '127_0_0_1_8080_docs');
  assert.throws(() => def.deriveId!({ url: 'not a url' }), (e: any) => e.code === 'invalid_source' && /valid absolute URL/.test(e.message));
});

test('extraction without landmarks falls back to the densest block; noindex/nofollow and rel=nofollow are read', () => {
  const html = `<html><head><title>Guide · Site</title><meta name="robots" content="noindex, nofollow"></head><body>
<div class="top"><a href="/home">Home</a> <a href="/about">About</a></div>
<div class="wrap"><div class="left"><a href="/x">Menu x</a><br><a href="/y">Menu y</a></div>
<div class="text"><h2>Install</h2><p>Run the installer and follow the steps shown on the screen until it says it is done.</p>
<p>Then open the app and sign in with your account to start working on your first project.</p>
<pre><code class="lang-sh">npm i thing</code></pre><p><a href="/secret" rel="nofollow">hidden</a></p></div></div>
<div class="cookie-notice">We use cookies</div></body></html>`;
  const page = extractPage(html, 'https://site.dev/guide');
  assert.equal(page.title, 'Guide', 'no <h1>: the <title> without the site name');
  assert.ok(page.noindex && page.nofollow);
  assert.ok(page.markdown.startsWith('## Install\n\nRun the installer'), page.markdown);
  assert.match(page.markdown, /```sh\nnpm i thing\n```/);
  assert.ok(!/Menu x|Home|cookies/.test(page.markdown), page.markdown);
  assert.deepEqual(page.links, ['https://site.dev/home', 'https://site.dev/about', 'https://site.dev/x', 'https://site.dev/y']);
});
