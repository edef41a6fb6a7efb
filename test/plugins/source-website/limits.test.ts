import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SourceContext, SourceDocument } from '../../../core/contracts.ts';
import { createFetch } from '../../../core/services.ts';
import { runSource } from '../../../core/testing/run-source.ts';
import { runSourceContract } from '../../../core/testing/source-contract.ts';
import type { WebsiteOptions } from '../../../plugins/source-website/options.ts';
import { WebsiteSource } from '../../../plugins/source-website/website-source.ts';
import { hasCorpora } from '../../helpers/corpora.ts';
import { startSite, type SiteOptions } from './site.ts';

const fast: Partial<WebsiteOptions> = { delayMs: 0, retries: 0, retryDelayMs: 10 };
const source = (o: Partial<WebsiteOptions> = {}) => new WebsiteSource({ ...fast, ...o }, { fetch: createFetch() });
const skip = hasCorpora ? false : 'shared corpora not present';

async function withSite(options: SiteOptions, fn: (origin: string, site: Awaited<ReturnType<typeof startSite>>) => Promise<void>): Promise<void> {
  const site = await startSite(options);
  try {
    await fn(site.origin, site);
  } finally {
    await site.close();
  }
}

const invalid = (pattern: RegExp) => (e: any) => e?.code === 'invalid_source' && pattern.test(e.message);

