/**
 * Issue 19: GET /api/health (the process answers) and GET /api/ready (store, licence, job
 * runner, disk), public and never rate-limited, on a real server over HTTP.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServer, type ApiServer } from './helpers/api-server.ts';
import type { LicenceView } from '../../server/access.ts';

const TIGHT_LIMITS = { rateLimits: { windowSeconds: 3600, anonymous: { requests: 2 }, defaultPlan: 'free', plans: { free: { requests: 2 } } } };

async function get(base: string, path: string, init: RequestInit = {}) {
  const res = await fetch(base + path, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

describe('/api/health and /api/ready', () => {
  const servers: ApiServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });
  const start = async (...args: Parameters<typeof startApiServer>) => {
    const s = await startApiServer(...args);
    servers.push(s);
    return s;
  };

  test('health answers 200 {status: ok}; ready answers 200 with every check and license valid', async () => {
    const s = await start({ config: TIGHT_LIMITS });
    const h = await get(s.base, '/api/health');
    assert.equal(h.status, 200);
    assert.deepEqual(h.body, { status: 'ok' });
    assert.equal(h.headers.get('cache-control'), 'no-store');
    const r = await get(s.base, '/api/ready');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'ready');
    assert.equal(r.body.ready, true);
    assert.deepEqual(r.body.store, { kind: 'embedded' }, 'the embedded store: ready once open, no database to report');
    assert.equal(r.body.license, 'valid');
    assert.equal(r.body.checks.store, 'ok');
    assert.equal(r.body.checks.jobs, 'ok');
    assert.equal(r.body.checks.disk.status, 'ok');
    assert.ok(r.body.checks.disk.freeBytes > 0, 'r.body.checks.disk.freeBytes > 0');
    const ping = await get(s.base, '/ping');
    assert.deepEqual(ping.body, { status: 'ok', message: 'pong' });
  });

  test('never rate-limited: health and ready answer 200 after the anonymous limit is used up', async () => {
    const s = await start({ config: TIGHT_LIMITS });
    let limited = false;
    for (let i = 0; i < 4; i++) if ((await get(s.base, '/api/v2/libs/search?libraryName=x&query=y')).status === 429) limited = true;
    assert.ok(limited, 'the public API is limited at 2 requests');
    for (let i = 0; i < 10; i++) {
      assert.equal((await get(s.base, '/api/health')).status, 200);
      assert.equal((await get(s.base, '/api/ready')).status, 200);
    }
  });

  test('an expired licence is reported and stays 200 (read-only node), with the reason', async () => {
    const licence: LicenceView = { expired: () => true, expiresAt: () => '2026-01-31T00:00:00.000Z' };
    const s = await start({ app: { access: { licence } } });
    const r = await get(s.base, '/api/ready');
    assert.equal(r.status, 200);
    assert.equal(r.body.license, 'expired');
    assert.match(r.body.reasons.join(' '), /license: expired on 2026-01-31/);
  });

  test('503 with the reason when free disk space is below server.minFreeDiskBytes', async () => {
    const s = await start({ config: { server: { minFreeDiskBytes: Number.MAX_SAFE_INTEGER } } });
    const r = await get(s.base, '/api/ready');
    assert.equal(r.status, 503);
    assert.equal(r.body.error, 'not_ready');
    assert.equal(r.body.status, 'unavailable');
    assert.equal(r.body.checks.disk.status, 'low');
    assert.match(r.body.message, /disk: \d+ bytes free in DATA_DIR, below server\.minFreeDiskBytes/);
    assert.equal((await get(s.base, '/api/health')).status, 200, 'health only says the process answers');
  });

  test('503 once the job runner has stopped, and once the store is closed', async () => {
    const s = await start();
    await s.refdesk.jobs.stop();
    let r = await get(s.base, '/api/ready');
    assert.equal(r.status, 503);
    assert.equal(r.body.checks.jobs, 'stopped');
    await s.kernel.close();
    r = await get(s.base, '/api/ready');
    assert.equal(r.status, 503);
    assert.equal(r.body.checks.store, 'failed');
    assert.match(r.body.message, /store: /);
  });

  test('other methods: 405 with Allow, never a 500', async () => {
    const s = await start();
    const r = await get(s.base, '/api/health', { method: 'POST' });
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('allow'), 'GET, HEAD');
    assert.equal(r.body.error, 'invalid_request');
    assert.equal((await fetch(s.base + '/api/ready', { method: 'HEAD' })).status, 200);
  });
});
