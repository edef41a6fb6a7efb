/**
 * /api/settings, /api/settings/test and /api/setup over real HTTP, the anonymous refresh
 * permission changing on a running app, and policy changes by an admin session.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Context } from 'koa';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { createConsoleLogger } from '../../core/services.ts';
import type { SessionInfo } from '../../server/access.ts';
import { hashPassword } from '../../server/auth/passwords.ts';
import type { SettingsAuditEntry } from '../../server/routes/settings.ts';
import { bearer, call, createKey, startApiServer, type ApiServer } from './helpers/api-server.ts';
import { listenOnLoopback } from '../helpers/listen.ts';
import { startServer, send } from '../helpers/route-server.ts';

const LLM_KEY = 'sk-PlantedLlmKeyValue-0a1b2c3d4e5f';
const EMBED_KEY = 'AIzaPlantedEmbeddingKey-99887766';
const GH_TOKEN = 'ghp_PlantedGithubToken_1122334455';
const HOST_TOKEN = 'glpat-PlantedHostToken-5566778899';
const PLANTED = [LLM_KEY, EMBED_KEY, GH_TOKEN, HOST_TOKEN];

/** Sessions as the auth module will give them: a cookie naming a session (test double of SessionResolver). */
const SESSIONS: Record<string, SessionInfo> = {
  admin: { id: 's1', username: 'root', csrfToken: 'c1', mustChangeCredentials: false },
  factory: { id: 's2', username: 'admin', csrfToken: 'c2', mustChangeCredentials: true },
};
const sessionOf = async (ctx: Context) => SESSIONS[/sid=(\w+)/.exec(ctx.get('cookie'))?.[1] ?? ''] ?? null;
const cookie = (name: string) => ({ cookie: `sid=${name}` });

let s: ApiServer;
let admin: string;
let member: string;
let site: Server;
let siteBase: string;
const logLines: string[] = [];
const audits: SettingsAuditEntry[] = [];

const get = (headers: Record<string, string> = {}) => call(s.base, 'GET', '/api/settings', { headers });
const patch = (json: unknown, headers: Record<string, string> = bearer(admin)) => call(s.base, 'PATCH', '/api/settings', { headers, json });

function assertNoSecret(text: string, where: string) {
  for (const p of PLANTED) {
    assert.ok(!text.includes(p), `${where} holds a planted secret`);
    assert.ok(!text.includes(Buffer.from(p).toString('base64')), `${where} holds a planted secret in base64`);
    assert.ok(!text.includes(p.slice(0, -4)), `${where} holds most of a planted secret`);
  }
}

