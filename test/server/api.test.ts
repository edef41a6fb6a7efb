import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { createApp } from '../../server/app.ts';
import { CORPORA_DIR, hasCorpora } from '../helpers/corpora.ts';
import { listenOnLoopback } from '../helpers/listen.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let kernel: Kernel;
let server: Server;
let base: string;

async function get(path: string): Promise<{ status: number; body: any; text: string; type: string }> {
  const res = await fetch(base + path);
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, text, type, body: type.includes('json') ? JSON.parse(text) : undefined };
}

const q = (params: Record<string, string>) => '?' + new URLSearchParams(params).toString();

describe('HTTP API over an ingested corpus', { skip: hasCorpora ? false : 'shared corpora not present' }, () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'refdesk-api-'));
    kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), {
      env: { dataDir: dir, mode: 'server', port: 0 },
      logger: createConsoleLogger('error', () => {}),
    });
    await kernel.open();
    for (const [name, corpus, version] of [
      ['koa', 'koa', ''],
      ['koa', 'zustand', 'v1.0.0'],
    ] as const) {
      const { job } = await addLibrary(kernel, { source: 'upload', name, version, title: 'Koa', description: 'Koa web framework docs', spec: { path: join(CORPORA_DIR, corpus) } });
      const done = await runIngestJob(kernel, job.id);
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    }
    // A library whose ingest is queued but has not run: not finalized yet.
    await addLibrary(kernel, { source: 'upload', name: 'pending', spec: { path: join(CORPORA_DIR, 'tokio') } });
    const { app } = createApp(kernel);
    server = createServer(app.callback());
    base = await listenOnLoopback(server);
  });

  after(async () => {
    server?.close();
    await kernel?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('GET /ping', async () => {
    const r = await get('/ping');
    assert.deepEqual(r.body, { status: 'ok', message: 'pong' });
  });

  test('libs/search answers every catalog field of the spec', async () => {
    const r = await get('/api/v2/libs/search' + q({ libraryName: 'koa', query: 'cookies' }));
    assert.equal(r.status, 200);
    assert.equal(r.body.searchFilterApplied, false);
    const koa = r.body.results[0];
    assert.equal(koa.id, '/docs/koa');
    assert.deepEqual(Object.keys(koa).sort(), ['benchmarkScore', 'branch', 'description', 'id', 'lastUpdateDate', 'stars', 'state', 'title', 'totalSnippets', 'totalTokens', 'trustScore', 'versions']);
    assert.equal(koa.state, 'finalized');
    assert.match(koa.lastUpdateDate, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(koa.totalSnippets > 100 && koa.totalTokens > 10000);
    assert.deepEqual(koa.versions, ['v1.0.0']);
  });

  test('context json: code and info snippets with their source and line range', async () => {
    const r = await get('/api/v2/context' + q({ libraryId: '/docs/koa', query: 'ctx.throw with a status and message', type: 'json' }));
    assert.equal(r.status, 200);
    const { codeSnippets, infoSnippets } = r.body;
    assert.ok(codeSnippets.length + infoSnippets.length > 0);
    for (const c of codeSnippets) {
      for (const k of ['codeTitle', 'codeDescription', 'codeLanguage', 'codeTokens', 'codeId', 'pageTitle', 'codeList']) assert.ok(k in c, k);
      assert.ok(c.source.path.startsWith('docs/') && c.source.lineStart <= c.source.lineEnd);
      assert.equal(c.codeList[0].language, c.codeLanguage);
    }
    for (const i of infoSnippets) {
      for (const k of ['pageId', 'breadcrumb', 'content', 'contentTokens']) assert.ok(k in i, k);
    }
    const all = [...infoSnippets.map((s: any) => s.breadcrumb), ...codeSnippets.map((s: any) => s.codeTitle)].join('\n');
    assert.match(all, /ctx\.throw/);
    // `rank` orders the whole answer (code and info snippets together); the best one is ctx.throw's section.
    const first = [...infoSnippets, ...codeSnippets].sort((a: any, b: any) => a.rank - b.rank)[0];
    assert.equal(first.rank, 1);
    assert.equal(first.source.path, 'docs/api/context.md');
  });

  test('context txt is the default and reads as text with sources', async () => {
    const r = await get('/api/v2/context' + q({ libraryId: '/docs/koa', query: 'how to set a signed cookie' }));
    assert.equal(r.status, 200);
    assert.match(r.type, /text\/plain/);
    assert.match(r.text, /^### /);
    assert.match(r.text, /Source: docs\/api\/\S+\.md \(lines \d+-\d+\)/);
    assert.match(r.text, /cookie/i);
  });

  test('the token budget bounds the answer', async () => {
    const small = await get('/api/v2/context' + q({ libraryId: '/docs/koa', query: 'middleware request response context', type: 'json', tokens: '600' }));
    const big = await get('/api/v2/context' + q({ libraryId: '/docs/koa', query: 'middleware request response context', type: 'json', tokens: '20000' }));
    const sum = (b: any) => [...b.codeSnippets.map((s: any) => s.codeTokens), ...b.infoSnippets.map((s: any) => s.contentTokens)].reduce((a: number, x: number) => a + x, 0);
    assert.ok(sum(small.body) <= 600, `small answer ${sum(small.body)} tokens`);
    assert.ok(sum(big.body) > sum(small.body));
  });

  test('versions live side by side; /v and @v are the same', async () => {
    const at = await get('/api/v2/context' + q({ libraryId: '/docs/koa@v1.0.0', query: 'create a store with set', type: 'json' }));
    const slash = await get('/api/v2/context' + q({ libraryId: '/docs/koa/v1.0.0', query: 'create a store with set', type: 'json' }));
    assert.equal(at.status, 200);
    assert.deepEqual(at.body, slash.body);
    const paths = [...at.body.codeSnippets, ...at.body.infoSnippets].map((s: any) => s.source.path);
    assert.ok(paths.length > 0 && paths.every((p: string) => !p.startsWith('docs/api/context')), 'pinned version serves its own snippets');
    const dflt = await get('/api/v2/context' + q({ libraryId: '/docs/koa', query: 'ctx.throw', type: 'json' }));
    assert.ok([...dflt.body.codeSnippets, ...dflt.body.infoSnippets].some((s: any) => s.source.path === 'docs/api/context.md'));
  });

  test('errors: every bad parameter gets a 4xx {error, message} that says what to fix', async () => {
    const cases: Array<[Record<string, string>, number, string, RegExp]> = [
      [{ query: 'x' }, 400, 'invalid_request', /Missing required parameter "libraryId"/],
      [{ libraryId: '/docs/koa' }, 400, 'invalid_request', /Missing required parameter "query"/],
      [{ libraryId: '/docs/koa', query: '   ' }, 400, 'invalid_request', /"query" must not be empty/],
      [{ libraryId: '/docs/koa', query: 'x'.repeat(501) }, 400, 'invalid_request', /at most 500 characters/],
      [{ libraryId: '/docs/koa', query: 'x', type: 'xml' }, 400, 'invalid_request', /"type" must be one of: json, txt/],
      [{ libraryId: '/docs/koa', query: 'x', tokens: 'many' }, 400, 'invalid_request', /"tokens" must be a positive integer/],
      [{ libraryId: 'docs/koa', query: 'x' }, 400, 'invalid_library_id', /Invalid library ID/],
      [{ libraryId: '/docs/%2e%2e/x', query: 'x' }, 400, 'invalid_library_id', /Invalid library ID/],
      [{ libraryId: '/docs/nothing-here', query: 'x' }, 404, 'library_not_found', /"\/docs\/nothing-here" not found\. Check the library ID .* or your access permissions/],
      [{ libraryId: '/docs/koa@v9.9.9', query: 'x' }, 404, 'version_not_found', /Version "v9\.9\.9" of library "\/docs\/koa" not found \(available: v1\.0\.0\)/],
      [{ libraryId: '/docs/pending', query: 'x' }, 202, 'library_not_finalized', /still being processed/],
    ];
    for (const [params, status, error, message] of cases) {
      const r = await get('/api/v2/context' + q(params));
      assert.equal(r.status, status, JSON.stringify(params));
      assert.equal(r.body.error, error, JSON.stringify(params));
      assert.match(r.body.message, message);
    }
    const s = await get('/api/v2/libs/search' + q({ libraryName: '', query: 'x' }));
    assert.equal(s.status, 400);
    assert.match(s.body.message, /"libraryName" must not be empty/);
    const nf = await get('/api/v2/nope');
    assert.equal(nf.status, 404);
    assert.equal(nf.body.error, 'not_found');
  });
});
