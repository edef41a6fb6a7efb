/**
 * `refdesk keys`, `refdesk rename` and `refdesk settings` as real processes: directly on the data directory when no
 * server runs, through the running server's admin routes when one does; keys survive a restart.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDataDir, removeDataDir, runRefdesk, startServer, stopAll, type RefdeskServer } from './refdesk-process.ts';

const dir = makeDataDir('refdesk-keys-');
after(async () => {
  await stopAll();
  removeDataDir(dir);
});

async function search(server: RefdeskServer, key?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.base}/api/v2/libs/search?libraryName=guide&query=install`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, body: await res.json() };
}

describe('refdesk keys and rename', { timeout: 180_000 }, () => {
  test('keys create/list/revoke and rename, offline and through a running server', async () => {
    const docs = join(dir, 'src');
    mkdirSync(docs, { recursive: true });
    writeFileSync(join(docs, 'guide.md'), '# Guide\n\n## Install\n\nRun the installer.\n');
    assert.equal((await runRefdesk(['add', docs, '--name', 'guide'], dir)).code, 0);

    const offline = await runRefdesk(['keys', 'create', '--name', 'offline', '--plan', 'pro'], dir);
    assert.equal(offline.code, 0, offline.stderr);
    const key1 = offline.stdout.trim();
    assert.match(key1, /^rdk_[A-Za-z0-9_-]{43}$/);
    assert.match(offline.stderr, /shown once/);
    const badPlan = await runRefdesk(['keys', 'create', '--plan', 'gold'], dir);
    assert.equal(badPlan.code, 1);
    assert.match(badPlan.stderr, /Unknown plan "gold"/);

    let server = await startServer(dir);
    assert.equal((await search(server, key1)).status, 200);
    const online = await runRefdesk(['keys', 'create', '--name', 'online', '--role', 'admin'], dir);
    assert.equal(online.code, 0, online.stderr);
    const key2 = online.stdout.trim();
    const list = await runRefdesk(['keys', 'list'], dir);
    assert.match(list.stdout, /\toffline\t/);
    assert.match(list.stdout, /\tadmin\tonline\t/);
    assert.match(list.stdout, /\tadmin\tonline\t.*\tactive\t0\/\d+ requests until \d{4}-/, 'through the server: each key\'s use of the current window');
    assert.ok(!list.stdout.includes(key1) && !list.stdout.includes(key2), 'keys are never listed');
    const id1 = list.stdout.split('\n').find((l) => l.includes('\toffline\t'))!.split('\t')[0];
    assert.equal((await runRefdesk(['keys', 'revoke', id1], dir)).code, 0);
    assert.equal((await search(server, key1)).status, 401);

    const ren = await runRefdesk(['rename', '/docs/guide', '/docs/handbook'], dir);
    assert.equal(ren.code, 0, ren.stderr);
    const moved = await fetch(`${server.base}/api/v2/context?libraryId=/docs/guide&query=install`, { redirect: 'manual' });
    assert.equal(moved.status, 301);
    assert.equal(((await moved.json()) as { redirectUrl: string }).redirectUrl, '/docs/handbook');

    await server.stop();
    server = await startServer(dir);
    assert.equal((await search(server, key2)).status, 200, 'keys survive a restart');
    assert.equal((await search(server, key1)).status, 401, 'so do revocations');
    const after = await search(server, key2);
    assert.equal(after.body.results[0].id, '/docs/handbook');

    // settings: /mcp requires a key once the operator says so (through the running server).
    const mcpInit = () =>
      fetch(`${server.base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      });
    assert.equal((await mcpInit()).status, 200);
    const set = await runRefdesk(['settings', 'set', 'mcp.requireKey', 'true'], dir);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /^mcp\.requireKey\ttrue$/m);
    assert.equal((await mcpInit()).status, 401);
    const bad = await runRefdesk(['settings', 'set', 'mcp.requireKey', 'maybe'], dir);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /true or false/);
    await server.stop();
    const offline2 = await runRefdesk(['settings'], dir);
    assert.match(offline2.stdout, /^mcp\.requireKey\ttrue$/m, 'the setting is persisted and readable offline');
  });
});
