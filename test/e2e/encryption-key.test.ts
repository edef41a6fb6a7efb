/**
 * ENCRYPTION_KEY with real server processes: a bad one stops the start with one line naming it
 * (never its value); a good one seals the settings' secrets so that no file of DATA_DIR holds
 * them, survives a restart with the same key, and a restart with another key shows them
 * unreadable instead of failing.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runRefdesk, startServer } from './refdesk-process.ts';
import { processDataDirs } from '../helpers/process-data-dirs.ts';

const LLM_KEY = 'sk-E2ePlantedLlmKey-4f3e2d1c0b';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

async function json(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(base + path, { method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

const newDir = processDataDirs('refdesk-enckey-');

describe('ENCRYPTION_KEY', { timeout: 300_000 }, () => {
  test('a malformed key stops `refdesk serve` with one line naming ENCRYPTION_KEY, not its value', async () => {
    const dir = newDir();
    const r = await runRefdesk(['serve'], dir, 60_000, { ENCRYPTION_KEY: 'not-a-valid-key-42' });
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.split('\n').filter((l) => l.trim());
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /^refdesk: ENCRYPTION_KEY must be 32 bytes/);
    assert.ok(!r.stderr.includes('not-a-valid-key-42'));
  });

  test('secrets sealed with the shared key: not in any file of DATA_DIR, readable after a restart with it, unreadable (not an error) with another', async () => {
    const dir = newDir();
    const key = randomBytes(32).toString('base64');
    let server = await startServer(dir, 60_000, { ENCRYPTION_KEY: key });
    const created = await json(server.base, 'POST', '/api/admin/keys', { name: 'ops', role: 'admin' }, server.adminAuth);
    assert.equal(created.status, 201, created.text);
    const admin = { authorization: `Bearer ${created.body.key}` };
    const set = await json(server.base, 'PATCH', '/api/settings', { llm: { provider: 'openai', apiKey: LLM_KEY } }, admin);
    assert.equal(set.status, 200, set.text);
    await server.stop();

    assert.ok(!existsSync(join(dir, 'secret.key')), 'with ENCRYPTION_KEY no key file is written');
    for (const f of filesUnder(dir)) {
      const bytes = readFileSync(f);
      assert.ok(!bytes.includes(LLM_KEY), `${f} holds the key`);
      assert.ok(!bytes.includes(Buffer.from(LLM_KEY).toString('base64')), `${f} holds the key in base64`);
    }

    server = await startServer(dir, 60_000, { ENCRYPTION_KEY: Buffer.from(key, 'base64').toString('hex') });
    const again = await json(server.base, 'GET', '/api/settings', undefined, admin);
    assert.deepEqual(again.body.llm.apiKey, { set: true, last4: LLM_KEY.slice(-4) }, 'the same key (as hex) opens it');
    await server.stop();

    server = await startServer(dir, 60_000, { ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    const other = await json(server.base, 'GET', '/api/settings', undefined, admin);
    assert.equal(other.status, 200, other.text);
    assert.deepEqual(other.body.llm.apiKey, { set: true, unreadable: true });
    assert.ok(!other.text.includes(LLM_KEY));
    await server.stop();
  });
});
