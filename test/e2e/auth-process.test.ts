/**
 * Sign-in and the local tokens with the real server process: the setup token printed at the first
 * start and kept in DATA_DIR/setup-token (0600), the CLI token in DATA_DIR/cli-token (0600, new at
 * every start) that the `refdesk` CLI uses for the admin routes, the ALLOWED_HOSTS hint of a
 * server bound to every interface, and no secret in the server's log.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runRefdesk, startServer } from './refdesk-process.ts';
import { processDataDirs } from '../helpers/process-data-dirs.ts';

const dataDir = processDataDirs('refdesk-auth-');

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

async function post(base: string, path: string, json: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; cookie: string }> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(json) });
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('refdesk_session='))?.split(';')[0] ?? '';
  return { status: res.status, body: await res.json(), cookie };
}

describe('sign-in with the real server', { timeout: 180_000 }, () => {
  test('setup token and CLI token: printed, kept 0600, used; the CLI works through the admin routes; nothing secret in the log', async () => {
    const dir = dataDir();
    // Debug logging: every line the server can write is checked for secrets below.
    let server = await startServer(dir, 30_000, { LOG_LEVEL: 'debug' });
    const setupFile = join(dir, 'setup-token');
    const cliFile = join(dir, 'cli-token');
    const setupToken = readFileSync(setupFile, 'utf8').trim();
    assert.equal(mode(setupFile), '600');
    assert.equal(mode(cliFile), '600');
    assert.ok(server.stdout().includes(setupToken), 'the setup token is printed at start');
    assert.match(server.stdout(), /First sign-in: user "admin", password "refdesk"/);

    // The CLI: keys through the running server, recorded as the local CLI in the audit log.
    const created = await runRefdesk(['keys', 'create', '--name', 'via-cli'], dir);
    assert.equal(created.code, 0, created.stderr);
    const audit = await fetch(`${server.base}/api/audit`, { headers: server.adminAuth }).then((r) => r.json() as Promise<{ entries: Array<{ action: string; actor: string }> }>);
    assert.ok(audit.entries.some((e) => e.action === 'keys.create' && e.actor === 'cli'), JSON.stringify(audit.entries));

    // Factory credentials from a proxied request: refused without the setup token, accepted with it.
    const proxied = { 'x-forwarded-for': '198.51.100.7' };
    assert.equal((await post(server.base, '/api/auth/login', { username: 'admin', password: 'refdesk' }, proxied)).status, 403);
    const ok = await post(server.base, '/api/auth/login', { username: 'admin', password: 'refdesk', setupToken }, proxied);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const newPassword = 'planted-password-for-the-log-check';
    const changed = await post(server.base, '/api/auth/credentials', { currentPassword: 'refdesk', newPassword }, { cookie: ok.cookie, 'x-csrf-token': ok.body.csrfToken });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal((await post(server.base, '/api/auth/login', { username: 'admin', password: 'wrong-planted-password' })).status, 401);

    // A restart writes a new CLI token; the old one no longer works; the setup token is gone.
    const oldAuth = server.adminAuth;
    await server.stop();
    let log = server.stderr();
    server = await startServer(dir, 30_000, { LOG_LEVEL: 'debug' });
    assert.notEqual(server.adminAuth.authorization, oldAuth.authorization);
    assert.equal((await fetch(`${server.base}/api/admin/libraries`, { headers: oldAuth })).status, 401);
    assert.equal((await fetch(`${server.base}/api/admin/libraries`, { headers: server.adminAuth })).status, 200);
    assert.doesNotMatch(server.stdout(), /First sign-in/, 'credentials changed: no factory notice');
    const list = await runRefdesk(['keys', 'list'], dir);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /\tvia-cli\t/);
    // Lost password: `refdesk account reset` through the running server, then on the data directory.
    const reset = await runRefdesk(['account', 'reset'], dir);
    assert.equal(reset.code, 0, reset.stderr);
    assert.match(reset.stdout, /factory credentials/);
    const local = await post(server.base, '/api/auth/login', { username: 'admin', password: 'refdesk' });
    assert.equal(local.status, 200, 'from this machine after the reset');
    assert.equal(local.body.mustChangeCredentials, true);
    await server.stop();
    log += server.stderr();
    const offline = await runRefdesk(['account', 'reset'], dir);
    assert.equal(offline.code, 0, offline.stderr);
    assert.match(offline.stdout, /0 session\(s\) ended|1 session\(s\) ended/);
    for (const secret of [setupToken, newPassword, 'wrong-planted-password', ok.cookie.split('=')[1], ok.body.csrfToken, server.adminAuth.authorization.slice(7)]) {
      assert.ok(!log.includes(secret), `the server log holds a secret (${secret.slice(0, 6)}...)`);
    }
  });

  test('bound to every interface without ALLOWED_HOSTS, the server says how to set it', async () => {
    const dir = dataDir();
    const server = await startServer(dir, 30_000, { HOST: '0.0.0.0' });
    assert.match(server.stdout(), /ALLOWED_HOSTS/);
    await server.stop();
    const named = await startServer(dir, 30_000, { HOST: '0.0.0.0', ALLOWED_HOSTS: 'docs.example.com' });
    assert.doesNotMatch(named.stdout(), /no allowed hosts are set/);
    await named.stop();
  });
});
