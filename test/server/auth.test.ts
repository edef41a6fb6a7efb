/**
 * The admin account, sessions, CSRF and Host checks, the login slow-down and lockout, and the
 * audit log (issue 18), against a real server on 127.0.0.1 with a fake clock and recorded
 * (not slept) sign-in delays.
 */
import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFakeClock, type FakeClock } from '../../core/testing/fakes.ts';
import { adminAuth, bearer, call, createKey, indexUpload, startApiServer, writeDocs, type ApiServer, type Reply } from './helpers/api-server.ts';
import { ensureSetupToken } from '../../server/auth/local-files.ts';
import { audit } from '../../server/audit.ts';
import { parseAllowedHosts } from '../../server/allowed-hosts.ts';

const NEW_PASSWORD = 'correct-horse-battery-staple-41';

let s: ApiServer;
let clock: FakeClock;
const delays: number[] = [];

/** The session cookie a sign-in set (name=value), or undefined. */
function cookieOf(r: Reply): string | undefined {
  const set = r.headers.getSetCookie().find((c) => c.startsWith('refdesk_session='));
  return set?.split(';')[0];
}

async function login(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ r: Reply; cookie: string; csrf: string }> {
  const r = await call(s.base, 'POST', '/api/auth/login', { json: body, headers });
  return { r, cookie: cookieOf(r) ?? '', csrf: r.body?.csrfToken };
}

/** Signs in with the factory credentials and changes them (the account is then `operator`). */
async function setUpAccount(): Promise<{ cookie: string; csrf: string }> {
  const first = await login({ username: 'admin', password: 'refdesk' });
  assert.equal(first.r.status, 200, first.r.text);
  const changed = await call(s.base, 'POST', '/api/auth/credentials', {
    json: { currentPassword: 'refdesk', newUsername: 'operator', newPassword: NEW_PASSWORD },
    headers: { cookie: first.cookie, 'x-csrf-token': first.csrf },
  });
  assert.equal(changed.status, 200, changed.text);
  return { cookie: first.cookie, csrf: changed.body.csrfToken };
}

