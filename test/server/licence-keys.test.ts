/**
 * Licence keys (server/licence-keys.ts) and their loading (server/licence.ts): signing and offline
 * verification, every way a key is refused, the state at a given time, issuer key parsing.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import {
  addDays,
  formatIssuerPublicKey,
  generateIssuerKeyPair,
  licenceState,
  parseIssuerKeyList,
  parseIssuerPrivateKey,
  parseIssuerPublicKey,
  privateKeyPem,
  signLicence,
  verifyLicence,
  LicenceKeyError,
} from '../../server/licence-keys.ts';
import { loadLicence, BUILT_IN_ISSUER_KEYS, DEFAULT_TRIAL_URL } from '../../server/licence.ts';

const issuer = generateIssuerKeyPair();
const other = generateIssuerKeyPair();
const t0 = new Date('2026-01-10T12:00:00.000Z');
const key = (terms: Partial<Parameters<typeof signLicence>[1]> = {}, by = issuer) =>
  signLicence(by, { licensee: 'Acme GmbH', email: 'ops@acme.example', plan: 'team', issuedAt: t0, expiresAt: addDays(t0, 30), ...terms });

function refusal(k: string | undefined, trusted = [issuer.publicKey]): LicenceKeyError {
  try {
    verifyLicence(k, trusted);
  } catch (e) {
    assert.ok(e instanceof LicenceKeyError, String(e));
    assert.equal(e.code, 'license_invalid');
    return e;
  }
  assert.fail('the key was accepted');
}

/** Re-encodes a key's payload with one field changed, keeping the original signature. */
function withPayload(k: string, change: (p: Record<string, unknown>) => void): string {
  const [prefix, payload, sig] = k.split('.');
  const p = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  change(p);
  return `${prefix}.${Buffer.from(JSON.stringify(p)).toString('base64url')}.${sig}`;
}

