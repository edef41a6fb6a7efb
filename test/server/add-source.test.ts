/**
 * Custom sources first-class (issue 23 item 4): a source plugin loaded from a test fixture
 * config is added through the generic route POST /api/v2/add/source/{kind} with its spec as the
 * payload, listed by GET /api/sources, its job runs for real, and the library answers through
 * /api/v2/context. Bad specs get the validator's message naming the field; unknown kinds a 404
 * with the list of kinds.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { bearer, call, createKey, qs, ROOT, startApiServer, type ApiServer } from './helpers/api-server.ts';

const SECRET = 'notes-token-5f3a9c1e77';

describe('POST /api/v2/add/source/{kind}', () => {
  let s: ApiServer;
  let key: string;
  const post = (path: string, json: unknown, headers: Record<string, string> = bearer(key)) => call(s.base, 'POST', path, { headers, json });

  before(async () => {
    s = await startApiServer({ plugins: [{ use: join(ROOT, 'test/fixtures/custom-source/notes-source.ts'), options: { notes: { greeting: 'Greetings' } } }] });
    key = await createKey(s.base, { name: 'member' });
  });
  after(() => s?.close());

  test('GET /api/sources lists the custom kind with its spec schema and add route', async () => {
    const r = await call(s.base, 'GET', '/api/sources');
    assert.equal(r.status, 200);
    const notes = r.body.sources.find((x: { kind: string }) => x.kind === 'notes');
    assert.ok(notes, JSON.stringify(r.body.sources.map((x: { kind: string }) => x.kind)));
    assert.equal(notes.title, 'Team notes');
    assert.equal(notes.idPrefix, 'notes');
    assert.equal(notes.addUrl, '/api/v2/add/source/notes');
    assert.deepEqual(notes.secretFields, ['token']);
    assert.deepEqual(notes.specSchema.required, ['project', 'topics']);
    const upload = r.body.sources.find((x: { kind: string }) => x.kind === 'upload');
    assert.equal(upload.addPayload, 'files');
    assert.equal(upload.addUrl, null);
  });

  test('the spec is the payload: 202 with libraryId and jobId; the job runs; context answers', async () => {
    const r = await post('/api/v2/add/source/notes', { project: 'Acme Handbook', topics: ['deploy rollback', 'rate limits'], token: SECRET, libraryTitle: 'Acme notes' });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.libraryId, '/notes/acme-handbook', 'no deriveId: /<idPrefix>/<slug of the first string field>, the secret skipped');
    assert.equal(r.body.libraryName, '/notes/acme-handbook');
    assert.match(r.body.jobId, /\S/);
    assert.equal(typeof r.body.statusUrl, 'string');
    assert.match(r.body.message, /Queued \/notes\/acme-handbook from the notes source/);
    await s.refdesk.jobs.idle();
    const job = (await s.kernel.store.listJobs({ libraryId: '/notes/acme-handbook' }))[0];
    assert.equal(job.state, 'succeeded', JSON.stringify(job.error));
    const ctx = await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/notes/acme-handbook', query: 'deploy rollback' }), { headers: bearer(key) });
    assert.equal(ctx.status, 200, ctx.text);
    assert.match(ctx.text, /Greetings from the Acme Handbook notes: the deploy rollback page explains `deploy_rollback\(\)`/);
    const lib = (await s.kernel.store.getLibrary('/notes/acme-handbook'))!;
    assert.equal(lib.title, 'Acme notes');
    assert.ok(!JSON.stringify(lib.source.spec).includes(SECRET), 'the writeOnly token is sealed in the store');
    assert.ok(!readFileSync(join(s.dataDir, 'refdesk.sqlite')).includes(SECRET), 'and not in the database file');
    // A second add of a served library is a 409, as on the other add routes.
    const again = await post('/api/v2/add/source/notes', { project: 'Acme Handbook', topics: ['x'] });
    assert.equal(again.status, 409, again.text);
    assert.equal(again.body.error, 'already_exists');
  });

  test('a bad spec is a 400 naming the field; nothing is created', async () => {
    const r = await post('/api/v2/add/source/notes', { project: 'Broken', topics: 'not-a-list' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error, 'invalid_request');
    assert.match(r.body.message, /spec\.topics: must be array/);
    const missing = await post('/api/v2/add/source/notes', { topics: ['a'] });
    assert.match(missing.body.message, /missing required property "project"/);
    const extra = await post('/api/v2/add/source/notes', { project: 'x', topics: ['a'], colour: 'red' });
    assert.match(extra.body.message, /unknown property "colour"/);
    const notObject = await post('/api/v2/add/source/notes', ['project']);
    assert.equal(notObject.status, 400);
    assert.equal(await s.kernel.store.getLibrary('/notes/broken'), null);
  });

  test('an unknown kind is a 404 listing the kinds; files-only kinds and callers without a key are refused', async () => {
    const r = await post('/api/v2/add/source/nosuch', { url: 'https://example.com' });
    assert.equal(r.status, 404, r.text);
    assert.equal(r.body.error, 'not_found');
    assert.match(r.body.message, /No source of kind "nosuch".*notes/);
    assert.ok(r.body.kinds.includes('notes') && r.body.kinds.includes('upload'));
    const upload = await post('/api/v2/add/source/upload', { path: '/etc' });
    assert.equal(upload.status, 400);
    assert.match(upload.body.message, /reads uploaded files/);
    const anonymous = await call(s.base, 'POST', '/api/v2/add/source/notes', { json: { project: 'Anon', topics: ['a'] } });
    assert.equal(anonymous.status, 401);
  });
});
