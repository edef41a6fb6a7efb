/**
 * GET /api/libraries?q=&state=: the filters the web UI's /libraries page uses (the page and the
 * route call the same function, server/api/library-views.ts).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, indexUpload, startApiServer, writeDocs, type ApiServer } from './helpers/api-server.ts';
import { addLibrary } from '../../core/ingest.ts';

let s: ApiServer;

before(async () => {
  s = await startApiServer();
  await indexUpload(s.kernel, 'koa', writeDocs(s.scratch, 'koa', { 'a.md': '# Koa\n\nMiddleware.\n' }), { title: 'Koa web framework', description: 'Expressive middleware' });
  await indexUpload(s.kernel, 'hono', writeDocs(s.scratch, 'hono', { 'a.md': '# Hono\n\nRoutes.\n' }), { title: 'Hono', description: 'Small web framework' });
  // Queued, never run (the test server's job runner is not given it): `processing`.
  await addLibrary(s.kernel, { source: 'upload', name: 'pending', spec: { path: writeDocs(s.scratch, 'pending', { 'a.md': '# P\n' }) } });
});
after(async () => s?.close());

const ids = async (query: string): Promise<string[]> => {
  const r = await call(s.base, 'GET', `/api/libraries${query}`);
  assert.equal(r.status, 200, r.text);
  return r.body.libraries.map((l: { id: string }) => l.id).sort();
};

test('no filter: every library', async () => {
  assert.deepEqual(await ids(''), ['/docs/hono', '/docs/koa', '/docs/pending']);
});

test('q: every word in the ID, title or description, any case', async () => {
  assert.deepEqual(await ids('?q=FRAMEWORK'), ['/docs/hono', '/docs/koa']);
  assert.deepEqual(await ids('?q=web%20expressive'), ['/docs/koa']);
  assert.deepEqual(await ids('?q=docs/hon'), ['/docs/hono']);
  assert.deepEqual(await ids('?q=nothing'), []);
  assert.deepEqual(await ids('?q='), ['/docs/hono', '/docs/koa', '/docs/pending'], 'an empty q is no filter');
});

test('state, alone and with q', async () => {
  assert.deepEqual(await ids('?state=finalized'), ['/docs/hono', '/docs/koa']);
  assert.deepEqual(await ids('?state=processing'), ['/docs/pending']);
  assert.deepEqual(await ids('?state=initial'), []);
  assert.deepEqual(await ids('?state=finalized&q=hono'), ['/docs/hono']);
  assert.deepEqual(await ids('?state=error'), []);
});

test('bad filters: 400 invalid_request saying what to fix', async () => {
  for (const [query, why] of [
    ['?state=exploded', /must be one of initial, processing, finalized, error/],
    ['?state=finalized&state=error', /"state" must be given once/],
    [`?q=${'x'.repeat(201)}`, /"q" must be at most 200 characters/],
  ] as const) {
    const r = await call(s.base, 'GET', `/api/libraries${query}`);
    assert.equal(r.status, 400, query);
    assert.equal(r.body.error, 'invalid_request');
    assert.match(r.body.message, why);
  }
});