describe('crawl limits and politeness', { skip }, () => {
  test('a slow page times out and is skipped with the reason; the crawl goes on', () =>
    withSite({ slowMs: 30_000 }, async (origin) => {
      const res = await runSource(source(), { url: `${origin}/docs/languages`, include: ['/docs/slow'], sitemap: false, timeoutMs: 1000 });
      assert.deepEqual(res.documents.map((d) => d.path), ['docs/languages']);
      assert.ok(res.logs.some((l) => l.level === 'warn' && /Skipped .*\/docs\/slow: the request timed out/.test(l.message)), JSON.stringify(res.logs));
    }));

  test('maxPages stops the crawl, and a library cannot ask for more than the operator allows', () =>
    withSite({}, async (origin) => {
      const res = await runSource(source({ maxPages: 3 }), { url: `${origin}/docs/`, maxPages: 100, sitemap: false });
      assert.equal(res.documents.length, 3);
      assert.ok(res.logs.some((l) => l.level === 'warn' && /maxPages 100 lowered to the operator's limit of 3/.test(l.message)));
      assert.ok(res.logs.some((l) => /Stopped at maxPages \(3\)/.test(l.message)));
    }));

  test('maxDepth 0 reads the start page only; sitemap pages count as depth 1', () =>
    withSite({}, async (origin, site) => {
      const res = await runSource(source(), { url: `${origin}/docs/`, maxDepth: 0 });
      assert.deepEqual(res.documents.map((d) => d.path), ['docs/index']);
      const pages = site.hits.filter((h) => h.startsWith('GET /docs/'));
      assert.deepEqual(pages, ['GET /docs/']);
    }));

  test('include patterns replace the start path; only matching pages are requested', () =>
    withSite({}, async (origin, site) => {
      const res = await runSource(source(), { url: `${origin}/docs/`, include: ['/docs/middleware/**'], exclude: ['**/jwt'] });
      const paths = res.documents.map((d) => d.path);
      assert.equal(paths[0], 'docs/index');
      assert.ok(paths.length > 5);
      for (const p of paths.slice(1)) assert.match(p, /^docs\/middleware\/builtin\//);
      assert.ok(!paths.includes('docs/middleware/builtin/jwt'));
      for (const h of site.hits.filter((x) => x.startsWith('GET /docs/'))) assert.match(h, /^GET \/docs\/(middleware\/builtin\/(?!jwt$)|$)/);
    }));

  // Request starts are booked 250 ms apart. Arrival times at the server jitter under load, so
  // the check is on the whole span: n requests cannot arrive in less than (n - 1) delays, less
  // the set-up of the first connection.
  test('robots.txt Crawl-delay spaces the requests', () =>
    withSite({ robots: 'User-agent: *\nCrawl-delay: 0.25\n' }, async (origin, site) => {
      const res = await runSource(source({ concurrency: 4 }), { url: `${origin}/docs/`, maxPages: 4, sitemap: false });
      assert.equal(res.documents.length, 4);
      assert.ok(res.logs.some((l) => /Crawl-delay 0\.25 s/.test(l.message)));
      const n = site.hitTimes.length;
      assert.ok(n >= 5, `${n} requests`);
      const span = site.hitTimes[n - 1] - site.hitTimes[0];
      assert.ok(span >= (n - 1) * 250 - 100, `${n} requests arrived within ${span} ms`);
    }));
});

describe('what a user must fix gets a clear error', { skip }, () => {
  test('bad specs', async () => {
    const s = source();
    await assert.rejects(runSource(s, {}), invalid(/needs "url"/));
    await assert.rejects(runSource(s, { url: 'docs.example.com' }), invalid(/not a valid absolute URL/));
    await assert.rejects(runSource(s, { url: 'ftp://docs.example.com/' }), invalid(/must be http or https/));
    await assert.rejects(runSource(s, { url: 'https://u:p@docs.example.com/' }), invalid(/must not contain credentials/));
    await assert.rejects(runSource(s, { url: 'https://docs.example.com/', include: ['re:(unclosed'] }), invalid(/include pattern .* not a valid regular expression/));
    await assert.rejects(runSource(s, { url: 'https://docs.example.com/', maxPages: 0 }), invalid(/maxPages.*at least 1/));
  });

  test('a start page that is missing, or that robots.txt forbids, or a robots.txt that fails', async () => {
    await withSite({}, async (origin) => {
      await assert.rejects(runSource(source(), { url: `${origin}/docs/nope` }), invalid(/start page .*\/docs\/nope answered HTTP 404; check the URL/));
      await assert.rejects(runSource(source(), { url: `${origin}/docs/private/secret` }), invalid(/robots\.txt of .* does not allow "refdesk" to read the start page/));
      await assert.rejects(runSource(source(), { url: `${origin}/docs/logo.png` }), invalid(/start page .* could not be read: not a page \(image\/png\)/));
    });
    await withSite({ robotsStatus: 503 }, async (origin) => {
      await assert.rejects(runSource(source(), { url: `${origin}/docs/` }), invalid(/robots\.txt answered HTTP 503, so the site may not be crawled now.*Try again later/));
    });
    await withSite({ robotsStatus: 404 }, async (origin) => {
      const res = await runSource(source(), { url: `${origin}/docs/`, maxPages: 2 });
      assert.equal(res.documents.length, 2, 'no robots.txt: everything may be read');
    });
  });

  test('an unreachable site', async () => {
    await assert.rejects(runSource(source(), { url: 'http://127.0.0.1:9/docs/' }), invalid(/Could not read http:\/\/127\.0\.0\.1:9\/robots\.txt/));
  });

  test('a crawl stops promptly when its signal aborts', () =>
    withSite({}, async (origin) => {
      const controller = new AbortController();
      const ctx: SourceContext = {
        libraryId: '/websites/test', version: '', spec: { url: `${origin}/docs/` }, signal: controller.signal,
        previous: new Map(), log() {}, progress() {},
      };
      const got: SourceDocument[] = [];
      await assert.rejects(async () => {
        for await (const doc of source().read(ctx)) {
          got.push(doc);
          controller.abort(new Error('cancelled by the test'));
        }
      }, /cancelled by the test/);
      assert.equal(got.length, 1);
    }));
});

// The contract's site serves pages of the shared corpora (../shared/corpora): skipped without them.
if (hasCorpora) {
  runSourceContract('website', async () => {
    const site = await startSite();
    return { source: source(), spec: { url: `${site.origin}/docs/`, maxPages: 3, sitemap: false }, cleanup: () => site.close() };
  }, { libraryId: '/websites/contract' });
}
