/**
 * Cacheable answers: the ETag of search and context answers comes from what shapes them (the
 * normalised request, the library's served build, the policy, the service's fingerprint), so a
 * matching If-None-Match is answered 304 before any search runs. Searches are counted with a
 * wrapper around the real store's search.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, call, createKey, indexUpload, qs, startApiServer, writeDocs, type ApiServer } from './helpers/api-server.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';

let s: ApiServer;
let searches = 0;
let admin: string;
const context = (p: Record<string, string>, headers: Record<string, string> = {}) => call(s.base, 'GET', '/api/v2/context' + qs(p), { headers });
const search = (p: Record<string, string>, headers: Record<string, string> = {}) => call(s.base, 'GET', '/api/v2/libs/search' + qs(p), { headers });

/** Runs fn and answers how many store searches it caused. */
async function counted<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const before = searches;
  const r = await fn();
  return [r, searches - before];
}

describe('cacheable answers: ETag from what shapes the answer, 304 without searching', () => {
  let docs: string;

  before(async () => {
    s = await startApiServer({ config: { api: { requestTimeoutMs: 30000, maxOpenApiUploadBytes: 4096, cacheMaxAgeSeconds: 120 } } });
    docs = writeDocs(s.scratch, 'alpha', {
      'guide.md': '# Alpha\n\n## Connect\n\nCall `alpha.connect()` to open a session.\n\n## Sessions\n\nA session stays open until `close()`.\n',
    });
    await indexUpload(s.kernel, 'alpha', docs, { title: 'Alpha' });
    // A second "alpha" so that library search re-ranks its candidates by their documentation.
    await indexUpload(s.kernel, 'alpha-two', writeDocs(s.scratch, 'alpha-two', { 'c.md': '# Alpha two\n\n## Pools\n\nConnection pools.\n' }), { title: 'Alpha two' });
    await indexUpload(s.kernel, 'beta', writeDocs(s.scratch, 'beta', { 'b.md': '# Beta\n\n## Sessions\n\nBeta has sessions too.\n' }), { title: 'Beta' });
    // A library whose ID has three segments (a GitLab subgroup project's shape).
    const deep = await addLibrary(s.kernel, { source: 'upload', id: '/group/sub/project', spec: { path: writeDocs(s.scratch, 'deep', { 'd.md': '# Deep\n\n## Sessions\n\nDeep sessions.\n' }) } });
    assert.equal((await runIngestJob(s.kernel, deep.job.id)).state, 'succeeded');
    const store = s.kernel.store;
    const real = store.search.bind(store);
    store.search = (...args) => {
      searches++;
      return real(...args);
    };
    // Context searches run in the search workers, which ask the store for the segment file.
    const realFile = store.segmentFile?.bind(store);
    if (realFile) {
      store.segmentFile = (...args) => {
        searches++;
        return realFile(...args);
      };
    }
    admin = await createKey(s.base, { role: 'admin' });
  });
  after(() => s?.close());

  test('a matching If-None-Match answers 304 with the caching headers and runs no search', async () => {
    const p = { libraryId: '/docs/alpha', query: 'open a session' };
    const [first, n1] = await counted(() => context(p));
    assert.equal(first.status, 200);
    assert.ok(n1 >= 1, `the first answer searched (${n1})`);
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^"[\w-]{32}"$/);
    assert.equal(first.headers.get('cache-control'), 'private, max-age=120');
    assert.match(first.headers.get('vary') ?? '', /Authorization/);

    const [again, n2] = await counted(() => context(p, { 'if-none-match': etag }));
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    assert.equal(n2, 0, 'no search for a 304');
    assert.equal(again.headers.get('etag'), etag);
    assert.equal(again.headers.get('cache-control'), 'private, max-age=120');
    assert.match(again.headers.get('vary') ?? '', /Authorization/);
    assert.ok(again.headers.get('ratelimit-remaining'), 'the 304 still counts against the rate limit');

    // Weak and listed forms match too; the same request spelled differently is the same answer.
    assert.equal((await context(p, { 'if-none-match': `"other", W/${etag}` })).status, 304);
    const [same, n3] = await counted(() => context({ libraryId: '/docs/alpha', query: '  open a session ', type: 'txt', ignored: 'x' }, { 'if-none-match': etag }));
    assert.equal(same.status, 304);
    assert.equal(n3, 0);

    // "alpha-t": both alphas are close prefixes, so the re-ranking searches their documentation
    // ("alpha" alone is one library's ID: nothing could overtake it, nothing is searched).
    const [lib, n4] = await counted(() => search({ libraryName: 'alpha-t', query: 'sessions' }));
    assert.equal(lib.status, 200);
    assert.ok(n4 >= 1, `library search searched (${n4})`);
    const [lib304, n5] = await counted(() => search({ libraryName: 'alpha-t', query: 'sessions' }, { 'if-none-match': lib.headers.get('etag')! }));
    assert.equal(lib304.status, 304);
    assert.equal(n5, 0);
  });

  test('a library ID of three segments (/group/sub/project) gets an ETag and a 304 like any other', async () => {
    const p = { libraryId: '/group/sub/project', query: 'sessions' };
    const [first, n1] = await counted(() => context(p));
    assert.equal(first.status, 200, first.text);
    assert.match(first.text, /Deep sessions/);
    assert.ok(n1 >= 1);
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[\w-]{32}"$/, 'the answer carries an ETag');
    const [again, n2] = await counted(() => context(p, { 'if-none-match': etag! }));
    assert.equal(again.status, 304);
    assert.equal(n2, 0, 'no search for a 304');
    // Its tag is not another library's, and the @ form of a version is a different request.
    assert.notEqual(etag, (await context({ libraryId: '/docs/beta', query: 'sessions' })).headers.get('etag'));
  });

  test('library search reads the catalog once per request (for its ETag and its search)', async () => {
    const store = s.kernel.store;
    const real = store.listLibraries.bind(store);
    let lists = 0;
    store.listLibraries = () => {
      lists++;
      return real();
    };
    try {
      const r = await search({ libraryName: 'alpha', query: 'sessions' });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.headers.get('etag'));
      assert.deepEqual(r.body.results.map((x: { id: string }) => x.id).slice(0, 2).sort(), ['/docs/alpha', '/docs/alpha-two']);
      assert.equal(lists, 1, 'one catalog read');
    } finally {
      store.listLibraries = real;
    }
  });

  test('the ETag differs between txt and json, between queries, token budgets and libraries', async () => {
    const tag = async (p: Record<string, string>) => {
      const r = await context(p);
      assert.equal(r.status, 200, r.text);
      return r.headers.get('etag');
    };
    const base = { libraryId: '/docs/alpha', query: 'sessions' };
    const tags = [
      await tag(base),
      await tag({ ...base, type: 'json' }),
      await tag({ ...base, query: 'connect' }),
      await tag({ ...base, tokens: '1000' }),
      await tag({ ...base, libraryId: '/docs/beta' }),
    ];
    assert.equal(new Set(tags).size, tags.length, `all different: ${tags.join(' ')}`);
    assert.equal(await tag(base), tags[0], 'the same request and state give the same ETag');
    // An old tag of another answer does not match: the search runs and answers 200.
    const other = await context({ ...base, type: 'json' }, { 'if-none-match': tags[0]! });
    assert.equal(other.status, 200);
    const s1 = await search({ libraryName: 'alpha', query: 'x' });
    const s2 = await search({ libraryName: 'alpha', query: 'y' });
    assert.notEqual(s1.headers.get('etag'), s2.headers.get('etag'));
  });

  test('the ETag changes when a refresh rebuilds the library', async () => {
    const p = { libraryId: '/docs/alpha', query: 'session' };
    const before = await context(p);
    const etag = before.headers.get('etag')!;
    const beta = await context({ libraryId: '/docs/beta', query: 'session' });
    writeDocs(s.scratch, 'alpha', { 'guide.md': '# Alpha\n\n## Connect\n\nCall `alpha.open()` to start a session (renamed in 2.0).\n' });
    const r = await call(s.base, 'POST', '/api/v1/refresh', { headers: bearer(admin), json: { libraryName: '/docs/alpha' } });
    assert.equal(r.status, 200, r.text);
    await s.refdesk.jobs.idle();

    const [after, n] = await counted(() => context(p, { 'if-none-match': etag }));
    assert.equal(after.status, 200, 'the old tag no longer matches');
    assert.ok(n >= 1, 'the new build was searched');
    assert.match(after.text, /alpha\.open/);
    assert.notEqual(after.headers.get('etag'), etag);
    // Another library's answers keep their tag.
    assert.equal((await context({ libraryId: '/docs/beta', query: 'session' }, { 'if-none-match': beta.headers.get('etag')! })).status, 304);
  });

  test('the ETag changes after a policy change, and a library the policy now hides answers 403, not 304', async () => {
    const p = { libraryId: '/docs/beta', query: 'sessions' };
    const first = await context(p);
    const etag = first.headers.get('etag')!;
    const lib = await search({ libraryName: 'beta', query: 'sessions' });
    const patch = (json: unknown) => call(s.base, 'PATCH', '/api/v2/policies', { headers: bearer(admin), json });

    // A change that still lets /docs/beta through changes the tag all the same.
    let r = await patch({ libraryFilters: { mode: 'quality', quality: { blockedLibraries: { add: ['/docs/alpha'] } } } });
    assert.equal(r.status, 200, r.text);
    const [still, n] = await counted(() => context(p, { 'if-none-match': etag }));
    assert.equal(still.status, 200);
    assert.ok(n >= 1);
    assert.notEqual(still.headers.get('etag'), etag);
    assert.equal((await search({ libraryName: 'beta', query: 'sessions' }, { 'if-none-match': lib.headers.get('etag')! })).status, 200);

    // Hidden now: the cached tag does not turn into a 304.
    r = await patch({ libraryFilters: { quality: { blockedLibraries: { add: ['/docs/beta'] } } } });
    assert.equal(r.status, 200, r.text);
    const hidden = await context(p, { 'if-none-match': still.headers.get('etag')! });
    assert.equal(hidden.status, 403);
    assert.equal(hidden.body.error, 'access_denied');
    assert.equal(hidden.headers.get('etag'), null);
    r = await patch({ libraryFilters: { mode: null, quality: { blockedLibraries: { clear: true } } } });
    assert.equal(r.status, 200, r.text);
  });

  test('If-None-Match: * and bad parameters: the route decides (400 stays 400, an unknown library 404)', async () => {
    const bad = await context({ libraryId: '/docs/alpha', query: 'x', type: 'xml' }, { 'if-none-match': '*' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'invalid_request');
    const unknown = await context({ libraryId: '/docs/nothing', query: 'x' }, { 'if-none-match': '*' });
    assert.equal(unknown.status, 404);
    const any = await context({ libraryId: '/docs/alpha', query: 'session' }, { 'if-none-match': '*' });
    assert.equal(any.status, 304, 'a current answer exists');
  });
});
