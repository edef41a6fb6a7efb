import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createSecretBox, dataDirSecretBox, isSealed, openSpec, redactSpec, sealSpec } from '../../core/secrets.ts';

/** A fresh directory under the system's temp directory, removed (key files included) when the file's tests end. */
const made: string[] = [];
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rdk-secrets-'));
  made.push(dir);
  return dir;
}

const schema = { type: 'object', properties: { url: { type: 'string' }, token: { type: 'string', writeOnly: true } } };

test('secret spec fields are sealed at rest and opened only for the source', () => {
  const dir = tempDir();
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
  const dir = tempDir();
  writeFileSync(join(dir, 'x'), '');
  assert.throws(() => dataDirSecretBox(dir, 'c2hvcnQ=').seal('x'), /REFDESK_SECRET_KEY/);
  assert.ok(readFileSync(join(dir, 'x'), 'utf8') === '');
});

test('ENCRYPTION_KEY is the shared key; REFDESK_SECRET_KEY, its older name, still works', async () => {
  const { envSecretKey } = await import('../../core/secrets.ts');
  const a = randomBytes(32);
  const b = randomBytes(32);
  assert.equal(envSecretKey({}), null);
  assert.deepEqual(envSecretKey({ REFDESK_SECRET_KEY: b.toString('base64') }), { value: b.toString('base64'), name: 'REFDESK_SECRET_KEY' });
  assert.equal(envSecretKey({ ENCRYPTION_KEY: a.toString('base64'), REFDESK_SECRET_KEY: b.toString('base64') })?.name, 'ENCRYPTION_KEY');

  const dir = tempDir();
  // Sealed under ENCRYPTION_KEY (base64) on one node, opened under the same key given as hex on another.
  const sealed = dataDirSecretBox(dir, envSecretKey({ ENCRYPTION_KEY: a.toString('base64'), REFDESK_SECRET_KEY: b.toString('base64') })).seal('sk-shared');
  assert.equal(dataDirSecretBox(tempDir(), { value: a.toString('hex'), name: 'ENCRYPTION_KEY' }).open(sealed), 'sk-shared');
  assert.throws(() => createSecretBox(b).open(sealed), /secret key changed/);
  assert.throws(() => statSync(join(dir, 'secret.key')), /ENOENT/, 'a shared key writes no key file');
  // The older name alone.
  const old = dataDirSecretBox(dir, envSecretKey({ REFDESK_SECRET_KEY: b.toString('base64') })).seal('x');
  assert.equal(createSecretBox(b).open(old), 'x');
  // A bad key names its variable, never its value.
  const err = (() => {
    try {
      dataDirSecretBox(dir, envSecretKey({ ENCRYPTION_KEY: 'not-a-key-123' })).seal('x');
    } catch (e) {
      return e as Error;
    }
  })();
  assert.match(String(err?.message), /^ENCRYPTION_KEY must be 32 bytes/);
  assert.ok(!String(err?.message).includes('not-a-key-123'));
});