describe('licence keys', () => {
  test('a signed key verifies offline and carries its fields', () => {
    const k = key({ trial: true });
    assert.match(k, /^rdk1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const { payload, issuer: by } = verifyLicence(k, [other.publicKey, issuer.publicKey]);
    assert.equal(by.kid, issuer.publicKey.kid);
    assert.deepEqual(payload, {
      v: 1,
      licensee: 'Acme GmbH',
      email: 'ops@acme.example',
      plan: 'team',
      trial: true,
      issuedAt: '2026-01-10T12:00:00.000Z',
      expiresAt: '2026-02-09T12:00:00.000Z',
      kid: issuer.publicKey.kid,
    });
  });

  test('missing and malformed keys are refused, saying what is wrong', () => {
    assert.equal(refusal(undefined).reason, 'missing');
    assert.equal(refusal('   ').reason, 'missing');
    const k = key();
    const [, payload, sig] = k.split('.');
    for (const bad of ['hello', `rdk2.${payload}.${sig}`, `rdk1.${payload}`, `${k}.x`, `rdk1.${payload}=.${sig}`, `rdk1.${payload}.${sig.slice(0, -4)}`, `rdk1.${payload}.${sig}+`, `rdk1..${sig}`]) {
      const e = refusal(bad);
      assert.equal(e.reason, 'malformed', bad);
      assert.match(e.message, /LICENSE_KEY is malformed/);
    }
  });

  test('a key altered after signing is tampered; one signed by another issuer is untrusted', () => {
    const k = key();
    for (const change of [(p: Record<string, unknown>) => (p.expiresAt = '2099-01-01T00:00:00.000Z'), (p: Record<string, unknown>) => (p.plan = 'enterprise')]) {
      const e = refusal(withPayload(k, change));
      assert.equal(e.reason, 'tampered');
      assert.match(e.message, /altered/);
    }
    const flipped = k.slice(0, -3) + (k.at(-3) === 'A' ? 'B' : 'A') + k.slice(-2);
    assert.ok(['tampered', 'malformed'].includes(refusal(flipped).reason));
    const foreign = refusal(key({}, other));
    assert.equal(foreign.reason, 'untrusted');
    assert.match(foreign.message, new RegExp(`issuer ${other.publicKey.kid}.*LICENSE_ISSUER_KEYS`));
    assert.equal(refusal(k, []).reason, 'untrusted');
  });

  test('a trusted signature over a payload naming another issuer, or over nonsense, is refused', () => {
    const signRaw = (obj: unknown) => {
      const bytes = Buffer.from(typeof obj === 'string' ? obj : JSON.stringify(obj));
      return `rdk1.${bytes.toString('base64url')}.${sign(null, bytes, issuer.privateKey).toString('base64url')}`;
    };
    const good = verifyLicence(key(), [issuer.publicKey]).payload;
    assert.equal(refusal(signRaw({ ...good, kid: other.publicKey.kid })).reason, 'tampered');
    assert.equal(refusal(signRaw('not json')).reason, 'malformed');
    assert.equal(refusal(signRaw({ ...good, expiresAt: 'soon' })).reason, 'malformed');
    assert.equal(refusal(signRaw({ ...good, trial: 'yes' })).reason, 'malformed');
    assert.equal(refusal(signRaw({ ...good, v: 2 })).reason, 'malformed');
  });

  test('state: valid, expiring within 7 days (days left rounded up), expired at the expiry instant', () => {
    const p = { expiresAt: addDays(t0, 30).toISOString(), trial: false };
    assert.deepEqual(licenceState(p, t0), { state: 'valid', daysLeft: 30 });
    assert.equal(licenceState(p, addDays(t0, 22.9)).state, 'valid');
    const soon = licenceState(p, addDays(t0, 23.5));
    assert.equal(soon.state, 'expiring');
    assert.equal(soon.daysLeft, 7);
    assert.match(soon.warning!, /expires on 2026-02-09 \(7 days left\)/);
    assert.equal(licenceState(p, addDays(t0, 29.99)).daysLeft, 1);
    const gone = licenceState(p, addDays(t0, 30));
    assert.equal(gone.state, 'expired');
    assert.equal(gone.daysLeft, 0);
    assert.match(gone.warning!, /expired on 2026-02-09.*search, context, MCP and deleting keep working/);
  });

  test('signing refuses an empty licensee and an expiry before the issue date', () => {
    assert.throws(() => key({ licensee: '  ' }), /licensee/);
    assert.throws(() => key({ expiresAt: t0 }), /expire after/);
  });
});

describe('issuer keys', () => {
  test('the public line round-trips; the private PEM gives the same issuer', () => {
    const line = issuer.publicKey.line;
    assert.match(line, /^rdk-issuer-ed25519:[0-9a-f]{16}:[A-Za-z0-9+/]+=*$/);
    assert.equal(parseIssuerPublicKey(line + '\n').kid, issuer.publicKey.kid);
    assert.equal(parseIssuerPrivateKey(privateKeyPem(issuer.privateKey)).publicKey.line, line);
    for (const l of BUILT_IN_ISSUER_KEYS) assert.equal(parseIssuerPublicKey(l).line, l);
  });

  test('LICENSE_ISSUER_KEYS: commas, spaces and empty entries; each bad entry named by position, never echoed', () => {
    assert.deepEqual(parseIssuerKeyList(` ${issuer.publicKey.line} ,, ${other.publicKey.line},`).map((k) => k.kid), [issuer.publicKey.kid, other.publicKey.kid]);
    assert.deepEqual(parseIssuerKeyList(undefined), []);
    const [, kid, b64] = issuer.publicKey.line.split(':');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const x25519 = formatIssuerPublicKey(generateKeyPairSync('x25519').publicKey);
    const cases: Array<[string, RegExp]> = [
      ['secret-looking-garbage', /entry 2 of 2: an issuer key must be one line "rdk-issuer-ed25519:<kid>:<base64>"/],
      [`rdk-issuer-ed25519:${kid}:${b64.slice(0, 20)}`, /entry 2 of 2: issuer key [0-9a-f]{16} is not a valid public key/],
      [`rdk-issuer-ed25519:0000000000000000:${b64}`, /entry 2 of 2: issuer key 0000000000000000: the id does not match the key/],
      [`rdk-issuer-ed25519:XYZ:${b64}`, /entry 2 of 2: an issuer key's id must be 16 hex digits/],
      [`rdk-issuer-ed25519:${kid}:${rsa}`, /is not an Ed25519 key/],
      [x25519, /is not an Ed25519 key/],
    ];
    for (const [entry, message] of cases) {
      assert.throws(
        () => parseIssuerKeyList(`${issuer.publicKey.line},${entry}`),
        (e: Error) => {
          assert.match(e.message, message);
          assert.match(e.message, /^LICENSE_ISSUER_KEYS entry/);
          assert.ok(!e.message.includes('secret-looking-garbage'), e.message);
          return true;
        },
      );
    }
  });
});

describe('loading LICENSE_KEY (server/licence.ts)', () => {
  const env = (extra: Record<string, string>) => ({ LICENSE_ISSUER_KEYS: issuer.publicKey.line, ...extra });

  test('a trusted key loads; the view expires with the clock', () => {
    let now = addDays(t0, 1);
    const licence = loadLicence(env({ LICENSE_KEY: key() }), () => now);
    assert.equal(licence.expired(), false);
    assert.equal(licence.state(), 'valid');
    assert.equal(licence.expiresAt(), '2026-02-09T12:00:00.000Z');
    now = addDays(t0, 31);
    assert.equal(licence.expired(), true);
    assert.equal(licence.summary(false).email, undefined);
    assert.equal(licence.summary(true).email, 'ops@acme.example');
  });

  test('every refusal is one line naming the trial issuer (LICENSE_TRIAL_URL or the default) and the command', () => {
    for (const [extra, what] of [
      [{}, /^LICENSE_KEY is not set: refdesk serve needs a licence key\. /],
      [{ LICENSE_KEY: 'x.y.z' }, /^LICENSE_KEY is malformed/],
      [{ LICENSE_KEY: key({}, other) }, /^LICENSE_KEY is signed by an issuer this installation does not trust/],
    ] as const) {
      assert.throws(
        () => loadLicence(env(extra)),
        (e: Error & { code?: string }) => {
          assert.equal(e.code, 'license_invalid');
          assert.match(e.message, what);
          assert.ok(!e.message.includes('\n'));
          assert.match(e.message, new RegExp(`refdesk license trial --issuer ${DEFAULT_TRIAL_URL.replace(/\./g, '\\.')} --email`));
          return true;
        },
      );
    }
    assert.throws(() => loadLicence(env({ LICENSE_TRIAL_URL: 'http://issuer.internal:3080' })), /--issuer http:\/\/issuer\.internal:3080 .*POST http:\/\/issuer\.internal:3080\/api\/v2\/license\/trial/);
  });
});
