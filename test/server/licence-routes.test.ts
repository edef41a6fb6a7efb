/**
 * The licence over real HTTP: an expired licence blocks adding, uploading, refreshing and policy
 * changes (403 license_expired) and nothing else; GET /api/license shows the licence without the
 * key (email and issuer for admins only); GET /api/ready stays 200 when expired.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { bearer, call, createKey, indexUpload, qs, startApiServer, writeDocs, type ApiServer } from './helpers/api-server.ts';
import { listenOnLoopback } from '../helpers/listen.ts';

const LLMS = '# Gizmo\n\n## Setup\n\nRun `gizmo init` to create a gizmo project.\n';

describe('an expired licence: writes refused, reads and deletes served', () => {
  let s: ApiServer;
  let site: Server;
  let siteBase: string;
  let member: string;
  let admin: string;
  before(async () => {
    s = await startApiServer({ licence: { days: -2, licensee: 'Expired Co', email: 'ops@expired.example' } });
    site = createServer((_req, res) => void res.end(LLMS));
    siteBase = await listenOnLoopback(site);
    member = await createKey(s.base, { name: 'member' });
    admin = await createKey(s.base, { name: 'admin', role: 'admin' });
    await indexUpload(s.kernel, 'kept', writeDocs(s.scratch, 'kept', { 'a.md': '# Kept\n\n## Widgets\n\nA widget spins when you call `spin()`.\n' }));
    await indexUpload(s.kernel, 'doomed', writeDocs(s.scratch, 'doomed', { 'a.md': '# Doomed\n\n## Gone\n\nThis library will be deleted.\n' }));
  });
  after(async () => {
    site?.close();
    await s?.close();
  });

  const expectExpired = (r: { status: number; body: any; text: string }, what: RegExp) => {
    assert.equal(r.status, 403, r.text);
    assert.equal(r.body.error, 'license_expired');
    assert.match(r.body.message, what);
    assert.match(r.body.message, /expired on \d{4}-\d\d-\d\d.*Search, context, MCP and deleting keep working.*LICENSE_KEY/);
  };

  test('v2 add routes, the OpenAPI upload, refresh and policy changes answer 403 license_expired; nothing is queued', async () => {
    expectExpired(await call(s.base, 'POST', '/api/v2/add/llmstxt', { headers: bearer(member), json: { llmstxtUrl: `${siteBase}/llms.txt` } }), /Adding a library/);
    expectExpired(await call(s.base, 'POST', '/api/v2/add/repo/git', { headers: bearer(admin), json: { docsRepoUrl: `${siteBase}/repo.git` } }), /Adding a library/);
    const form = new FormData();
    form.append('openapiFile', new Blob(['{"openapi":"3.0.0","info":{"title":"X"},"paths":{}}'], { type: 'application/json' }), 'x.json');
    expectExpired(await call(s.base, 'POST', '/api/v2/add/openapi-upload', { headers: bearer(member), body: form }), /Adding a library/);
    expectExpired(await call(s.base, 'POST', '/api/v1/refresh', { headers: bearer(member), json: { libraryName: '/docs/kept' } }), /Refreshing a library/);
    expectExpired(await call(s.base, 'PATCH', '/api/v2/policies', { headers: bearer(admin), json: { libraryFilters: { mode: 'select' } } }), /Changing the policy/);
    // Authentication still comes first: no key is a 401, not a hint about the licence.
    assert.equal((await call(s.base, 'POST', '/api/v2/add/llmstxt', { json: { llmstxtUrl: `${siteBase}/llms.txt` } })).status, 401);
    const uploads = join(s.dataDir, 'uploads');
    assert.deepEqual(existsSync(uploads) ? readdirSync(uploads) : [], [], 'the refused upload left no file');
    assert.deepEqual((await s.kernel.store.listLibraries()).map((l) => l.id).sort(), ['/docs/doomed', '/docs/kept']);
  });

  test('the local admin add and upload routes answer 403 license_expired before reading the upload', async () => {
    expectExpired(await call(s.base, 'POST', '/api/admin/add', { json: { source: 'llmstxt', spec: { url: `${siteBase}/llms.txt` } } }), /Adding a library/);
    expectExpired(await call(s.base, 'POST', '/api/admin/upload?name=late', { headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(1024) }), /Adding a library/);
    assert.equal(await s.kernel.store.getLibrary('/docs/late'), null);
  });

  test('search, context and MCP keep answering; deleting still works', async () => {
    const found = await call(s.base, 'GET', '/api/v2/libs/search' + qs({ libraryName: 'kept', query: 'widget' }));
    assert.equal(found.status, 200, found.text);
    assert.ok(found.body.results.some((r: { id: string }) => r.id === '/docs/kept'));
    const ctx = await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/docs/kept', query: 'how does a widget spin' }));
    assert.equal(ctx.status, 200);
    assert.match(ctx.text, /spin\(\)/);
    const mcp = await call(s.base, 'POST', '/mcp', {
      headers: { accept: 'application/json, text/event-stream' },
      json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'resolve-library-id', arguments: { libraryName: 'kept', query: 'widget' } } },
    });
    assert.equal(mcp.status, 200, mcp.text);
    assert.match(mcp.text, /\/docs\/kept/);
    const del = await call(s.base, 'DELETE', '/api/admin/libraries/docs/doomed');
    assert.equal(del.status, 200, del.text);
    assert.equal(await s.kernel.store.getLibrary('/docs/doomed'), null);
  });

  test('GET /api/ready stays 200 with license "expired"; GET /api/license says expired, never the key', async () => {
    const ready = await call(s.base, 'GET', '/api/ready');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.license, 'expired');
    const anon = await call(s.base, 'GET', '/api/license');
    assert.equal(anon.status, 200);
    assert.equal(anon.body.state, 'expired');
    assert.equal(anon.body.daysLeft, 0);
    assert.equal(anon.body.licensee, 'Expired Co');
    assert.match(anon.body.warning, /expired on/);
    assert.equal(anon.body.email, undefined, 'no email for anonymous callers');
    assert.doesNotMatch(anon.text, /rdk1\.|ops@expired/);
    const asAdmin = await call(s.base, 'GET', '/api/license', { headers: bearer(admin) });
    assert.equal(asAdmin.body.email, 'ops@expired.example');
    assert.match(asAdmin.body.issuer, /^[0-9a-f]{16}$/);
    assert.doesNotMatch(asAdmin.text, /rdk1\./);
    const asMember = await call(s.base, 'GET', '/api/license', { headers: bearer(member) });
    assert.equal(asMember.body.email, undefined, 'no email for member keys');
  });
});

describe('a valid or expiring licence', () => {
  let s: ApiServer;
  let site: Server;
  let siteBase: string;
  before(async () => {
    s = await startApiServer({ licence: { days: 3, trial: true, licensee: 'Soon Ltd' } });
    site = createServer((_req, res) => void res.end(LLMS));
    siteBase = await listenOnLoopback(site);
  });
  after(async () => {
    site?.close();
    await s?.close();
  });

  test('an expiring licence still allows adding; /api/license warns with the days left', async () => {
    const key = await createKey(s.base, { name: 'member' });
    const added = await call(s.base, 'POST', '/api/v2/add/llmstxt', { headers: bearer(key), json: { llmstxtUrl: `${siteBase}/llms.txt` } });
    assert.equal(added.status, 200, added.text);
    await s.refdesk.jobs.idle();
    const lic = await call(s.base, 'GET', '/api/license');
    assert.equal(lic.body.state, 'expiring');
    assert.equal(lic.body.trial, true);
    assert.equal(lic.body.daysLeft, 3);
    assert.match(lic.body.warning, /expires on .*3 days left/);
    assert.equal((await call(s.base, 'GET', '/api/ready')).body.license, 'expiring');
  });
});
