import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertUrlAllowed, blockedAddressReason, DEFAULT_NETWORK_POLICY, type Lookup } from '../../core/net/address-policy.ts';

const policy = (p: Partial<typeof DEFAULT_NETWORK_POLICY> = {}) => ({ ...DEFAULT_NETWORK_POLICY, ...p });
const fakeDns = (table: Record<string, string[]>): Lookup => async (host) => {
  const ips = table[host];
  if (!ips) throw new Error('ENOTFOUND');
  return ips.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

test('private, loopback, link-local, metadata and mapped addresses are blocked; public ones are not', () => {
  for (const ip of ['127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '169.254.10.10', '100.64.0.1', '100.100.100.200', '0.0.0.0', '224.0.0.1', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '[::1]']) {
    assert.ok(blockedAddressReason(ip), `${ip} must be blocked`);
  }
  for (const ip of ['8.8.8.8', '172.32.0.1', '93.184.216.34', '2606:4700::1111']) assert.equal(blockedAddressReason(ip), null, ip);
  assert.match(blockedAddressReason('169.254.169.254')!, /metadata/);
});

test('URLs are checked after DNS resolution, with the operator allow list', async () => {
  const lookup = fakeDns({ 'docs.example.com': ['93.184.216.34'], 'evil.example.com': ['93.184.216.34', '10.0.0.5'], 'wiki.corp.local': ['10.1.2.3'], 'v6.example.com': ['::1'] });
  assert.deepEqual(await assertUrlAllowed('https://docs.example.com/a', policy(), { lookup }), [{ address: '93.184.216.34', family: 4 }]);
  await assert.rejects(assertUrlAllowed('https://evil.example.com/', policy(), { lookup }), (e: any) => e.code === 'forbidden' && /evil\.example\.com.*private address \(10\.0\.0\.5\).*allowHosts/.test(e.message));
  await assert.rejects(assertUrlAllowed('http://v6.example.com/', policy(), { lookup }), /loopback/);
  await assert.rejects(assertUrlAllowed('http://127.0.0.1:8080/', policy(), { lookup }), /loopback/);
  await assert.rejects(assertUrlAllowed('http://[::1]/', policy(), { lookup }), /loopback/);
  // IPv4-mapped IPv6, which URLs normalise to hex (::ffff:7f00:1), is checked as the IPv4 it maps.
  await assert.rejects(assertUrlAllowed('http://[::ffff:127.0.0.1]/', policy(), { lookup }), /loopback/);
  await assert.rejects(assertUrlAllowed('http://[::ffff:7f00:1]/', policy(), { lookup }), /loopback/);
  await assert.rejects(assertUrlAllowed('http://[::ffff:a9fe:a9fe]/', policy(), { lookup }), /metadata/);
  await assert.rejects(assertUrlAllowed('http://[::127.0.0.1]/', policy(), { lookup }), /IPv4-compatible|loopback/);
  await assert.rejects(assertUrlAllowed('http://localhost/', policy(), { lookup }), /loopback/);
  await assert.rejects(assertUrlAllowed('http://metadata.google.internal/', policy(), { lookup }), /metadata/);
  await assert.rejects(assertUrlAllowed('http://169.254.169.254/latest', policy(), { lookup }), /metadata/);
  await assert.rejects(assertUrlAllowed('https://wiki.corp.local/', policy(), { lookup }), /private/);
  await assert.rejects(assertUrlAllowed('file:///etc/passwd', policy(), { lookup }), (e: any) => e.code === 'invalid_request' && /http and https/.test(e.message));
  await assert.rejects(assertUrlAllowed('https://user:pw@docs.example.com/', policy(), { lookup }), /Credentials/);
  await assert.rejects(assertUrlAllowed('not a url', policy(), { lookup }), /valid absolute URL/);
  await assert.rejects(assertUrlAllowed('https://nowhere.example/', policy(), { lookup }), (e: any) => e.code === 'invalid_source');
  // The operator allows named internal hosts, IPs and ranges.
  assert.ok(await assertUrlAllowed('https://wiki.corp.local/', policy({ allowHosts: ['wiki.corp.local'] }), { lookup }));
  assert.ok(await assertUrlAllowed('https://wiki.corp.local/', policy({ allowHosts: ['10.0.0.0/8'] }), { lookup }));
  assert.ok(await assertUrlAllowed('http://127.0.0.1:9/', policy({ allowHosts: ['127.0.0.1'] }), { lookup }));
  await assert.rejects(assertUrlAllowed('http://127.0.0.2:9/', policy({ allowHosts: ['127.0.0.1'] }), { lookup }), /loopback/);
  assert.ok(await assertUrlAllowed('http://localhost:9/', policy({ allowPrivateNetworks: true }), { lookup: fakeDns({ localhost: ['127.0.0.1'] }) }));
  // Turning the private checks off still refuses cloud metadata, unless the operator names it.
  await assert.rejects(assertUrlAllowed('http://169.254.169.254/latest', policy({ allowPrivateNetworks: true }), { lookup }), /metadata/);
  await assert.rejects(assertUrlAllowed('http://[::ffff:169.254.169.254]/', policy({ allowPrivateNetworks: true }), { lookup }), /metadata/);
  await assert.rejects(assertUrlAllowed('http://metadata.google.internal/', policy({ allowPrivateNetworks: true }), { lookup }), /metadata/);
  await assert.rejects(
    assertUrlAllowed('http://meta.example.com/', policy({ allowPrivateNetworks: true }), { lookup: fakeDns({ 'meta.example.com': ['169.254.169.254'] }) }),
    /cloud metadata address \(169\.254\.169\.254\)/,
  );
  assert.ok(await assertUrlAllowed('http://169.254.169.254/', policy({ allowPrivateNetworks: true, allowHosts: ['169.254.169.254'] }), { lookup }));
  assert.ok(await assertUrlAllowed('http://10.1.2.3/', policy({ allowPrivateNetworks: true }), { lookup }));
});

test('at add time, URLs with a literal private, loopback or metadata host are refused without DNS', async () => {
  const { refuseLiteralPrivateUrls } = await import('../../core/net/address-policy.ts');
  for (const url of ['http://169.254.169.254/latest', 'http://127.0.0.1:8080/docs', 'http://localhost/', 'https://[::ffff:7f00:1]/', 'http://metadata.google.internal/']) {
    await assert.rejects(refuseLiteralPrivateUrls({ url }, policy()), (e: any) => e.code === 'forbidden', url);
  }
  // Names are left to the guarded fetch (no DNS here); other fields and schemes are not URLs to fetch.
  await refuseLiteralPrivateUrls({ url: 'https://docs.example.com/', siteUrl: 'https://wiki.example.com', branch: 'main', ssh: 'ssh://10.0.0.1/x.git' }, policy());
  await refuseLiteralPrivateUrls({ url: 'http://127.0.0.1:8080/' }, policy({ allowHosts: ['127.0.0.1'] }));
  await assert.rejects(refuseLiteralPrivateUrls({ siteUrl: 'http://10.0.0.7/confluence' }, policy()), /private address/);
});