/** A raw request with any Host header (fetch does not let a caller set Host). */
function withHost(path: string, host: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; body: any }> {
  const { port } = new URL(s.base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: Number(port), path, method, headers: { host, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function fresh(extra: Parameters<typeof startApiServer>[0] = {}): Promise<void> {
  await s?.close();
  delays.length = 0;
  clock = createFakeClock(new Date().toISOString());
  s = await startApiServer({ clock, ...extra, app: { auth: { sleep: async (ms) => void delays.push(ms) }, ...extra.app } });
}

describe('admin account and sessions', () => {
  beforeEach(async () => fresh());
  after(async () => s?.close());

  test('factory credentials: a session that must change them gets 403 credentials_change_required elsewhere until it does', async () => {
    const { r, cookie, csrf } = await login({ username: 'admin', password: 'refdesk' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.mustChangeCredentials, true);
    assert.match(r.headers.getSetCookie()[0], /HttpOnly/);
    assert.match(r.headers.getSetCookie()[0], /SameSite=Strict/);
    assert.doesNotMatch(r.headers.getSetCookie()[0], /Secure/, 'plain http on loopback: no Secure flag');
    for (const [method, path] of [
      ['GET', '/api/admin/keys'],
      ['GET', '/api/admin/libraries'],
      ['GET', '/api/audit'],
    ] as const) {
      const denied = await call(s.base, method, path, { headers: { cookie } });
      assert.equal(denied.status, 403, `${path}: ${denied.text}`);
      assert.equal(denied.body.error, 'credentials_change_required');
    }
    const post = await call(s.base, 'POST', '/api/admin/keys', { json: { name: 'x' }, headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(post.body.error, 'credentials_change_required');
    // Too short, then the factory password: 400 saying why.
    const short = await call(s.base, 'POST', '/api/auth/credentials', { json: { currentPassword: 'refdesk', newPassword: 'short' }, headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(short.status, 400);
    assert.match(short.body.message, /at least 12 characters/);
    const wrongCurrent = await call(s.base, 'POST', '/api/auth/credentials', { json: { currentPassword: 'nope', newPassword: NEW_PASSWORD }, headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(wrongCurrent.status, 401);
    const ok = await call(s.base, 'POST', '/api/auth/credentials', {
      json: { currentPassword: 'refdesk', newUsername: 'operator', newPassword: NEW_PASSWORD },
      headers: { cookie, 'x-csrf-token': csrf },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.mustChangeCredentials, false);
    assert.equal(ok.body.username, 'operator');
    assert.equal((await call(s.base, 'GET', '/api/admin/keys', { headers: { cookie } })).status, 200, 'the same session is now an admin');
    // The factory credentials are gone; the new ones work.
    assert.equal((await login({ username: 'admin', password: 'refdesk' })).r.status, 401);
    const again = await login({ username: 'operator', password: NEW_PASSWORD });
    assert.equal(again.r.status, 200);
    assert.equal(again.r.body.mustChangeCredentials, false);
  });

  test('factory credentials from a non-loopback-looking request need the setup token', async () => {
    const { token } = await ensureSetupToken(s.dataDir);
    assert.equal(readFileSync(join(s.dataDir, 'setup-token'), 'utf8').trim(), token);
    const proxied = { 'x-forwarded-for': '203.0.113.9' };
    const refused = await login({ username: 'admin', password: 'refdesk' }, proxied);
    assert.equal(refused.r.status, 403, refused.r.text);
    assert.match(refused.r.body.message, /setupToken/);
    assert.equal(refused.cookie, '', 'no session');
    const wrong = await login({ username: 'admin', password: 'refdesk', setupToken: 'x'.repeat(32) }, { forwarded: 'for=203.0.113.9' });
    assert.equal(wrong.r.status, 401);
    const ok = await login({ username: 'admin', password: 'refdesk', setupToken: token }, { ...proxied, 'x-forwarded-proto': 'https' });
    assert.equal(ok.r.status, 200, ok.r.text);
    assert.equal(ok.r.body.mustChangeCredentials, true);
    assert.match(ok.r.headers.getSetCookie()[0], /; Secure/, 'behind a proxy that says https: a Secure cookie');
    const noToken = await call(s.base, 'POST', '/api/auth/credentials', { json: { currentPassword: 'refdesk', newPassword: NEW_PASSWORD }, headers: { cookie: ok.cookie } });
    assert.equal(noToken.body.error, 'csrf_failed', 'changing the credentials needs the CSRF token too');
    // Changing the credentials removes the setup token.
    const changed = await call(s.base, 'POST', '/api/auth/credentials', {
      json: { currentPassword: 'refdesk', newPassword: NEW_PASSWORD },
      headers: { cookie: ok.cookie, 'x-csrf-token': ok.csrf },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(existsSync(join(s.dataDir, 'setup-token')), false);
  });

  test('wrong credentials answer 401; bad bodies 400', async () => {
    await setUpAccount();
    assert.equal((await login({ username: 'operator', password: 'wrong-password-123' })).r.status, 401);
    assert.equal((await login({ username: 'someone', password: NEW_PASSWORD })).r.status, 401);
    const bad = await login({ username: 'operator', password: 42 });
    assert.equal(bad.r.status, 400);
    assert.match(bad.r.body.message, /password/);
    assert.equal((await login({ username: 'operator', password: NEW_PASSWORD, extra: 1 })).r.status, 400);
  });

  test('sessions expire when idle (30 min) and at their absolute limit (12 h)', async () => {
    await setUpAccount();
    const a = await login({ username: 'operator', password: NEW_PASSWORD });
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: a.cookie } })).status, 200);
    clock.advance(29 * 60_000);
    const alive = await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: a.cookie } });
    assert.equal(alive.status, 200);
    assert.equal(alive.body.csrfToken, a.csrf);
    clock.advance(31 * 60_000);
    const idle = await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: a.cookie } });
    assert.equal(idle.status, 401);
    assert.match(idle.headers.getSetCookie()[0] ?? '', /Max-Age=0/, 'the cookie is cleared');
    const b = await login({ username: 'operator', password: NEW_PASSWORD });
    for (let i = 0; i < 12 * 3; i++) {
      clock.advance(20 * 60_000);
      const r = await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: b.cookie } });
      assert.equal(r.status, i < 35 ? 200 : 401, `after ${(i + 1) * 20} minutes`);
    }
  });

  test('logout ends this session; logout all ends every session', async () => {
    await setUpAccount();
    const a = await login({ username: 'operator', password: NEW_PASSWORD });
    const b = await login({ username: 'operator', password: NEW_PASSWORD });
    const c = await login({ username: 'operator', password: NEW_PASSWORD });
    const out = await call(s.base, 'POST', '/api/auth/logout', { headers: { cookie: a.cookie, 'x-csrf-token': a.csrf } });
    assert.equal(out.status, 200, out.text);
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: a.cookie } })).status, 401);
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: b.cookie } })).status, 200);
    const all = await call(s.base, 'POST', '/api/auth/logout', { json: { all: true }, headers: { cookie: b.cookie, 'x-csrf-token': b.csrf } });
    assert.equal(all.status, 200, all.text);
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: b.cookie } })).status, 401);
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: c.cookie } })).status, 401);
    // Logging out without a session only clears the cookie.
    assert.equal((await call(s.base, 'POST', '/api/auth/logout')).status, 200);
  });

  test('changing the credentials ends every other session and keeps the current one', async () => {
    const { cookie, csrf } = await setUpAccount();
    const other = await login({ username: 'operator', password: NEW_PASSWORD });
    const r = await call(s.base, 'POST', '/api/auth/credentials', {
      json: { currentPassword: NEW_PASSWORD, newPassword: NEW_PASSWORD + '-2' },
      headers: { cookie, 'x-csrf-token': csrf },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: other.cookie } })).status, 401);
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie } })).status, 200);
    assert.equal((await login({ username: 'operator', password: NEW_PASSWORD })).r.status, 401);
    assert.equal((await login({ username: 'operator', password: NEW_PASSWORD + '-2' })).r.status, 200);
  });

  test('CSRF: a cookie-authenticated change needs the token and the same origin (403 csrf_failed)', async () => {
    const { cookie, csrf } = await setUpAccount();
    const origin = s.base;
    const noToken = await call(s.base, 'POST', '/api/admin/keys', { json: { name: 'a' }, headers: { cookie } });
    assert.equal(noToken.status, 403);
    assert.equal(noToken.body.error, 'csrf_failed');
    const wrongToken = await call(s.base, 'POST', '/api/admin/keys', { json: { name: 'a' }, headers: { cookie, 'x-csrf-token': 'x'.repeat(43) } });
    assert.equal(wrongToken.body.error, 'csrf_failed');
    const crossOrigin = await call(s.base, 'POST', '/api/admin/keys', { json: { name: 'a' }, headers: { cookie, 'x-csrf-token': csrf, origin: 'http://evil.example' } });
    assert.equal(crossOrigin.status, 403);
    assert.equal(crossOrigin.body.error, 'csrf_failed');
    const crossReferer = await call(s.base, 'POST', '/api/admin/keys', { json: { name: 'a' }, headers: { cookie, 'x-csrf-token': csrf, referer: 'http://127.0.0.1:1/page' } });
    assert.equal(crossReferer.body.error, 'csrf_failed', 'another port is another origin');
    assert.equal((await call(s.base, 'GET', '/api/admin/keys', { headers: { cookie } })).status, 200, 'reads need no token');
    const withHeader = await call(s.base, 'POST', '/api/admin/keys', { json: { name: 'a' }, headers: { cookie, 'x-csrf-token': csrf, origin } });
    assert.equal(withHeader.status, 201, withHeader.text);
    // Form field: a plain HTML form posting to the server's own routes.
    const form = new URLSearchParams({ _csrf: csrf }).toString();
    const revoke = await call(s.base, 'DELETE', `/api/admin/keys/${withHeader.body.record.id}`, {
      body: form,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin },
    });
    assert.equal(revoke.status, 200, revoke.text);
    const logout = await call(s.base, 'POST', '/api/auth/logout', { body: new URLSearchParams({ _csrf: csrf, all: 'true' }).toString(), headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(logout.status, 200, logout.text);
    assert.equal(logout.body.ended, 1);
    // A sign-in from another site is refused too (login CSRF).
    const foreign = await login({ username: 'operator', password: NEW_PASSWORD }, { origin: 'http://evil.example' });
    assert.equal(foreign.r.status, 403);
    assert.equal(foreign.r.body.error, 'csrf_failed');
  });

  test('Host: the cookie routes and any request with the session cookie need an allowed host (403 forbidden_host)', async () => {
    const { cookie } = await setUpAccount();
    for (const path of ['/api/auth/session', '/api/admin/keys', '/api/audit', '/api/settings']) {
      const r = await withHost(path, 'evil.example:80', { cookie });
      assert.equal(r.status, 403, path);
      assert.equal(r.body.error, 'forbidden_host', path);
      assert.match(r.body.message, /ALLOWED_HOSTS/);
    }
    const login = await withHost('/api/auth/login', 'rebound.example', { 'content-type': 'application/json' }, 'POST');
    assert.equal(login.body.error, 'forbidden_host', 'whatever the method');
    const withKey = await withHost('/api/admin/keys', 'evil.example', adminAuth);
    assert.equal(withKey.body.error, 'forbidden_host');
    const publicWithCookie = await withHost('/api/v2/libs/search?libraryName=x&query=y', 'evil.example', { cookie });
    assert.equal(publicWithCookie.body.error, 'forbidden_host');
    const publicApi = await withHost('/api/v2/libs/search?libraryName=x&query=y', 'evil.example');
    assert.equal(publicApi.status, 200, 'the public API accepts any Host');
    assert.equal((await withHost('/api/auth/session', `localhost:${new URL(s.base).port}`, { cookie })).status, 200);
  });

  test('ALLOWED_HOSTS lets a named host sign in', async () => {
    await fresh({ app: { allowedHosts: parseAllowedHosts('docs.example.com', 'ALLOWED_HOSTS') } });
    await setUpAccount();
    assert.equal((await withHost('/api/auth/session', 'docs.example.com')).status, 401, 'allowed: not signed in');
    assert.equal((await withHost('/api/auth/session', 'other.example.com')).status, 403);
  });

  test('failed sign-ins are slowed down, then locked out (429 login_locked) after 10 in 15 minutes', async () => {
    await setUpAccount();
    for (let i = 0; i < 10; i++) assert.equal((await login({ username: 'operator', password: `wrong-${i}` })).r.status, 401);
    assert.equal(delays.length, 9, 'every failure after the first is delayed');
    for (let i = 1; i < delays.length; i++) assert.ok(delays[i] >= delays[i - 1], `delays grow: ${delays.join(', ')}`);
    assert.ok(delays.at(-1)! > delays[0]);
    const locked = await login({ username: 'operator', password: NEW_PASSWORD });
    assert.equal(locked.r.status, 429, 'even the right password while locked');
    assert.equal(locked.r.body.error, 'login_locked');
    const retry = Number(locked.r.headers.get('retry-after'));
    assert.ok(retry > 0 && retry <= 15 * 60, `Retry-After ${retry}`);
    assert.equal((await login({ username: 'someone-else', password: 'x' })).r.status, 401, 'per account: another name is not locked');
    clock.advance(15 * 60_000 + 1000);
    assert.equal((await login({ username: 'operator', password: NEW_PASSWORD })).r.status, 200, 'unlocked after the window');
  });

  test('admin keys work without a cookie or CSRF token; member keys and anonymous callers are refused', async () => {
    const adminKey = await createKey(s.base, { name: 'ops', role: 'admin' });
    const member = await createKey(s.base, { name: 'm' });
    const made = await call(s.base, 'POST', '/api/admin/keys', { json: { name: 'by-key' }, headers: bearer(adminKey) });
    assert.equal(made.status, 201, made.text);
    assert.equal((await call(s.base, 'GET', '/api/audit', { headers: bearer(adminKey) })).status, 200);
    const asMember = await call(s.base, 'GET', '/api/admin/keys', { headers: bearer(member) });
    assert.equal(asMember.status, 403);
    assert.equal(asMember.body.error, 'forbidden');
    const anon = await call(s.base, 'GET', '/api/admin/libraries', { anonymous: true });
    assert.equal(anon.status, 401);
    assert.equal((await call(s.base, 'GET', '/api/admin/libraries', { headers: { authorization: 'Bearer rdcli_not-the-token' } })).status, 401);
    // Member keys keep the public API.
    assert.equal((await call(s.base, 'GET', '/api/v2/libs/search?libraryName=x&query=y', { headers: bearer(member) })).status, 200);
  });

  test('account reset (the local CLI token only): back to the factory credentials, every session ended', async () => {
    const { cookie } = await setUpAccount();
    const adminKey = await createKey(s.base, { name: 'ops', role: 'admin' });
    const byKey = await call(s.base, 'POST', '/api/admin/account/reset', { json: {}, headers: bearer(adminKey) });
    assert.equal(byKey.status, 403, 'an admin key may not reset the account');
    assert.equal((await login({ username: 'operator', password: NEW_PASSWORD })).r.status, 200, 'nothing changed');
    const reset = await call(s.base, 'POST', '/api/admin/account/reset', { json: {} });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.sessionsEnded, 2);
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie } })).status, 401);
    assert.equal((await login({ username: 'operator', password: NEW_PASSWORD })).r.status, 401);
    const factory = await login({ username: 'admin', password: 'refdesk' });
    assert.equal(factory.r.status, 200);
    assert.equal(factory.r.body.mustChangeCredentials, true);
    assert.ok(existsSync(join(s.dataDir, 'setup-token')), 'a setup token for a remote first sign-in');
  });

  test('bad input to the auth routes gets a 4xx {error, message}, never a 500', async () => {
    const cases: Array<[string, string, RequestInit['body'], Record<string, string>, number]> = [
      ['POST', '/api/auth/login', '{"username":', { 'content-type': 'application/json' }, 400],
      ['POST', '/api/auth/login', '[1,2]', { 'content-type': 'application/json' }, 400],
      ['POST', '/api/auth/login', 'username=admin', { 'content-type': 'text/plain' }, 400],
      ['POST', '/api/auth/login', JSON.stringify({ username: 'a'.repeat(70_000), password: 'x' }), { 'content-type': 'application/json' }, 422],
      ['POST', '/api/auth/login', JSON.stringify({ username: 'admin' }), { 'content-type': 'application/json' }, 400],
      ['POST', '/api/auth/login', JSON.stringify({ username: ['admin'], password: 'refdesk' }), { 'content-type': 'application/json' }, 400],
      ['POST', '/api/auth/logout', '{"all": "yes"}', { 'content-type': 'application/json' }, 400],
      ['POST', '/api/auth/credentials', JSON.stringify({ currentPassword: 'refdesk', newPassword: NEW_PASSWORD }), { 'content-type': 'application/json' }, 401],
      ['GET', '/api/auth/session', undefined, { cookie: `refdesk_session=${'x'.repeat(5000)}` }, 401],
      ['GET', '/api/auth/session', undefined, { cookie: 'refdesk_session=%E0%A4%A' }, 401],
      ['GET', '/api/admin/keys', undefined, { cookie: 'refdesk_session=garbage; other=1' }, 401],
      ['GET', '/api/auth/nothing', undefined, {}, 404],
    ];
    for (const [method, path, body, headers, status] of cases) {
      const r = await call(s.base, method, path, { body, headers });
      assert.equal(r.status, status, `${method} ${path} ${String(body).slice(0, 40)}: ${r.text.slice(0, 300)}`);
      assert.equal(typeof r.body?.error, 'string');
      assert.equal(typeof r.body?.message, 'string');
    }
    const form = await call(s.base, 'POST', '/api/auth/login', { body: 'username=admin&password=refdesk', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 200, 'a plain HTML form signs in too');
  });

  test('the key list shows each key\'s use of the current rate-limit window', async () => {
    const member = await createKey(s.base, { name: 'm' });
    for (let i = 0; i < 3; i++) await call(s.base, 'GET', '/api/v2/libs/search?libraryName=x&query=y', { headers: bearer(member) });
    const list = await call(s.base, 'GET', '/api/admin/keys');
    const rec = list.body.keys.find((k: { name: string }) => k.name === 'm');
    assert.equal(rec.usage.used, 3);
    assert.equal(rec.usage.remaining, rec.usage.limit - 3);
    assert.ok(Date.parse(rec.usage.resetAt) > clock.now().getTime());
  });
});

