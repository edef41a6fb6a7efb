/**
 * Forwarded headers are believed only from configured trusted proxies (TRUSTED_PROXIES /
 * server.trustedProxies): the client address rate limits count on cannot be chosen by a client.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServer, type ApiServer } from './helpers/api-server.ts';
import { parseTrustedProxies } from '../../server/trusted-proxies.ts';
import { isRefdeskError } from '../../core/errors.ts';

const LIMIT_2 = { rateLimits: { windowSeconds: 3600, anonymous: { requests: 2 }, defaultPlan: 'free', plans: { free: { requests: 2 } } } };

async function search(base: string, xff?: string): Promise<number> {
  const res = await fetch(`${base}/api/v2/libs/search?libraryName=x&query=y`, { headers: xff ? { 'x-forwarded-for': xff } : {} });
  await res.arrayBuffer();
  return res.status;
}

describe('trusted proxies', () => {
  const servers: ApiServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  test('by default X-Forwarded-For from a peer changes nothing: one bucket for the connection address', async () => {
    const s = await startApiServer({ config: LIMIT_2 });
    servers.push(s);
    const statuses = [];
    for (const ip of ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4']) statuses.push(await search(s.base, ip));
    assert.deepEqual(statuses, [200, 200, 429, 429]);
  });

  test('a peer outside the trusted list is not believed either (TRUSTED_PROXIES=10.0.0.0/8)', async () => {
    const s = await startApiServer({ config: LIMIT_2, app: { trustedProxies: '10.0.0.0/8' } });
    servers.push(s);
    const statuses = [];
    for (const ip of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) statuses.push(await search(s.base, ip));
    assert.deepEqual(statuses, [200, 200, 429]);
  });

  test('from a trusted proxy the client is the right-most untrusted X-Forwarded-For hop', async () => {
    const s = await startApiServer({ config: LIMIT_2, app: { trustedProxies: '127.0.0.1, 10.0.0.0/8' } });
    servers.push(s);
    // Two clients behind the proxy: separate buckets.
    assert.deepEqual([await search(s.base, '1.1.1.1'), await search(s.base, '1.1.1.1'), await search(s.base, '1.1.1.1')], [200, 200, 429]);
    assert.equal(await search(s.base, '2.2.2.2'), 200);
    // A client that sends its own X-Forwarded-For: the proxy appends the real address, which counts.
    assert.deepEqual([await search(s.base, '6.6.6.6, 5.5.5.5'), await search(s.base, '7.7.7.7, 5.5.5.5'), await search(s.base, '8.8.8.8, 5.5.5.5, 10.1.2.3')], [200, 200, 429]);
  });

  test('config server.trustedProxies works like the environment variable', async () => {
    const s = await startApiServer({ config: { ...LIMIT_2, server: { trustedProxies: ['::1', '127.0.0.0/8'] } } });
    servers.push(s);
    assert.deepEqual([await search(s.base, '1.1.1.1'), await search(s.base, '2.2.2.2'), await search(s.base, '3.3.3.3')], [200, 200, 200]);
  });

  test('parsing: addresses and CIDRs, IPv4-mapped peers; anything else is a config error naming the setting', () => {
    const p = parseTrustedProxies('10.0.0.0/8, 192.168.1.7 ,fd00::/8', 'TRUSTED_PROXIES');
    assert.equal(p.trusts('10.20.30.40'), true);
    assert.equal(p.trusts('::ffff:10.1.1.1'), true);
    assert.equal(p.trusts('192.168.1.7'), true);
    assert.equal(p.trusts('192.168.1.8'), false);
    assert.equal(p.trusts('fd00::1'), true);
    assert.equal(p.trusts('127.0.0.1'), false);
    assert.equal(parseTrustedProxies('', 'TRUSTED_PROXIES').trusts('127.0.0.1'), false);
    for (const bad of ['proxy.local', '10.0.0.0/33', '10.0.0.0/8/1', '1.2.3.4/x', '*']) {
      assert.throws(
        () => parseTrustedProxies(bad, 'TRUSTED_PROXIES'),
        (e: unknown) => isRefdeskError(e) && e.code === 'config_error' && /^TRUSTED_PROXIES: /.test(e.message),
        bad,
      );
    }
  });
});
