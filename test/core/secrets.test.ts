import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createSecretBox, dataDirSecretBox, isSealed, openSpec, redactSpec, sealSpec } from '../../core/secrets.ts';

const schema = { type: 'object', properties: { url: { type: 'string' }, token: { type: 'string', writeOnly: true } } };

test('secret spec fields are sealed at rest and opened only for the source', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rdk-secrets-'));
  const box = dataDirSecretBox(dir, '');
  const sealed = sealSpec(schema, { url: 'https://x', token: 'ghp_topsecret' }, box);
  assert.equal(sealed.url, 'https://x');
  assert.ok(isSealed(sealed.token));
  assert.ok(!JSON.stringify(sealed).includes('topsecret'));
  assert.deepEqual(sealSpec(schema, sealed, box), sealed, 'sealing twice keeps the sealed value');
  assert.equal(openSpec(schema, sealed, box).token, 'ghp_topsecret');
  assert.equal(redactSpec(schema, sealed).token, '[set]');
  assert.equal(statSync(join(dir, 'secret.key')).mode & 0o777, 0o600);
  // A second box over the same directory reads the same key.
  assert.equal(openSpec(schema, sealed, dataDirSecretBox(dir, '')).token, 'ghp_topsecret');
});

test('a changed key gives a clear error, not garbage', () => {
  const a = createSecretBox(randomBytes(32));
  const b = createSecretBox(randomBytes(32));
  const s = a.seal('hello');
  assert.throws(() => b.open(s), /secret key changed/);
  assert.throws(() => createSecretBox(Buffer.alloc(5)), /32 bytes/);
  const dir = mkdtempSync(join(tmpdir(), 'rdk-secrets-'));
  writeFileSync(join(dir, 'x'), '');
  assert.throws(() => dataDirSecretBox(dir, 'c2hvcnQ=').seal('x'), /REFDESK_SECRET_KEY/);
  assert.ok(readFileSync(join(dir, 'x'), 'utf8') === '');
});