describe('audit log', () => {
  before(async () => fresh());
  after(async () => s?.close());

  test('each admin action leaves an entry, newest first, paged; no secret in any entry', async () => {
    const { token: setupToken } = await ensureSetupToken(s.dataDir);
    const first = await login({ username: 'admin', password: 'refdesk' });
    const sessionId = first.cookie.split('=')[1];
    await login({ username: 'admin', password: 'planted-wrong-password-1' });
    await login({ username: 'planted-password-typed-as-username', password: 'x' });
    const changed = await call(s.base, 'POST', '/api/auth/credentials', {
      json: { currentPassword: 'refdesk', newPassword: NEW_PASSWORD },
      headers: { cookie: first.cookie, 'x-csrf-token': first.csrf },
    });
    assert.equal(changed.status, 200);
    const h = { cookie: first.cookie, 'x-csrf-token': changed.body.csrfToken };
    const made = await call(s.base, 'POST', '/api/admin/keys', { json: { name: 'audited', role: 'admin' }, headers: h });
    const key = made.body.key as string;
    await call(s.base, 'DELETE', `/api/admin/keys/${made.body.record.id}`, { headers: h });
    await call(s.base, 'PATCH', '/api/admin/settings', { json: { 'mcp.requireKey': true }, headers: h });
    const policyKey = await createKey(s.base, { name: 'policy', role: 'admin' });
    assert.equal((await call(s.base, 'PATCH', '/api/v2/policies', { json: { libraryFilters: { mode: 'select' } }, headers: bearer(policyKey) })).status, 200);
    await indexUpload(s.kernel, 'audited', writeDocs(s.scratch, 'audited', { 'a.md': '# A\n\nSome text.\n' }));
    assert.equal((await call(s.base, 'POST', '/api/admin/rename', { json: { from: '/docs/audited', to: '/docs/audited2' }, headers: h })).status, 200);
    assert.equal((await call(s.base, 'DELETE', '/api/admin/libraries/docs/audited2', { headers: h })).status, 200);
    await call(s.base, 'POST', '/api/auth/logout', { headers: h });

    const all = await call(s.base, 'GET', '/api/audit?limit=500');
    assert.equal(all.status, 200, all.text);
    const entries = all.body.entries as Array<{ id: number; action: string; outcome: string; actor: string; target: string | null; client: string }>;
    const seen = entries.map((e) => `${e.action}:${e.outcome}`);
    for (const want of [
      'auth.login:success',
      'auth.login:failure',
      'auth.credentials:success',
      'keys.create:success',
      'keys.revoke:success',
      'settings.change:success',
      'policy.change:success',
      'library.rename:success',
      'library.delete:success',
      'auth.logout:success',
    ]) {
      assert.ok(seen.includes(want), `${want} in ${seen.join(', ')}`);
    }
    for (let i = 1; i < entries.length; i++) assert.ok(entries[i].id < entries[i - 1].id, 'newest first');
    assert.equal(entries.find((e) => e.action === 'library.delete')!.target, '/docs/audited2');
    assert.deepEqual(entries.filter((e) => e.action === 'keys.create').map((e) => e.actor), ['cli', 'admin:admin'], 'the local CLI token, then the session');
    assert.ok(entries.every((e) => e.client.length > 0));
    const text = all.text;
    for (const secret of [NEW_PASSWORD, 'planted-wrong-password-1', 'planted-password-typed-as-username', setupToken, key, policyKey, sessionId, first.csrf, changed.body.csrfToken, 'refdesk"']) {
      assert.ok(!text.includes(secret), `the audit log holds a secret (${secret.slice(0, 6)}...)`);
    }
    // Paging.
    const page1 = await call(s.base, 'GET', '/api/audit?limit=2');
    assert.equal(page1.body.entries.length, 2);
    const page2 = await call(s.base, 'GET', `/api/audit?limit=2&before=${page1.body.nextBefore}`);
    assert.deepEqual(page2.body.entries.map((e: { id: number }) => e.id), entries.slice(2, 4).map((e) => e.id));
    assert.equal((await call(s.base, 'GET', '/api/audit?limit=0')).status, 400);
    assert.equal((await call(s.base, 'GET', '/api/audit?limit=9999')).status, 400);
    assert.equal((await call(s.base, 'GET', '/api/audit', { anonymous: true })).status, 401);
  });

  test('audit() drops secret-looking details and key-shaped strings its callers pass', async () => {
    const planted = 'rdk_' + 'A'.repeat(43);
    const saved = await audit(s.kernel, {
      actor: 'admin:x',
      action: 'settings.change',
      target: 'providers.openai',
      outcome: 'success',
      client: '127.0.0.1',
      details: { apiKey: 'sk-planted-123456', password: 'pw-planted-123', token: 'tok-planted-1234', note: `used ${planted}`, header: 'Authorization: Bearer abcdefghijklmnop', nested: { secret: 'nested-planted-1', ok: 1 } },
    });
    const text = JSON.stringify(saved);
    for (const secret of ['sk-planted-123456', 'pw-planted-123', 'tok-planted-1234', planted, 'abcdefghijklmnop', 'nested-planted-1']) assert.ok(!text.includes(secret), secret);
    assert.deepEqual((saved!.details.nested as Record<string, unknown>).ok, 1);
  });
});
