import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostAllowList, parseAllowedHosts } from '../../server/allowed-hosts.ts';
import { RefdeskError } from '../../core/errors.ts';

test('parseAllowedHosts: names, addresses and ports; bad entries are a config_error naming where', () => {
  assert.deepEqual(parseAllowedHosts(' Docs.Example.com , 10.0.0.5:8080,[::1]:3000,,', 'ALLOWED_HOSTS'), [
    { hostname: 'docs.example.com', port: null },
    { hostname: '10.0.0.5', port: 8080 },
    { hostname: '[::1]', port: 3000 },
  ]);
  for (const bad of ['https://docs.example.com', 'docs.example.com/path', '*.example.com', 'host:99999', 'a b']) {
    assert.throws(
      () => parseAllowedHosts(['ok.example', bad], 'server.allowedHosts'),
      (e: unknown) => e instanceof RefdeskError && e.code === 'config_error' && /^server\.allowedHosts: entry 2 /.test(e.message),
      bad,
    );
  }
});

test('HostAllowList: loopback always, entries by name and port, Host headers and Origins', () => {
  const list = new HostAllowList(parseAllowedHosts('docs.example.com,api.example.com:8443', 'x'));
  assert.ok(list.allowsHostHeader('127.0.0.5:3000'));
  assert.ok(list.allowsHostHeader('localhost'));
  assert.ok(list.allowsHostHeader('docs.example.com.:80'));
  assert.ok(list.allowsHostHeader('api.example.com:8443'));
  assert.ok(!list.allowsHostHeader('api.example.com'));
  assert.ok(!list.allowsHostHeader('evil.example'));
  assert.ok(!list.allowsHostHeader(undefined));
  assert.equal(list.originRefusal({}), null);
  assert.equal(list.originRefusal({ origin: 'https://docs.example.com' }), null);
  assert.equal(list.originRefusal({ origin: 'https://api.example.com:8443' }), null);
  assert.match(list.originRefusal({ origin: 'https://api.example.com' }) ?? '', /not one/);
  assert.match(list.originRefusal({ origin: 'null' }) ?? '', /null/);
  assert.match(list.originRefusal({ origin: 'chrome-extension://abc' }) ?? '', /not an http\(s\) origin/);
  // Same as the request's Host, when that Host is allowed: passes; an unallowed Host does not help.
  assert.equal(new HostAllowList().originRefusal({ origin: 'http://evil.example', host: 'evil.example' }), 'Requests from web pages are accepted only from allowed hosts, and the Origin host "evil.example" is not one. The operator can allow it with ALLOWED_HOSTS (comma-separated host names, optionally with a port) or server.allowedHosts in the config.');
});
