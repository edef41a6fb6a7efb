/**
 * The issuer's tools as real processes: `refdesk license keygen|issue|show`, the trial issuer
 * (`serve-issuer`: 201, 409 per email, 400, 429 per address, its record on disk across restarts)
 * and `refdesk license trial` against it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runRefdesk, spawnRefdesk, stopProcess, type RefdeskProcess } from './refdesk-process.ts';
import { processDataDirs } from '../helpers/process-data-dirs.ts';

const newDir = processDataDirs('refdesk-licence-cli-');
// No licence from the test issuer here: these commands must not need one.
const NO_LICENCE = { LICENSE_KEY: '', LICENSE_ISSUER_KEYS: '' };
const license = (args: string[], dir: string, env: Record<string, string> = {}) => runRefdesk(['license', ...args], dir, 60_000, { ...NO_LICENCE, ...env });

describe('refdesk license keygen, issue, show', () => {
  let dir: string;
  let pub: string;
  before(async () => {
    dir = newDir();
    const r = await license(['keygen', '--out', join(dir, 'issuer')], dir);
    assert.equal(r.code, 0, r.stderr);
    pub = readFileSync(join(dir, 'issuer', 'issuer.pub'), 'utf8');
  });

  test('keygen writes issuer.key (0600, PEM) and issuer.pub (one line, 0644) and never overwrites them', async () => {
    const key = join(dir, 'issuer', 'issuer.key');
    assert.equal(statSync(key).mode & 0o777, 0o600);
    assert.match(readFileSync(key, 'utf8'), /^-----BEGIN PRIVATE KEY-----/);
    assert.equal(statSync(join(dir, 'issuer', 'issuer.pub')).mode & 0o777, 0o644);
    assert.match(pub, /^rdk-issuer-ed25519:[0-9a-f]{16}:[A-Za-z0-9+/]+=*\n$/);
    const before = readFileSync(key, 'utf8');
    const again = await license(['keygen', '--out', join(dir, 'issuer')], dir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /issuer\.key already exists; keygen never overwrites/);
    assert.equal(readFileSync(key, 'utf8'), before);
    assert.match((await license(['keygen'], dir)).stderr, /--out DIR/);
  });

  test('issue prints a key that show reads back, trusted only with the issuer in LICENSE_ISSUER_KEYS', async () => {
    const signingKey = join(dir, 'issuer', 'issuer.key');
    const issued = await license(['issue', '--signing-key', signingKey, '--licensee', 'Acme GmbH', '--email', 'ops@acme.example', '--days', '10', '--trial', '--plan', 'team'], dir);
    assert.equal(issued.code, 0, issued.stderr);
    const key = issued.stdout.trim();
    assert.match(key, /^rdk1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const trusted = await license(['show', key], dir, { LICENSE_ISSUER_KEYS: pub.trim() });
    assert.equal(trusted.code, 0, trusted.stderr);
    for (const line of [/^licensee Acme GmbH$/m, /^email    ops@acme\.example$/m, /^plan     team$/m, /^trial    yes$/m, /^state    valid \(10 days left\)$/m, /^trusted  yes \(issuer [0-9a-f]{16}\)$/m]) assert.match(trusted.stdout, line);
    const fromEnv = await license(['show'], dir, { LICENSE_KEY: key, LICENSE_ISSUER_KEYS: pub.trim() });
    assert.equal(fromEnv.code, 0);
    const untrusted = await license(['show', key], dir);
    assert.equal(untrusted.code, 1);
    assert.match(untrusted.stdout, /^licensee Acme GmbH$/m);
    assert.match(untrusted.stdout, /^trusted  no: the key is signed by an issuer this installation does not trust/m);
    const malformed = await license(['show', 'rdk1.garbage'], dir);
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, /^refdesk: the key is malformed/);
  });

  test('issue checks its arguments', async () => {
    const signingKey = join(dir, 'issuer', 'issuer.key');
    assert.match((await license(['issue', '--licensee', 'X'], dir)).stderr, /--signing-key FILE is required/);
    assert.match((await license(['issue', '--signing-key', signingKey], dir)).stderr, /--licensee NAME is required/);
    assert.match((await license(['issue', '--signing-key', signingKey, '--licensee', 'X', '--days', '0'], dir)).stderr, /--days must be a positive whole number/);
    assert.match((await license(['issue', '--signing-key', join(dir, 'issuer', 'issuer.pub'), '--licensee', 'X'], dir)).stderr, /not a PEM private key/);
    assert.match((await license(['issue', '--signing-key', join(dir, 'none.key'), '--licensee', 'X'], dir)).stderr, /Cannot read the signing key .*ENOENT/);
    assert.match((await license(['serve-issuer', '--signing-key', signingKey, '--per-hour', '4'], dir)).stderr, /--per-hour must be at least 5/);
    writeFileSync(join(dir, 'broken.json'), '{"trials": ');
    const broken = await license(['serve-issuer', '--signing-key', signingKey, '--port', '0', '--state', join(dir, 'broken.json')], dir);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /^refdesk: .*broken\.json is not an issued-trials record/);
  });
});

describe('the trial issuer and refdesk license trial', () => {
  let dir: string;
  let pub: string;
  let issuer: RefdeskProcess;
  let base: string;
  const startIssuer = async () => {
    const p = spawnRefdesk(['license', 'serve-issuer', '--signing-key', join(dir, 'issuer', 'issuer.key'), '--port', '0', '--per-hour', '5'], dir, NO_LICENCE);
    const m = await p.waitFor('stdout', /listening on port (\d+)/, 30_000);
    return { p, base: `http://127.0.0.1:${m[1]}` };
  };
  const ask = (body: string | object) =>
    fetch(`${base}/api/v2/license/trial`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) }).then(async (r) => ({
      status: r.status,
      headers: r.headers,
      body: (await r.json()) as { licenseKey?: string; expiresAt?: string; error?: string; message?: string },
    }));

  before(async () => {
    dir = newDir();
    assert.equal((await license(['keygen', '--out', join(dir, 'issuer')], dir)).code, 0);
    pub = readFileSync(join(dir, 'issuer', 'issuer.pub'), 'utf8').trim();
    ({ p: issuer, base } = await startIssuer());
  });
  after(async () => {
    if (issuer) await stopProcess(issuer.child);
  });

  test('201 with a 30-day trial key; 409 for the same email in any case; 400 for bad input', async () => {
    const first = await ask({ email: 'Dev@Example.com', organization: 'Example Ltd' });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const days = (Date.parse(first.body.expiresAt!) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, String(days));
    const shown = await license(['show', first.body.licenseKey!], dir, { LICENSE_ISSUER_KEYS: pub });
    assert.equal(shown.code, 0, shown.stdout);
    assert.match(shown.stdout, /^licensee Example Ltd$/m);
    assert.match(shown.stdout, /^trial    yes$/m);
    const second = await ask({ email: 'dev@example.COM', organization: 'Example Ltd' });
    assert.equal(second.status, 409);
    assert.equal(second.body.error, 'already_exists');
    assert.match(second.body.message!, /one trial per email/);
    const record = JSON.parse(readFileSync(join(dir, 'issuer', 'issued-trials.json'), 'utf8'));
    assert.deepEqual(Object.keys(record.trials), ['dev@example.com']);
    assert.equal(readdirSync(join(dir, 'issuer')).filter((f) => f.endsWith('.tmp')).length, 0);
  });

  test('400 for a bad email, a missing organization or bad JSON; 429 past the per-address limit', async () => {
    // The first test used 2 of the 5 requests this address may make this hour.
    const badEmail = await ask({ email: 'not-an-email', organization: 'X' });
    assert.equal(badEmail.status, 400);
    assert.equal(badEmail.body.error, 'invalid_request');
    assert.match(badEmail.body.message!, /valid email address/);
    const badJson = await ask('{"email": ');
    assert.equal(badJson.status, 400);
    assert.match(badJson.body.message!, /must be JSON/);
    const noOrg = await ask({ email: 'x@example.com' });
    assert.equal(noOrg.status, 400);
    assert.match(noOrg.body.message!, /organization/);
    const limited = await ask({ email: 'late@example.com', organization: 'Late' });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error, 'rate_limit_exceeded');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
  });

  test('refdesk license trial asks the issuer and prints the key; the record survives an issuer restart', async () => {
    await stopProcess(issuer.child);
    ({ p: issuer, base } = await startIssuer());
    const r = await license(['trial', '--issuer', base, '--email', 'cli@example.com', '--organization', 'CLI Org'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.trim(), /^rdk1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.match(r.stderr, /Trial key for CLI Org, valid until \d{4}-\d\d-\d\d: set LICENSE_KEY/);
    const shown = await license(['show', r.stdout.trim()], dir, { LICENSE_ISSUER_KEYS: pub });
    assert.equal(shown.code, 0);
    // Restarted: the earlier email is still refused.
    const again = await license(['trial', '--issuer', base, '--email', 'DEV@example.com', '--organization', 'Example Ltd'], dir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /the issuer refused \(HTTP 409\): .*one trial per email/);
    const unreachable = await license(['trial', '--issuer', 'http://127.0.0.1:9', '--email', 'a@example.com', '--organization', 'A'], dir);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /Could not reach the issuer at http:\/\/127\.0\.0\.1:9/);
    assert.ok(existsSync(join(dir, 'issuer', 'issued-trials.json')));
  });
});
