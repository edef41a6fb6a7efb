import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createFetch } from '../../../core/services.ts';
import { runSource, runSourceContract } from '../../../core/testing/index.ts';
import type { PreviousDocument, SourceDocument } from '../../../core/contracts.ts';
import { LlmsTxtSource } from '../../../plugins/source-llms-txt/llms-txt-source.ts';
import type { LlmsTxtOptions } from '../../../plugins/source-llms-txt/schema.ts';
import { hasCorpora } from '../../helpers/corpora.ts';
import { send, startServer } from '../../helpers/route-server.ts';
import { fixture, markdownPage, rewriteLinks, startDenoSite } from './fixture-site.ts';
import { rejection } from '../../helpers/rejects-with.ts';

const skip = hasCorpora ? false : 'shared corpora not present';
const FAST: Partial<LlmsTxtOptions> = { retryBaseDelayMs: 5, retryAttempts: 3 };

function source(options: Partial<LlmsTxtOptions> = {}): LlmsTxtSource {
  return new LlmsTxtSource({ ...FAST, ...options }, { fetch: createFetch(5_000) });
}

function byPath(docs: SourceDocument[]): Map<string, SourceDocument> {
  return new Map(docs.map((d) => [d.path, d]));
}

function previousOf(docs: SourceDocument[]): Map<string, PreviousDocument> {
  return new Map(docs.map((d) => [d.path, { hash: d.hash ?? '', meta: d.meta ?? {} }]));
}


