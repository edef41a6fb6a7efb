import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  cosineSimilarity,
  createFakeClock,
  createFakeEmbedder,
  createFakeFetch,
  createTestLogger,
} from '../../../core/testing/fakes.ts';
import * as kit from '../../../core/testing/index.ts';
import { createTestLogger as fromRunSource } from '../../../core/testing/run-source.ts';

describe('createFakeFetch', () => {
  test('answers exact routes, by method or for any method', async () => {
    const fetch = createFakeFetch({
      'https://api.example.com/items': () => Response.json({ any: true }),
      'POST https://api.example.com/items': async (req) => Response.json({ created: await req.json() }, { status: 201 }),
    });
    const get = await fetch.fetch('https://api.example.com/items');
    assert.equal(get.status, 200);
    assert.deepEqual(await get.json(), { any: true });
    assert.equal(get.url, 'https://api.example.com/items');

    const post = await fetch.fetch(new URL('https://api.example.com/items'), {
      method: 'post',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    assert.equal(post.status, 201);
    assert.deepEqual(await post.json(), { created: { name: 'x' } });

    const del = await fetch.fetch('https://api.example.com/items', { method: 'DELETE' });
    assert.deepEqual(await del.json(), { any: true }, 'a plain url key answers every method');
  });

  test('the route gets a Request with the method, headers and body', async () => {
    let seen: { method: string; auth: string | null; body: string } | null = null;
    const fetch = createFakeFetch({
      'PUT https://x.test/a': async (req) => {
        seen = { method: req.method, auth: req.headers.get('authorization'), body: await req.text() };
        return new Response('ok');
      },
    });
    await fetch.fetch('https://x.test/a', { method: 'PUT', headers: [['Authorization', 'Bearer t']], body: 'payload' });
    assert.deepEqual(seen, { method: 'PUT', auth: 'Bearer t', body: 'payload' });
  });

  test('a key ending in * matches URL prefixes; the longest prefix wins, exact routes first', async () => {
    const fetch = createFakeFetch({
      'https://docs.example.com/*': (req) => new Response(`site ${new URL(req.url).pathname}`),
      'https://docs.example.com/api/*': () => new Response('api'),
      'GET https://docs.example.com/api/v2/*': () => new Response('api v2 (GET)'),
      'https://docs.example.com/api/special': () => new Response('special'),
    });
    const text = async (url: string, method = 'GET') => (await fetch.fetch(url, { method })).text();
    assert.equal(await text('https://docs.example.com/guide/intro'), 'site /guide/intro');
    assert.equal(await text('https://docs.example.com/api/users'), 'api');
    assert.equal(await text('https://docs.example.com/api/v2/users'), 'api v2 (GET)');
    assert.equal(await text('https://docs.example.com/api/v2/users', 'POST'), 'api', 'a GET-only prefix does not answer POST');
    assert.equal(await text('https://docs.example.com/api/special'), 'special');
    assert.equal(await text('https://docs.example.com/api/special?x=1'), 'api', 'exact means exact, query included');
    assert.equal((await fetch.fetch('https://other.example.com/')).status, 404);
  });

  test('exact URLs are compared after normalization', async () => {
    const fetch = createFakeFetch({ 'https://example.com': () => new Response('root') });
    assert.equal(await (await fetch.fetch('https://example.com/')).text(), 'root');
    assert.equal(await (await fetch.fetch(new URL('https://EXAMPLE.com'))).text(), 'root');
  });

  test('unknown URLs get a 404, or a rejection naming the URL when strict', async () => {
    const loose = createFakeFetch({});
    const res = await loose.fetch('https://nowhere.test/page');
    assert.equal(res.status, 404);
    assert.equal(res.ok, false);
    assert.match(await res.text(), /nowhere\.test\/page/);

    const strict = createFakeFetch({ 'https://known.test/': () => new Response('') }, { strict: true });
    await assert.rejects(strict.fetch('https://nowhere.test/page', { method: 'POST' }), (err: Error) => {
      assert.match(err.message, /POST https:\/\/nowhere\.test\/page/);
      assert.match(err.message, /https:\/\/known\.test\//);
      return true;
    });
    assert.equal(strict.calls.length, 1, 'a refused call is still recorded');
  });

  test('a route that throws makes the fetch reject, like a network error', async () => {
    const fetch = createFakeFetch({
      'https://down.test/': () => {
        throw new TypeError('fetch failed');
      },
    });
    await assert.rejects(fetch.fetch('https://down.test/'), { name: 'TypeError', message: 'fetch failed' });
  });

  test('honours init.signal: an aborted signal rejects with an AbortError, before or during the answer', async () => {
    let routeCalls = 0;
    const fetch = createFakeFetch({
      'https://slow.test/': () => {
        routeCalls++;
        return new Promise<Response>(() => {}); // never answers
      },
      'https://fast.test/': () => new Response('fast'),
    });
    const before = new AbortController();
    before.abort();
    await assert.rejects(fetch.fetch('https://fast.test/', { signal: before.signal }), { name: 'AbortError' });
    assert.equal(routeCalls, 0);

    const during = new AbortController();
    const pending = fetch.fetch('https://slow.test/', { signal: during.signal });
    setTimeout(() => during.abort(), 5);
    await assert.rejects(pending, { name: 'AbortError' });
    assert.equal(routeCalls, 1);

    const custom = new AbortController();
    custom.abort(new Error('shutting down'));
    await assert.rejects(fetch.fetch('https://fast.test/', { signal: custom.signal }), { message: 'shutting down' });

    await assert.rejects(fetch.fetch('https://slow.test/', { timeoutMs: 5 }), { name: 'TimeoutError' });
    assert.equal(await (await fetch.fetch('https://fast.test/', { signal: new AbortController().signal })).text(), 'fast');
  });

  test('records every call: url, method and lower-cased headers', async () => {
    const fetch = createFakeFetch({ 'https://a.test/*': () => new Response('') });
    await fetch.fetch('https://a.test/one');
    await fetch.fetch(new URL('https://a.test/two'), { method: 'post', headers: { 'X-Token': 'abc', Accept: 'text/plain' } });
    await fetch.fetch('https://b.test/missing', { headers: new Headers({ 'User-Agent': 'refdesk' }) });
    assert.deepEqual(fetch.calls, [
      { url: 'https://a.test/one', method: 'GET', headers: {} },
      { url: 'https://a.test/two', method: 'POST', headers: { 'x-token': 'abc', accept: 'text/plain' } },
      { url: 'https://b.test/missing', method: 'GET', headers: { 'user-agent': 'refdesk' } },
    ]);
  });

  test('refuses routes that are not functions and answers that are not Responses', async () => {
    assert.throws(() => createFakeFetch({ 'https://a.test/': 'nope' as never }), /must be a function/);
    const fetch = createFakeFetch({ 'https://a.test/': () => ({ status: 200 }) as never });
    await assert.rejects(fetch.fetch('https://a.test/'), /must return a Response/);
  });
});

describe('createFakeEmbedder', () => {
  test('vectors are deterministic unit vectors of the requested dimensions; calls are recorded', async () => {
    const embedder = createFakeEmbedder({ dimensions: 16 });
    assert.equal(embedder.dimensions, 16);
    assert.equal(typeof embedder.model, 'string');
    const [a, b, empty] = await embedder.embed(['Koa middleware cascade', 'Koa middleware cascade', ''], 'document');
    const [q] = await createFakeEmbedder().embed(['Koa middleware cascade'], 'query');
    assert.ok(a instanceof Float32Array);
    assert.equal(a.length, 16);
    assert.deepEqual([...a], [...b]);
    assert.deepEqual([...q], [...a], 'the same text gives the same vector in another instance and for queries');
    for (const v of [a, empty]) {
      const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
      assert.ok(Math.abs(norm - 1) < 1e-5, `unit length, got ${norm}`);
    }
    assert.deepEqual(embedder.calls, [{ texts: ['Koa middleware cascade', 'Koa middleware cascade', ''], purpose: 'document' }]);
    assert.equal((await createFakeEmbedder({ dimensions: 64 }).embed(['x'], 'query'))[0].length, 64);
    assert.throws(() => createFakeEmbedder({ dimensions: 0 }), /dimensions/);
  });

  test('a text is closer to itself with a typo than to an unrelated text', async () => {
    const embedder = createFakeEmbedder({ dimensions: 16 });
    const pairs = [
      ['How do I set a signed cookie in a Koa response?', 'How do I set a signed cookie in a Koa respnose?', 'Database migrations run inside one transaction per file.'],
      ['useState returns a stateful value and a function to update it', 'useState returns a stateful valeu and a function to update it', 'The tar parser rejects symbolic links in archives'],
      ['middleware', 'middlewear', 'postgres'],
    ];
    for (const [text, typo, unrelated] of pairs) {
      const [v, t, u] = await embedder.embed([text, typo, unrelated], 'document');
      const close = cosineSimilarity(v, t);
      const far = cosineSimilarity(v, u);
      assert.ok(close > far, `${JSON.stringify(text)}: typo ${close.toFixed(3)} should beat unrelated ${far.toFixed(3)}`);
      assert.ok(close > 0.5, `typo similarity ${close.toFixed(3)}`);
    }
  });
});

describe('createFakeClock', () => {
  test('starts at the given time, moves only when told', () => {
    const clock = createFakeClock();
    assert.equal(clock.now().toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(clock.now().toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(clock.advance(1500).toISOString(), '2026-01-01T00:00:01.500Z');
    assert.equal(clock.now().toISOString(), '2026-01-01T00:00:01.500Z');
    clock.advance(24 * 3600 * 1000);
    assert.equal(clock.now().toISOString(), '2026-01-02T00:00:01.500Z');
    clock.set('2030-06-15T12:00:00Z');
    assert.equal(clock.now().toISOString(), '2030-06-15T12:00:00.000Z');
    const d = clock.now();
    d.setFullYear(1999);
    assert.equal(clock.now().getUTCFullYear(), 2030, 'now() hands out a copy');
    assert.equal(createFakeClock('2020-02-02T02:02:02.002Z').now().toISOString(), '2020-02-02T02:02:02.002Z');
    assert.throws(() => clock.set('not a date'), /ISO 8601/);
    assert.throws(() => createFakeClock('yesterday'), /ISO 8601/);
    assert.throws(() => clock.advance(Number.NaN), /finite/);
  });
});

describe('test kit exports', () => {
  test('createTestLogger is the one from run-source; index re-exports the kit', () => {
    assert.equal(createTestLogger, fromRunSource);
    const logger = createTestLogger();
    logger.warn('careful', { n: 1 });
    assert.deepEqual(logger.lines, [{ level: 'warn', message: 'careful', fields: { n: 1 } }]);
    for (const name of [
      'runSource',
      'createTestLogger',
      'runStoreContract',
      'sampleSnippet',
      'runSourceContract',
      'sourceDocumentProblems',
      'MemoryStore',
      'createFakeFetch',
      'createFakeEmbedder',
      'createFakeClock',
      'cosineSimilarity',
    ]) {
      assert.equal(typeof (kit as Record<string, unknown>)[name], 'function', `index exports ${name}`);
    }
  });
});
