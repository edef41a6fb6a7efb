/**
 * ALLOWED_HOSTS read by the server process (issue 16 item 9): a real `refdesk serve` on all
 * interfaces refuses /mcp requests from web pages of other hosts, serves the allowed ones, and
 * refuses to start with an entry it cannot read.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rawMcpRequest } from '../helpers/mcp-raw.ts';
import { makeDataDir, removeDataDir, runRefdesk, startServer, stopAll, type RefdeskServer } from './refdesk-process.ts';

const post = (base: string, headers: Record<string, string>) => rawMcpRequest(base, headers);

describe('ALLOWED_HOSTS on a running server', { timeout: 90_000 }, () => {
  let dir: string;
  let server: RefdeskServer;
  before(async () => {
    dir = makeDataDir('refdesk-allowed-hosts-');
    server = await startServer(dir, 30_000, { HOST: '0.0.0.0', ALLOWED_HOSTS: 'docs.example.com, tools.example.com:8443' });
  });
  after(async () => {
    await stopAll();
    removeDataDir(dir);
  });

  test('web pages of allowed hosts reach /mcp; others get 403 forbidden_origin; clients without Origin pass', async () => {
    assert.equal((await post(server.base, { origin: 'https://docs.example.com' })).status, 200);
    assert.equal((await post(server.base, { origin: 'https://tools.example.com:8443' })).status, 200);
    assert.equal((await post(server.base, { origin: 'http://localhost:5173' })).status, 200);
    assert.equal((await post(server.base, {})).status, 200);
    const evil = await post(server.base, { origin: 'https://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal(evil.body.error, 'forbidden_origin');
    assert.equal((await post(server.base, { origin: 'https://tools.example.com' })).status, 403);
  });

  test('an ALLOWED_HOSTS entry that is not a host refuses the start, saying which', async () => {
    const bad = makeDataDir('refdesk-allowed-hosts-bad-');
    const r = await runRefdesk(['serve'], bad, 30_000, { ALLOWED_HOSTS: 'docs.example.com,https://evil.example/' }).finally(() => removeDataDir(bad));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /ALLOWED_HOSTS: entry 2 is not a host name/);
  });
});