describe('llms.txt source over HTTP', () => {
  test('indexes the deno llms.txt and its pages: .md variants first, HTML converted, 404s skipped with a log line', { skip }, async (t) => {
    const site = await startDenoSite(t);
    const { documents, logs } = await runSource(source(), { url: `${site.base}/llms.txt` });
    const docs = byPath(documents);
    const log = logs.map((l) => `${l.level} ${l.message}`).join('\n');

    // The llms.txt itself first, then the pages in listed order.
    assert.equal(documents[0].path, 'llms.txt');
    assert.equal(documents[0].title, 'Deno');
    assert.equal(documents[1].path, 'ext/deno.com/agents.md');

    // A page with a markdown copy: only the .md variant was requested.
    const cfg = docs.get('runtime/fundamentals/configuration')!;
    assert.equal(cfg.format, 'markdown');
    assert.equal(cfg.url, `${site.base}/runtime/fundamentals/configuration`);
    assert.equal(cfg.title, 'Configuration (deno.json)');
    assert.equal(cfg.content, markdownPage('/runtime/fundamentals/configuration'));
    assert.equal(cfg.meta?.section, 'Runtime');
    assert.equal(site.hits('/runtime/fundamentals/configuration.md').length, 1);
    assert.equal(site.hits('/runtime/fundamentals/configuration').length, 0);
    // A directory URL: index.html.md.
    assert.equal(site.hits('/runtime/reference/cli/index.html.md').length, 1);
    assert.ok(docs.has('runtime/reference/cli'));

    // HTML-only pages: the .md variant 404s, the page is converted (no nav, footer, script).
    const deploy = docs.get('deploy/getting_started')!;
    assert.equal(site.hits('/deploy/getting_started.md').length, 1);
    assert.equal(site.hits('/deploy/getting_started').length, 1);
    assert.match(deploy.content, /^# HTML deploy getting started/);
    assert.match(deploy.content, /```bash\ndeno deploy --prod\n```/);
    assert.ok(!/navigation menu|Copyright footer|window\.track/.test(deploy.content), deploy.content);

    // Missing pages are skipped with a warning naming the link.
    assert.ok(!docs.has('runtime/contributing/style_guide'));
    assert.match(log, /warn skipped "Style Guide" \(http:\/\/127\.0\.0\.1:\d+\/runtime\/contributing\/style_guide, line \d+\): .*HTTP 404/);
    assert.match(log, /warn skipped "llms-full\.txt"/);

    // Optional pages are indexed and marked.
    assert.equal(docs.get('runtime/contributing')?.meta?.optional, 'true');
    assert.equal(docs.get('subhosting')?.meta?.section, 'Optional');
    assert.equal(docs.get('runtime/fundamentals/modules')?.meta?.optional, undefined);
    assert.match(log, /info Optional section: its 4 links are indexed and marked optional/);

    // 36 links: 4 missing (3 llms-* files, the style guide); 32 pages + llms.txt.
    assert.equal(documents.length, 33);
    assert.ok(documents.every((d) => typeof d.hash === 'string' && d.hash.length === 64));
  });

  test('the Optional section can be left out by the operator', { skip }, async (t) => {
    const site = await startDenoSite(t);
    const { documents, logs } = await runSource(source({ includeOptional: false }), { url: `${site.base}/llms.txt` });
    assert.ok(!documents.some((d) => d.meta?.optional === 'true'));
    assert.equal(documents.length, 33 - 3);
    assert.ok(logs.some((l) => /its 4 links are not read \(includeOptional is off\)/.test(l.message)));
  });

  test('malformed lines are logged and skipped, the rest is indexed', async (t) => {
    const site = await startDenoSite(t, {
      llmsTxt: '# Tool\n\n> Summary.\n\n## Docs\n\n- [Modules](/runtime/fundamentals/modules): modules\nthis line is stray\n- [Broken(/x\n- [Testing](/runtime/fundamentals/testing)\n',
    });
    const { documents, logs } = await runSource(source(), { url: `${site.base}/llms.txt` });
    assert.deepEqual(documents.map((d) => d.path), ['llms.txt', 'runtime/fundamentals/modules', 'runtime/fundamentals/testing']);
    const warns = logs.filter((l) => l.level === 'warn').map((l) => l.message);
    assert.equal(warns.length, 2);
    assert.match(warns[0], /^skipped line 8 of .*llms\.txt: not a list item.*"this line is stray"$/);
    assert.match(warns[1], /^skipped line 9 of .*: not a markdown link item/);
  });

  test('the fasthtml llms-ctx-full.txt is split into its documents', { skip }, async (t) => {
    const site = await startServer((_req, res, url) => {
      if (url.pathname === '/docs/llms-ctx-full.txt') return send(res, 200, fixture('fasthtml/llms-ctx-full.txt'));
      send(res, 404, 'no');
    }, t);
    const { documents, logs } = await runSource(source(), { url: `${site.base}/docs/llms-ctx-full.txt` });
    assert.equal(documents.length, 22);
    assert.equal(site.requests.length, 1, 'a context file needs no page requests');
    const root = documents[0];
    assert.equal(root.path, 'docs/llms-ctx-full.txt');
    assert.match(root.content, /^# FastHTML\n\n> FastHTML is a python library/);
    assert.match(root.content, /Things to remember when writing FastHTML apps/);
    const guide = documents[1];
    assert.equal(guide.path, 'www.fastht.ml/docs/ref/concise_guide.html.md');
    assert.equal(guide.url, 'https://www.fastht.ml/docs/ref/concise_guide.html.md');
    assert.equal(guide.title, 'FastHTML concise guide');
    assert.equal(guide.meta?.section, 'docs');
    const ws = documents.find((d) => d.title === 'Websockets application')!;
    assert.equal(ws.path, 'raw.githubusercontent.com/AnswerDotAI/fasthtml/main/examples/basic_ws.py');
    assert.match(ws.content, /^# Websockets application\n\nVery brief example.*\n\n```python\nfrom asyncio import sleep/);
    assert.equal(documents.filter((d) => d.meta?.optional === 'true').length, 14);
    assert.ok(logs.some((l) => /context file \(<doc> wrappers\): 21 documents/.test(l.message)));
  });

  test('an llms-full.txt is split by H1', async (t) => {
    const full = '# Intro\nSource: https://tool.example/docs/intro\n\nWelcome to the tool.\n\n# Install\n\n```sh\n# comment, not a page\nnpm i tool\n```\n';
    const site = await startServer((_req, res) => send(res, 200, full), t);
    const { documents } = await runSource(source(), { url: `${site.base}/llms-full.txt` });
    assert.deepEqual(documents.map((d) => [d.path, d.title]), [
      ['llms-full.txt', undefined],
      ['tool.example/docs/intro', 'Intro'],
      ['llms-full.txt/install', 'Install'],
    ]);
    assert.match(documents[2].content, /# comment, not a page\nnpm i tool/);
  });

  test('a page answering 503 is retried with backoff until it answers', async (t) => {
    let calls = 0;
    const site = await startDenoSite(t, {
      llmsTxt: '# T\n## Docs\n- [Modules](/runtime/fundamentals/modules)\n',
      routes: {
        '/runtime/fundamentals/modules.md': (res) => {
          calls++;
          if (calls < 3) return send(res, 503, 'busy', 'text/plain', { 'retry-after': '0' });
          send(res, 200, '# Modules\n\nImports.\n', 'text/markdown');
        },
      },
    });
    const { documents, logs } = await runSource(source({ retryAttempts: 4 }), { url: `${site.base}/llms.txt` });
    assert.equal(calls, 3);
    assert.equal(documents[1].content, '# Modules\n\nImports.\n');
    assert.deepEqual(
      logs.filter((l) => l.message.startsWith('retrying')).map((l) => l.message.replace(/in \d+ ms/, 'in N ms')),
      ['retrying (attempt 2 of 4) in N ms: HTTP 503 Service Unavailable', 'retrying (attempt 3 of 4) in N ms: HTTP 503 Service Unavailable'],
    );
  });

  test('a page that keeps failing is skipped with a log line naming its URL; the other pages are read', async (t) => {
    const site = await startDenoSite(t, {
      llmsTxt: '# T\n## Docs\n- [Modules](/runtime/fundamentals/modules)\n- [Testing](/runtime/fundamentals/testing)\n',
      routes: { '/runtime/fundamentals/testing.md': (res) => send(res, 502, 'bad gateway') },
    });
    const { documents, logs } = await runSource(source(), { url: `${site.base}/llms.txt` });
    assert.deepEqual(documents.map((d) => d.path), ['llms.txt', 'runtime/fundamentals/modules']);
    assert.equal(site.hits('/runtime/fundamentals/testing.md').length, 3);
    assert.ok(
      logs.some((l) => l.level === 'warn' && /^skipped "Testing" \(http:\/\/127\.0\.0\.1:\d+\/runtime\/fundamentals\/testing, line 4\): The page "Testing" could not be read from .*testing\.md: the server answered HTTP 502 Bad Gateway after 3 attempts/.test(l.message)),
      logs.map((l) => l.message).join('\n'),
    );
  });

  test('a link that times out is skipped with a log line; on a refresh a failing page keeps its previous copy', async (t) => {
    let failTesting = false;
    const site = await startDenoSite(t, {
      llmsTxt: '# T\n## Docs\n- [Modules](/runtime/fundamentals/modules)\n- [Slow](/slow.md)\n- [Testing](/runtime/fundamentals/testing)\n',
      routes: {
        '/slow.md': () => {}, // never answers
        '/runtime/fundamentals/testing.md': (res) => (failTesting ? send(res, 503, 'down') : send(res, 200, '# Testing\n\nRun deno test.\n', 'text/markdown')),
      },
    });
    const quick = new LlmsTxtSource({ ...FAST, retryAttempts: 1 }, { fetch: createFetch(300) });
    const first = await runSource(quick, { url: `${site.base}/llms.txt` });
    assert.deepEqual(first.documents.map((d) => d.path), ['llms.txt', 'runtime/fundamentals/modules', 'runtime/fundamentals/testing']);
    assert.ok(first.logs.some((l) => l.level === 'warn' && /^skipped "Slow" \(http:\/\/127\.0\.0\.1:\d+\/slow\.md, line 4\): Could not reach/.test(l.message)), first.logs.map((l) => l.message).join('\n'));

    failTesting = true;
    const second = await runSource(quick, { url: `${site.base}/llms.txt` }, { previous: previousOf(first.documents) });
    const testing = second.documents.find((d) => d.path === 'runtime/fundamentals/testing');
    assert.equal(testing?.unchanged, true, 'the previous copy is kept');
    assert.equal(testing?.hash, first.documents[2].hash);
    assert.ok(second.logs.some((l) => l.level === 'warn' && /could not read "Testing" .*kept the copy of the previous build: .*HTTP 503/.test(l.message)));
  });

  test('when none of the linked pages can be read the read fails, naming them', async (t) => {
    const site = await startDenoSite(t, {
      llmsTxt: '# T\n## Docs\n- [Gone](/gone)\n- [Down](/down.md)\n',
      routes: { '/gone.md': (res) => send(res, 404, 'no'), '/gone': (res) => send(res, 404, 'no'), '/down.md': (res) => send(res, 500, 'boom') },
    });
    const e = await rejection(runSource(source({ retryAttempts: 1 }), { url: `${site.base}/llms.txt` }));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, /^None of the 2 pages linked from http:\/\/127\.0\.0\.1:\d+\/llms\.txt could be read: http:\/\/127\.0\.0\.1:\d+\/gone: .*HTTP 404.*; http:\/\/127\.0\.0\.1:\d+\/down\.md: .*HTTP 500/);
  });

  test('a missing llms.txt, an unreachable host and a bad URL are clear errors', async (t) => {
    const site = await startServer((_req, res) => send(res, 404, 'no'), t);
    let e = await rejection(runSource(source(), { url: `${site.base}/llms.txt` }));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, /^The llms\.txt file was not found at http:\/\/127\.0\.0\.1:\d+\/llms\.txt \(HTTP 404 Not Found\)\. Check the URL/);

    const closed = await startServer(() => {});
    await closed.close();
    e = await rejection(runSource(source({ retryAttempts: 2 }), { url: `${closed.base}/llms.txt` }));
    assert.match(e.message, /^Could not reach http:\/\/127\.0\.0\.1:\d+\/llms\.txt: .*\(tried 2 times\)/);

    e = await rejection(runSource(source(), { url: 'ftp://example.com/llms.txt' }));
    assert.match(e.message, /needs "url": an absolute http\(s\) URL/);
  });

  test('refresh: conditional requests, 304 pages come back unchanged, changed pages are read again', async (t) => {
    const versions: Record<string, string> = { '/a.md': 'v1', '/b.md': 'v1' };
    const site = await startServer((req, res, url) => {
      if (url.pathname === '/llms.txt') return send(res, 200, '# T\n## Docs\n- [A](/a)\n- [B](/b)\n');
      const v = versions[url.pathname];
      if (!v) return send(res, 404, 'no');
      const etag = `"${url.pathname}-${v}"`;
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, { etag });
        return res.end();
      }
      send(res, 200, `# Page ${url.pathname} ${v}\n\nText.\n`, 'text/markdown', { etag });
    }, t);
    const src = source();
    const first = await runSource(src, { url: `${site.base}/llms.txt` });
    assert.equal(first.documents[1].meta?.etag, '"/a.md-v1"');
    assert.equal(first.documents[1].meta?.fetched, `${site.base}/a.md`);

    versions['/b.md'] = 'v2';
    site.requests.length = 0;
    const second = await runSource(src, { url: `${site.base}/llms.txt` }, { previous: previousOf(first.documents) });
    const a = second.documents.find((d) => d.path === 'a')!;
    const b = second.documents.find((d) => d.path === 'b')!;
    assert.equal(a.unchanged, true);
    assert.equal(a.content, '');
    assert.equal(a.hash, first.documents[1].hash);
    assert.equal(b.unchanged, undefined);
    assert.match(b.content, /v2/);
    assert.equal(site.hits('/a.md')[0].headers['if-none-match'], '"/a.md-v1"');
  });

  test('refresh of a full file: a 304 reuses every document of the previous build', async (t) => {
    const site = await startServer((req, res) => {
      if (req.headers['if-none-match'] === '"full-1"') {
        res.writeHead(304, { etag: '"full-1"' });
        return res.end();
      }
      send(res, 200, '# One\n\nFirst.\n\n# Two\n\nSecond.\n', 'text/plain', { etag: '"full-1"' });
    }, t);
    const first = await runSource(source(), { url: `${site.base}/llms-full.txt` });
    assert.equal(first.documents.length, 3);
    const second = await runSource(source(), { url: `${site.base}/llms-full.txt` }, { previous: previousOf(first.documents) });
    assert.deepEqual(second.documents.map((d) => [d.path, d.unchanged]), first.documents.map((d) => [d.path, true]));
    assert.ok(second.logs.some((l) => /unchanged \(HTTP 304\): reusing its 3 documents/.test(l.message)));
  });

  test('a page larger than maxPageBytes is skipped with a log line', async (t) => {
    const site = await startDenoSite(t, {
      llmsTxt: '# T\n## Docs\n- [Big](/big)\n- [Small](/small)\n',
      routes: { '/big.md': (res) => send(res, 200, 'x'.repeat(5000), 'text/markdown') },
    });
    const { documents, logs } = await runSource(source({ maxPageBytes: 1000 }), { url: `${site.base}/llms.txt` });
    assert.deepEqual(documents.map((d) => d.path), ['llms.txt', 'small']);
    assert.ok(logs.some((l) => l.level === 'warn' && /skipped "Big".*larger than 1000 bytes \(maxPageBytes\)/.test(l.message)));
  });
});

runSourceContract('llmstxt', async () => {
  const text = '# Contract\n\n> A small site.\n\n## Docs\n\n- [One](/one): first\n- [Two](/two/): second\n';
  const site = await startServer((_req, res, url) => {
    if (url.pathname === '/llms.txt') return send(res, 200, text);
    if (url.pathname === '/one.md' || url.pathname === '/two/index.html.md') return send(res, 200, `# ${url.pathname}\n\nBody.\n`, 'text/markdown');
    send(res, 404, 'no');
  });
  return { source: source(), spec: { url: `${site.base}/llms.txt` }, cleanup: () => site.close() };
});

// Keep the rewrite helper honest: links of the fixture point at the test server after rewriting.
test('fixture links are rewritten to the test server', { skip }, () => {
  const out = rewriteLinks(fixture('denoland-docs/llms.txt'), 'http://127.0.0.1:1');
  assert.ok(!out.includes('https://docs.deno.com'));
  assert.match(out, /\(http:\/\/127\.0\.0\.1:1\/ext\/github\.com\/denoland\/skills\)/);
});
