/**
 * `refdesk serve` and `refdesk demo` with their licence, as real processes: a missing, malformed,
 * tampered or untrusted key (or a bad LICENSE_ISSUER_KEYS) starts nothing: one line, exit 1, no
 * port, no data directory. An expired key starts read-only; a key near expiry warns; the demo
 * runs on a throwaway local issuer.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { httpGet, runRefdesk, spawnRefdesk, startServer, stopProcess } from './refdesk-process.ts';
import { processDataDirs } from '../helpers/process-data-dirs.ts';
import { testIssuer, testIssuerEnv, testLicenceKey } from '../helpers/licence.ts';
import { generateIssuerKeyPair, signLicence, addDays } from '../../server/licence-keys.ts';

const newDir = processDataDirs('refdesk-licence-e2e-');

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function refused(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/ping`, { signal: AbortSignal.timeout(3000) }).then(
    () => false,
    () => true,
  );
}

function tamper(key: string): string {
  const [prefix, payload, sig] = key.split('.');
  const p = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  p.expiresAt = '2099-12-31T00:00:00.000Z';
  return `${prefix}.${Buffer.from(JSON.stringify(p)).toString('base64url')}.${sig}`;
}

describe('refdesk serve refuses to start without a valid licence', () => {
  const stranger = generateIssuerKeyPair();
  const foreignKey = signLicence(stranger, { licensee: 'Someone', issuedAt: new Date(), expiresAt: addDays(new Date(), 30) });
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['missing', { LICENSE_KEY: '' }, /^refdesk: LICENSE_KEY is not set: refdesk serve needs a licence key\./],
    ['malformed', { LICENSE_KEY: 'rdk1.not-a-key' }, /^refdesk: LICENSE_KEY is malformed/],
    ['tampered', { LICENSE_KEY: tamper(testLicenceKey()) }, /^refdesk: LICENSE_KEY has been altered/],
    ['untrusted', { LICENSE_KEY: foreignKey }, /^refdesk: LICENSE_KEY is signed by an issuer this installation does not trust/],
    ['untrusted (no LICENSE_ISSUER_KEYS)', { LICENSE_ISSUER_KEYS: '' }, /^refdesk: LICENSE_KEY is signed by an issuer this installation does not trust/],
    ['a bad LICENSE_ISSUER_KEYS', { LICENSE_ISSUER_KEYS: `${testIssuer.publicKey.line},rdk-issuer-ed25519:nope` }, /^refdesk: LICENSE_ISSUER_KEYS entry 2 of 2: /],
  ];
  for (const [name, env, line] of cases) {
    test(`${name}: one line, exit 1, nothing listening, no data directory`, async () => {
      const dataDir = join(newDir(), 'data');
      const port = await freePort();
      const r = await runRefdesk(['serve'], dataDir, 30_000, { PORT: String(port), LICENSE_TRIAL_URL: 'http://issuer.test:3080', ...env });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], line);
      if (name !== 'a bad LICENSE_ISSUER_KEYS') {
        assert.match(lines[0], /refdesk license trial --issuer http:\/\/issuer\.test:3080 --email .* --organization/);
      }
      assert.ok(!r.stderr.includes(env.LICENSE_KEY || 'rdk1.never'), 'the key is not echoed');
      assert.equal(existsSync(dataDir), false, 'nothing was created');
      assert.ok(await refused(port), 'nothing listens');
    });
  }
});

describe('refdesk serve with an expired or expiring licence', () => {
  test('expired: starts, says so in the log, serves search, refuses adding with 403 license_expired; /api/ready 200', async () => {
    const dataDir = newDir();
    const added = await runRefdesk(['add', join(import.meta.dirname, '..', '..', 'docs'), '--name', 'manual'], dataDir, 120_000);
    assert.equal(added.code, 0, added.stderr);
    const server = await startServer(dataDir, 60_000, testIssuerEnv({ days: -3, licensee: 'Lapsed Inc' }));
    try {
      await server.waitFor('stderr', /licence expired on \d{4}-\d\d-\d\d/i, 10_000);
      const key = await fetch(`${server.base}/api/admin/keys`, { method: 'POST', headers: { 'content-type': 'application/json', ...server.adminAuth }, body: JSON.stringify({ name: 'k' }) }).then((r) => r.json() as Promise<{ key: string }>);
      const add = await fetch(`${server.base}/api/v2/add/llmstxt`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` },
        body: JSON.stringify({ llmstxtUrl: 'http://127.0.0.1:9/llms.txt' }),
      });
      assert.equal(add.status, 403);
      assert.equal(((await add.json()) as { error: string }).error, 'license_expired');
      const search = await httpGet(`${server.base}/api/v2/libs/search?libraryName=manual&query=add`);
      assert.equal(search.status, 200);
      assert.ok(search.body.results.some((l: { id: string }) => l.id === '/docs/manual'));
      const ready = await httpGet(`${server.base}/api/ready`);
      assert.equal(ready.status, 200);
      assert.equal(ready.body.license, 'expired');
      assert.equal((await httpGet(`${server.base}/api/license`)).body.licensee, 'Lapsed Inc');
    } finally {
      await server.stop();
    }
  });

  test('within 7 days of expiry: a warning at start and on /api/license', async () => {
    const server = await startServer(newDir(), 60_000, testIssuerEnv({ days: 2, trial: true }));
    try {
      await server.waitFor('stderr', /trial licence expires on \d{4}-\d\d-\d\d \(2 days left\)/, 10_000);
      const lic = await httpGet(`${server.base}/api/license`);
      assert.equal(lic.body.state, 'expiring');
      assert.match(lic.body.warning, /2 days left/);
    } finally {
      await server.stop();
    }
  });
});

describe('refdesk demo', () => {
  test('without LICENSE_KEY: a throwaway local issuer in the data directory, loopback only, and it says so', async () => {
    const dataDir = newDir();
    const p = spawnRefdesk(['demo'], dataDir, { LICENSE_KEY: '', LICENSE_ISSUER_KEYS: '', HOST: '0.0.0.0' });
    try {
      const m = await p.waitFor('stdout', /Refdesk listening on port (\d+) \(http:\/\/127\.0\.0\.1:/, 180_000);
      assert.match(p.stderr(), /Demo licence: .*throwaway local issuer/);
      assert.match(p.stderr(), /HOST=0\.0\.0\.0 is ignored/);
      assert.equal(statSync(join(dataDir, 'demo-issuer', 'issuer.key')).mode & 0o777, 0o600);
      const base = `http://127.0.0.1:${m[1]}`;
      const lic = await httpGet(`${base}/api/license`);
      assert.equal(lic.body.licensee, 'Refdesk demo');
      assert.equal(lic.body.state, 'valid');
      const ctx = await httpGet(`${base}/api/v2/context?libraryId=/docs/refdesk&query=how+do+I+add+a+library`);
      assert.equal(ctx.status, 200);
    } finally {
      await stopProcess(p.child);
    }
  });
});