describe('settings over HTTP', () => {
  before(async () => {
    s = await startApiServer({
      logger: createConsoleLogger('debug', (l) => logLines.push(l)),
      app: { access: { sessions: { sessionOf } }, settings: { audit: (e) => void audits.push(e) } },
    });
    admin = await createKey(s.base, { name: 'admin', role: 'admin' });
    member = await createKey(s.base, { name: 'member' });
    site = createServer((req, res) => {
      if (req.url === '/llms.txt') return void res.end('# Gizmo\n\n## Setup\n\nRun `gizmo init` to create a gizmo project.\n');
      res.statusCode = 404;
      res.end();
    });
    siteBase = await listenOnLoopback(site);
  });
  after(async () => {
    site?.close();
    await s?.close();
  });

  test('admins only: anonymous 401, member key 403, factory-credentials session 403; admin key and admin session 200', async () => {
    assert.equal((await get()).status, 401);
    assert.equal((await get()).body.error, 'unauthorized');
    const m = await get(bearer(member));
    assert.equal(m.status, 403);
    assert.equal(m.body.error, 'forbidden');
    assert.equal((await get(cookie('factory'))).body.error, 'credentials_change_required');
    assert.equal((await patch({ anonymous: { refresh: true } }, bearer(member))).status, 403);
    assert.equal((await call(s.base, 'POST', '/api/settings/test', { headers: bearer(member) })).status, 403);
    const a = await get(bearer(admin));
    assert.equal(a.status, 200);
    assert.deepEqual(a.body.anonymous, { parse: false, refresh: false, delete: false, supportBundle: false }, 'every anonymous permission is Off by default');
    assert.deepEqual(a.body.mcp, { requireKey: false });
    assert.deepEqual(a.body.llm, { provider: null, model: null, baseUrl: null, apiKey: { set: false } });
    assert.equal((await get(cookie('admin'))).status, 200);
  });

  test('secrets are write-only: set and last four in GET, sealed in the store, never in answers, logs or audit entries', async () => {
    const r = await patch({
      llm: { provider: 'openai', apiKey: LLM_KEY },
      embedding: { provider: 'gemini', apiKey: EMBED_KEY },
      git: { githubToken: GH_TOKEN, hosts: [{ host: 'git.acme.internal', provider: 'gitlab', token: HOST_TOKEN }] },
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.llm.apiKey, { set: true, last4: LLM_KEY.slice(-4) });
    assert.deepEqual(r.body.embedding.apiKey, { set: true, last4: EMBED_KEY.slice(-4) });
    assert.deepEqual(r.body.git.githubToken, { set: true, last4: GH_TOKEN.slice(-4) });
    assert.deepEqual(r.body.git.hosts, [{ host: 'git.acme.internal', provider: 'gitlab', token: { set: true, last4: HOST_TOKEN.slice(-4) } }]);
    assert.equal(r.body.effective.llm.baseUrl, 'https://api.openai.com/v1');
    assert.equal(r.body.effective.embedding.keyFrom, 'embedding');
    assert.ok(r.body.changed.includes('llm.apiKey'));
    const g = await get(bearer(admin));
    assertNoSecret(g.text, 'GET /api/settings');
    assertNoSecret(r.text, 'the PATCH answer');
    for (const k of ['llm', 'embedding', 'git']) assertNoSecret(JSON.stringify(await s.kernel.store.getSetting(k)), `stored setting ${k}`);
    // A refused change does not echo the secret it carried.
    const bad = await patch({ llm: { provider: 'openai', apiKey: LLM_KEY, colour: 'red' } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /llm: unknown property "colour"/);
    assertNoSecret(bad.text, 'a 400 answer');
    assert.ok(audits.some((a) => a.action === 'settings.change' && a.outcome === 'success' && a.actor.startsWith('key:')));
    assert.ok(audits.some((a) => a.outcome === 'failure' && a.details?.error === 'invalid_request'));
    assertNoSecret(JSON.stringify(audits), 'the audit entries');
    assertNoSecret(logLines.join('\n'), 'the server log');
  });

  test('a change is validated with messages naming the field; unknown fields refused; nothing half-written', async () => {
    const before = await get(bearer(admin));
    const cases: Array<[unknown, RegExp]> = [
      [{ llm: { provider: 'mistral' } }, /llm\.provider: must be one of/],
      [{ anonymous: { refresh: 'yes' } }, /anonymous\.refresh: must be boolean/],
      [{ mcp: { requireKey: true, extra: 1 } }, /mcp: unknown property "extra"/],
      [{ smtp: { host: 'x' } }, /unknown property "smtp"/],
      [{ llm: { provider: 'custom' } }, /llm\.baseUrl: the custom provider needs/],
      [{ anonymous: { refresh: true }, llm: { baseUrl: 'file:///etc/passwd' } }, /llm\.baseUrl: must be an http or https URL/],
    ];
    for (const [body, re] of cases) {
      const r = await patch(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error, 'invalid_request');
      assert.match(r.body.message, re);
    }
    const notJson = await call(s.base, 'PATCH', '/api/settings', { headers: { ...bearer(admin), 'content-type': 'application/json' }, body: '{"llm":' });
    assert.equal(notJson.status, 400);
    assert.deepEqual((await get(bearer(admin))).body, before.body, 'refused changes left everything as it was');
  });

  test('changing the provider or base URL without the key clears the stored key', async () => {
    const r = await patch({ llm: { provider: 'anthropic' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.llm.apiKey, { set: false });
    assert.deepEqual(r.body.cleared, ['llm.apiKey']);
    const e = await patch({ embedding: { baseUrl: 'https://proxy.acme.io/v1beta' } });
    assert.deepEqual(e.body.embedding.apiKey, { set: false });
    assert.deepEqual(e.body.cleared, ['embedding.apiKey']);
    // Anthropic without an embedding key: embeddings have no key; the LLM's key does not follow to Gemini.
    await patch({ llm: { apiKey: LLM_KEY } });
    const g = await get(bearer(admin));
    assert.equal(g.body.effective.embedding.keyFrom, null);
  });

  test('mcp.requireKey: the same setting as the old /api/admin/settings, and it applies to /mcp at once', async () => {
    const mcp = () => call(s.base, 'POST', '/mcp', { headers: { accept: 'application/json, text/event-stream' }, json: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    assert.notEqual((await mcp()).status, 401);
    assert.equal((await patch({ mcp: { requireKey: true } })).body.mcp.requireKey, true);
    assert.equal((await call(s.base, 'GET', '/api/admin/settings')).body['mcp.requireKey'], true);
    assert.equal((await mcp()).status, 401);
    await call(s.base, 'PATCH', '/api/admin/settings', { json: { 'mcp.requireKey': false } });
    assert.equal((await get(bearer(admin))).body.mcp.requireKey, false);
    assert.notEqual((await mcp()).status, 401);
  });

  test('anonymous refresh: Off needs a key; turned On through PATCH, the same running app lets an anonymous caller refresh; Off again refuses', async () => {
    const { library, job } = await addLibrary(s.kernel, { source: 'llmstxt', id: '/llmstxt/gizmo', spec: { url: `${siteBase}/llms.txt` } });
    assert.equal((await runIngestJob(s.kernel, job.id)).state, 'succeeded');
    const refresh = (json: unknown, headers: Record<string, string> = {}) => call(s.base, 'POST', '/api/v1/refresh', { headers, json });
    const off = await refresh({ libraryName: library.id });
    assert.equal(off.status, 401);
    assert.equal(off.body.error, 'invalid_api_key', 'the public contract of /api/v1/refresh is kept');

    assert.equal((await patch({ anonymous: { refresh: true } })).body.anonymous.refresh, true);
    const on = await refresh({ libraryName: library.id });
    assert.equal(on.status, 200, on.text);
    assert.equal(on.body.libraryName, library.id);
    await s.refdesk.jobs.idle();
    const forbidden = await refresh({ libraryName: library.id, gitToken: 'x'.repeat(20) });
    assert.equal(forbidden.status, 403);
    assert.match(forbidden.body.message, /needs an API key or an admin/);

    await patch({ anonymous: { refresh: false } });
    assert.equal((await refresh({ libraryName: library.id })).status, 401);
    // Keys keep working whatever the permission; an admin session works too.
    assert.equal((await refresh({ libraryName: library.id }, bearer(member))).status, 200);
    assert.equal((await refresh({ libraryName: library.id }, cookie('admin'))).status, 200);
    assert.equal((await refresh({ libraryName: library.id }, cookie('factory'))).body.error, 'credentials_change_required');
  });

  test('policies: an admin session may change them, not only an admin key', async () => {
    const p = await call(s.base, 'PATCH', '/api/v2/policies', { headers: cookie('admin'), json: { sourceTypes: { disable: ['websites'] } } });
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.sourceTypes.websites.enabled, false);
    assert.equal((await call(s.base, 'PATCH', '/api/v2/policies', { headers: cookie('factory'), json: {} })).body.error, 'credentials_change_required');
    assert.equal((await call(s.base, 'PATCH', '/api/v2/policies', { json: {} })).status, 401);
    assert.equal((await call(s.base, 'PATCH', '/api/v2/policies', { headers: bearer(member), json: {} })).status, 403);
    await call(s.base, 'PATCH', '/api/v2/policies', { headers: bearer(admin), json: { sourceTypes: { enable: ['websites'] } } });
  });

  test('POST /api/settings/test tries the saved endpoints and reports per provider, never the key', async (t) => {
    const vendor = await startServer((req, res, url) => {
      if (req.headers.authorization !== `Bearer ${LLM_KEY}`) return send(res, 401, JSON.stringify({ error: { message: `Incorrect API key provided: ${req.headers.authorization}` } }), 'application/json');
      if (url.pathname === '/v1/models') return send(res, 200, JSON.stringify({ data: [{ id: 'llama3' }] }), 'application/json');
      if (url.pathname === '/v1/embeddings') return send(res, 200, JSON.stringify({ data: [{ embedding: [1, 2] }] }), 'application/json');
      send(res, 404, '{}', 'application/json');
    }, t);
    await patch({ llm: { provider: 'custom', baseUrl: `${vendor.base}/v1`, model: 'llama3', apiKey: LLM_KEY }, embedding: { provider: null, model: 'nomic-embed-text' } });
    const ok = await call(s.base, 'POST', '/api/settings/test', { headers: bearer(admin) });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.ok, true, ok.text);
    assert.equal(ok.body.llm.ok, true);
    assert.equal(ok.body.embedding.dimensions, 2);
    assert.ok(vendor.requests.some((r) => r.path === '/v1/embeddings'));

    await patch({ llm: { apiKey: 'sk-wrong-wrong-wrong-wrong' } });
    const bad = await call(s.base, 'POST', '/api/settings/test', { headers: bearer(admin), json: { timeoutMs: 2000 } });
    assert.equal(bad.body.ok, false);
    assert.equal(bad.body.llm.status, 401);
    assert.ok(!bad.text.includes('sk-wrong-wrong'), 'the key the vendor echoed is redacted');
    assertNoSecret(bad.text, 'the test answer');
    assert.equal((await call(s.base, 'POST', '/api/settings/test', { headers: bearer(admin), json: { timeoutMs: 0 } })).status, 400);
    assert.equal((await call(s.base, 'POST', '/api/settings/test', { headers: bearer(admin), json: { llm: {} } })).status, 400);
    assertNoSecret(logLines.join('\n'), 'the server log');
  });

  test('GET /api/setup: what is left to do, for admins and a factory-credentials session', async () => {
    assert.equal((await call(s.base, 'GET', '/api/setup')).status, 401);
    assert.equal((await call(s.base, 'GET', '/api/setup', { headers: bearer(member) })).status, 403);
    const first = await call(s.base, 'GET', '/api/setup', { headers: cookie('factory') });
    assert.equal(first.status, 200);
    assert.equal(first.body.done, false);
    assert.deepEqual(first.body.steps.map((x: any) => x.id), ['credentials', 'provider', 'git-token']);
    assert.equal(first.body.steps[0].done, false, 'factory credentials: not done');
    for (const step of first.body.steps) assert.ok(step.title && step.description);

    await patch({ llm: null, embedding: null, git: null });
    // The store says whether the factory credentials were changed, whoever asks.
    const unchanged = await call(s.base, 'GET', '/api/setup', { headers: bearer(admin) });
    assert.deepEqual(unchanged.body.steps.map((x: any) => x.done), [false, false, false]);
    await s.kernel.store.setAdminAccount({ username: 'ops', passwordHash: await hashPassword('a long new password'), updatedAt: new Date().toISOString() });
    const none = await call(s.base, 'GET', '/api/setup', { headers: bearer(admin) });
    assert.deepEqual(none.body.steps.map((x: any) => x.done), [true, false, false]);
    await patch({ llm: { provider: 'gemini', apiKey: EMBED_KEY } });
    await patch({ git: { hosts: [{ host: 'git.acme.internal', provider: 'github', token: HOST_TOKEN }] } });
    const all = await call(s.base, 'GET', '/api/setup', { headers: cookie('admin') });
    assert.equal(all.body.done, true, all.text);
    assertNoSecret(all.text, 'GET /api/setup');
  });
});
