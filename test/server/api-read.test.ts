/**
 * The read side of the public API over real HTTP: library search and context, every parameter's
 * bad input, every status code they answer (200, 202, 301, 304, 400, 401, 403, 404, 422, 429,
 * 500, 503, 504), caching headers, keys and rate limits.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { addLibrary } from '../../core/ingest.ts';
import { bearer, call, createKey, indexUpload, qs, startApiServer, writeDocs, type ApiServer } from './helpers/api-server.ts';

let s: ApiServer;
const search = (p: Record<string, string>, headers: Record<string, string> = {}) => call(s.base, 'GET', '/api/v2/libs/search' + qs(p), { headers });
const context = (p: Record<string, string>, headers: Record<string, string> = {}) => call(s.base, 'GET', '/api/v2/context' + qs(p), { headers });

describe('public API: search and context', () => {
  before(async () => {
    s = await startApiServer({ config: { rateLimits: { windowSeconds: 3600, anonymous: { requests: 1000 }, defaultPlan: 'free', plans: { free: { requests: 1000 }, tiny: { requests: 3 } } } } });
    const alpha = writeDocs(s.scratch, 'alpha', {
      'guide.md': '# Alpha\n\n## Install\n\nInstall alpha with npm and call `alpha.connect()` to open a session.\n\n```js\nimport alpha from "alpha";\nalpha.connect({ retries: 3 });\n```\n\n## Sessions\n\nA session keeps the connection open until `close()`.\n',
    });
    await indexUpload(s.kernel, 'alpha', alpha, { title: 'Alpha', description: 'Alpha client library' });
    const core = writeDocs(s.scratch, 'widgets-core', { 'index.md': '# Widgets core\n\n## Buttons\n\nButtons and inputs for forms.\n' });
    const extra = writeDocs(s.scratch, 'widgets-extra', { 'index.md': '# Widgets extra\n\n## Charts\n\nRender a chart with `renderChart(data)`; every chart accepts a theme.\n' });
    await indexUpload(s.kernel, 'widgets-core', core, { title: 'Widgets' });
    await indexUpload(s.kernel, 'widgets-extra', extra, { title: 'Widgets' });
    const lib = (await s.kernel.store.getLibrary('/docs/widgets-core'))!;
    await s.kernel.store.upsertLibrary({ id: lib.id, title: lib.title, source: lib.source, trustScore: 9, stars: 5000 });
    await addLibrary(s.kernel, { source: 'upload', name: 'pending', spec: { path: alpha } }); // queued, never run
  });
  after(() => s?.close());

  test('search answers every Library field of the spec, best match first', async () => {
    const r = await search({ libraryName: 'alpha', query: 'open a session' });
    assert.equal(r.status, 200);
    assert.equal(r.body.searchFilterApplied, false);
    assert.equal(r.body.results[0].id, '/docs/alpha');
    assert.deepEqual(Object.keys(r.body.results[0]).sort(), ['benchmarkScore', 'branch', 'description', 'id', 'lastUpdateDate', 'stars', 'state', 'title', 'totalSnippets', 'totalTokens', 'trustScore', 'versions']);
    assert.equal(r.body.results[0].state, 'finalized');
    assert.ok(!r.body.results.some((l: any) => l.id.startsWith('/docs/widgets')), 'unrelated libraries are not listed');
  });

  test('ranking: the question re-ranks by documentation; fast=true keeps the name and quality order', async () => {
    const fast = await search({ libraryName: 'widgets', query: 'how do I render a chart', fast: 'true' });
    assert.deepEqual(fast.body.results.map((l: any) => l.id), ['/docs/widgets-core', '/docs/widgets-extra'], 'the higher trust score wins without re-ranking');
    const full = await search({ libraryName: 'widgets', query: 'how do I render a chart' });
    assert.deepEqual(full.body.results.map((l: any) => l.id), ['/docs/widgets-extra', '/docs/widgets-core'], 'the library whose docs answer the question wins');
    const buttons = await search({ libraryName: 'widgets', query: 'buttons for forms' });
    assert.equal(buttons.body.results[0].id, '/docs/widgets-core');
  });

  test('ranking: a contender whose documentation cannot overtake the leader is not searched; the winner is the same', async () => {
    const store = s.kernel.store;
    const storeSearch = store.search;
    const searched: string[] = [];
    store.search = function (this: typeof store, libraryId, ...rest) {
      searched.push(libraryId);
      return storeSearch.call(this, libraryId, ...rest);
    };
    try {
      // widgets-core leads by its trust score and its documentation holds every word of the
      // question: widgets-extra (its documentation adds at most what core's added) cannot pass it.
      const forms = await search({ libraryName: 'widgets', query: 'buttons inputs forms' });
      assert.deepEqual(forms.body.results.map((l: any) => l.id), ['/docs/widgets-core', '/docs/widgets-extra']);
      assert.deepEqual(searched, ['/docs/widgets-core'], 'only the leader is searched');
      // A question the leader's documentation does not answer: the other is searched, and wins.
      searched.length = 0;
      const chart = await search({ libraryName: 'widgets', query: 'render a chart with a theme' });
      assert.deepEqual(chart.body.results.map((l: any) => l.id), ['/docs/widgets-extra', '/docs/widgets-core']);
      assert.deepEqual(searched, ['/docs/widgets-core', '/docs/widgets-extra']);
    } finally {
      store.search = storeSearch;
    }
  });

  test('context: txt by default, json on request, pinned versions, the token budget', async () => {
    const txt = await context({ libraryId: '/docs/alpha', query: 'how do I connect' });
    assert.equal(txt.status, 200);
    assert.match(txt.headers.get('content-type')!, /text\/plain/);
    assert.match(txt.text, /alpha\.connect/);
    const json = await context({ libraryId: '/docs/alpha', query: 'how do I connect', type: 'json', tokens: '2000' });
    assert.equal(json.status, 200);
    assert.ok(json.body.codeSnippets.some((c: any) => c.codeList[0].code.includes('alpha.connect')));
    assert.ok(Array.isArray(json.body.infoSnippets));
  });

  test('caching: ETag and Cache-Control; If-None-Match answers 304; errors are not cached', async () => {
    const p = { libraryId: '/docs/alpha', query: 'sessions' };
    const first = await context(p);
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[\w-]+"$/);
    assert.match(first.headers.get('cache-control') ?? '', /max-age=\d+/);
    const again = await context(p, { 'if-none-match': etag! });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const other = await context({ ...p, type: 'json' }, { 'if-none-match': etag! });
    assert.equal(other.status, 200, 'a different answer has a different ETag');
    const s1 = await search({ libraryName: 'alpha', query: 'x' });
    assert.equal((await search({ libraryName: 'alpha', query: 'x' }, { 'if-none-match': s1.headers.get('etag')! })).status, 304);
    const err = await context({ libraryId: '/docs/nothing', query: 'x' });
    assert.equal(err.headers.get('cache-control'), 'no-store');
    assert.equal(err.headers.get('etag'), null);
  });

  test('400: every bad parameter of search and context is named with what is wrong', async () => {
    const long = 'x'.repeat(501);
    const searchCases: Array<[string, RegExp]> = [
      ['?query=x', /Missing required parameter "libraryName"/],
      ['?libraryName=a', /Missing required parameter "query"/],
      ['?libraryName=&query=x', /"libraryName" must not be empty/],
      ['?libraryName=a&query=%20%20', /"query" must not be empty/],
      [`?libraryName=${long}&query=x`, /"libraryName" must be at most 500 characters \(got 501\)/],
      [`?libraryName=a&query=${long}`, /"query" must be at most 500 characters/],
      ['?libraryName=a&libraryName=b&query=x', /"libraryName" must be given once/],
      ['?libraryName=a&query=x&fast=maybe', /"fast" must be true or false/],
    ];
    for (const [q, msg] of searchCases) {
      const r = await call(s.base, 'GET', '/api/v2/libs/search' + q);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error, 'invalid_request', q);
      assert.match(r.body.message, msg, q);
    }
    const contextCases: Array<[Record<string, string> | string, string, RegExp]> = [
      [{ query: 'x' }, 'invalid_request', /Missing required parameter "libraryId"/],
      [{ libraryId: '/docs/alpha' }, 'invalid_request', /Missing required parameter "query"/],
      [{ libraryId: '', query: 'x' }, 'invalid_request', /"libraryId" must not be empty/],
      [{ libraryId: '/docs/alpha', query: '' }, 'invalid_request', /"query" must not be empty/],
      [{ libraryId: '/docs/' + long, query: 'x' }, 'invalid_request', /"libraryId" must be at most 500 characters/],
      [{ libraryId: '/docs/alpha', query: long }, 'invalid_request', /"query" must be at most 500 characters/],
      ['?libraryId=/docs/alpha&query=a&query=b', 'invalid_request', /"query" must be given once/],
      [{ libraryId: '/docs/alpha', query: 'x', type: 'xml' }, 'invalid_request', /"type" must be one of: json, txt/],
      [{ libraryId: '/docs/alpha', query: 'x', tokens: 'many' }, 'invalid_request', /"tokens" must be a positive integer/],
      [{ libraryId: '/docs/alpha', query: 'x', tokens: '0' }, 'invalid_request', /"tokens" must be a positive integer/],
      [{ libraryId: '/docs/alpha', query: 'x', tokens: '-5' }, 'invalid_request', /"tokens" must be a positive integer/],
      [{ libraryId: '/docs/alpha', query: 'x', fast: '1' }, 'invalid_request', /"fast" must be true or false/],
      [{ libraryId: 'docs/alpha', query: 'x' }, 'invalid_library_id', /must start with '\/'/],
      [{ libraryId: '/docs/%2e%2e', query: 'x' }, 'invalid_library_id', /percent-encoding/],
      [{ libraryId: '/onlyone', query: 'x' }, 'invalid_library_id', /only one segment/],
      [{ libraryId: 'https://github.com/a/b', query: 'x' }, 'invalid_library_id', /use "\/a\/b"/],
    ];
    for (const [p, code, msg] of contextCases) {
      const r = await call(s.base, 'GET', '/api/v2/context' + (typeof p === 'string' ? p : qs(p)));
      assert.equal(r.status, 400, JSON.stringify(p));
      assert.equal(r.body.error, code, JSON.stringify(p));
      assert.match(r.body.message, msg, JSON.stringify(p));
    }
  });

  test('404: an unknown library names the ID and says to check it or the access permissions; an unknown version lists the versions', async () => {
    const r = await context({ libraryId: '/docs/nothing-here', query: 'x' });
    assert.equal(r.status, 404);
    assert.equal(r.body.error, 'library_not_found');
    assert.match(r.body.message, /"\/docs\/nothing-here" not found\. Check the library ID .* or your access permissions/);
    const v = await context({ libraryId: '/docs/alpha@v9', query: 'x' });
    assert.equal(v.status, 404);
    assert.equal(v.body.error, 'version_not_found');
    assert.match(v.body.message, /Version "v9" of library "\/docs\/alpha" not found/);
    const route = await call(s.base, 'GET', '/api/v2/nope');
    assert.equal(route.status, 404);
    assert.equal(route.body.error, 'not_found');
  });

  test('202: a library still being processed says to wait and retry', async () => {
    const r = await context({ libraryId: '/docs/pending', query: 'x' });
    assert.equal(r.status, 202);
    assert.deepEqual(Object.keys(r.body).sort(), ['error', 'message']);
    assert.equal(r.body.error, 'library_not_finalized');
    assert.match(r.body.message, /still being processed.*Retry in a moment/);
  });

  test('301: a renamed library answers with redirectUrl and keeps answering under its new ID', async () => {
    const ren = await call(s.base, 'POST', '/api/admin/rename', { json: { from: '/docs/widgets-extra', to: '/docs/charts' } });
    assert.equal(ren.status, 200, ren.text);
    const old = await context({ libraryId: '/docs/widgets-extra', query: 'render a chart' });
    assert.equal(old.status, 301);
    assert.equal(old.body.error, 'library_redirected');
    assert.equal(old.body.redirectUrl, '/docs/charts');
    assert.match(old.body.message, /redirected to this library: \/docs\/charts/);
    const pinned = await context({ libraryId: '/docs/widgets-extra@v2', query: 'x' });
    assert.equal(pinned.body.redirectUrl, '/docs/charts@v2');
    const moved = await context({ libraryId: old.body.redirectUrl, query: 'render a chart' });
    assert.equal(moved.status, 200);
    assert.match(moved.text, /renderChart/);
    const dup = await call(s.base, 'POST', '/api/admin/rename', { json: { from: '/docs/alpha', to: '/docs/charts' } });
    assert.equal(dup.status, 409);
  });

  test('401: a bad key is refused, never treated as anonymous; no key is allowed', async () => {
    const key = await createKey(s.base, { name: 'reader' });
    assert.match(key, /^rdk_[A-Za-z0-9_-]{43}$/);
    const p = { libraryName: 'alpha', query: 'x' };
    assert.equal((await search(p)).status, 200, 'anonymous');
    assert.equal((await search(p, bearer(key))).status, 200, 'a valid key');
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ authorization: 'Bearer' }, /mis-formatted/],
      [{ authorization: 'Basic dXNlcjpwYXNz' }, /mis-formatted/],
      [{ authorization: 'Bearer ctx7sk-1234' }, /mis-formatted.*rdk_/],
      [{ authorization: `Bearer ${key.slice(0, -1)}` }, /mis-formatted/],
      [{ authorization: `Bearer rdk_${'A'.repeat(43)}` }, /Invalid API key: no such key/],
      [{ refdesk_api_key: 'nope' }, /mis-formatted/],
    ];
    for (const [headers, msg] of bad) {
      const r = await search(p, headers);
      assert.equal(r.status, 401, JSON.stringify(headers));
      assert.equal(r.body.error, 'invalid_api_key');
      assert.match(r.body.message, msg);
      assert.ok(!r.body.message.includes(key.slice(4)), 'never echoes a key');
    }
    const list = await call(s.base, 'GET', '/api/admin/keys');
    const rec = list.body.keys.find((k: any) => key.startsWith(k.prefix));
    assert.ok(rec && !JSON.stringify(list.body).includes(key), 'listings hold the prefix, never the key');
    assert.equal((await call(s.base, 'DELETE', `/api/admin/keys/${rec.id}`)).status, 200);
    const revoked = await search(p, bearer(key));
    assert.equal(revoked.status, 401);
    assert.match(revoked.body.message, /revoked/);
  });

  test('429: limits per key plan and per anonymous client, with the four headers', async () => {
    const key = await createKey(s.base, { plan: 'tiny' });
    const p = { libraryName: 'alpha', query: 'x' };
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await search(p, bearer(key));
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('ratelimit-limit'), '3');
      seen.push(Number(r.headers.get('ratelimit-remaining')));
    }
    assert.deepEqual(seen, [2, 1, 0]);
    const over = await search(p, bearer(key));
    assert.equal(over.status, 429);
    assert.equal(over.body.error, 'rate_limit_exceeded');
    assert.match(over.body.message, /plan "tiny" may make 3 requests per 3600 s/);
    assert.equal(over.headers.get('ratelimit-remaining'), '0');
    const reset = Number(over.headers.get('ratelimit-reset'));
    const retry = Number(over.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 3600);
    assert.ok(Math.abs(reset - (Math.floor(Date.now() / 1000) + retry)) <= 2, 'RateLimit-Reset is the unix time of the reset');
    assert.equal((await search(p)).status, 200, 'the anonymous bucket is separate');
    const bad = await call(s.base, 'POST', '/api/admin/keys', { json: { plan: 'platinum' } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /Unknown plan "platinum"; the configured plans are: free, tiny/);
  });

  test('422: a library whose source has no documentation says so', async () => {
    const empty = writeDocs(s.scratch, 'acme/empty', { 'notes.txt': 'nothing in markdown' });
    const key = await createKey(s.base);
    const add = await call(s.base, 'POST', '/api/v2/add/repo/git', { headers: bearer(key), json: { docsRepoUrl: 'file://' + empty } });
    assert.equal(add.status, 200, add.text);
    assert.equal(add.body.libraryName, '/acme/empty');
    await s.refdesk.jobs.idle();
    const r = await context({ libraryId: '/acme/empty', query: 'x' });
    assert.equal(r.status, 422);
    assert.equal(r.body.error, 'no_documentation');
    assert.match(r.body.message, /\/acme\/empty has no documentation: No documentation found/);
  });
});

describe('public API: failing backends', () => {
  let f: ApiServer;
  const lib = async (server: ApiServer) => indexUpload(server.kernel, 'alpha', writeDocs(server.scratch, 'alpha', { 'a.md': '# Alpha\n\n## Connect\n\nCall connect.\n\n## Close\n\nCall close.\n' }));

  test('a failing reranker degrades the answer to the lexical order (as fast=true), never a 5xx; a closed store is 503', async () => {
    f = await startApiServer({ withTestRerankers: true, config: { slots: { reranker: 'failing' } } });
    try {
      await lib(f);
      const r = await call(f.base, 'GET', '/api/v2/context' + qs({ libraryId: '/docs/alpha', query: 'connect close', type: 'json' }));
      assert.equal(r.status, 200);
      assert.ok(!JSON.stringify(r.body).includes('connection refused'), 'internal details stay in the log');
      const fast = await call(f.base, 'GET', '/api/v2/context' + qs({ libraryId: '/docs/alpha', query: 'connect close', type: 'json', fast: 'true' }));
      assert.equal(fast.status, 200);
      assert.deepEqual(r.body, fast.body);
      await f.kernel.store.close();
      const closed = await call(f.base, 'GET', '/api/v2/libs/search' + qs({ libraryName: 'alpha', query: 'x' }));
      assert.equal(closed.status, 503, 'a store that cannot answer makes search unavailable');
    } finally {
      await f.close();
    }
  });

  test('504 when answering takes longer than api.requestTimeoutMs', async () => {
    f = await startApiServer({ withTestRerankers: true, config: { slots: { reranker: 'hanging' }, api: { requestTimeoutMs: 50 } } });
    try {
      await lib(f);
      const r = await call(f.base, 'GET', '/api/v2/context' + qs({ libraryId: '/docs/alpha', query: 'connect close' }));
      assert.equal(r.status, 504);
      assert.equal(r.body.error, 'processing_timeout');
      assert.match(r.body.message, /did not finish within 50 ms/);
    } finally {
      await f.close();
    }
  });
});
