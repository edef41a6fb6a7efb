import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_NETWORK_POLICY, type Lookup, type NetworkPolicy } from '../../core/net/address-policy.ts';
import { createGuardedFetch } from '../../core/net/guarded-fetch.ts';
import { RefdeskError } from '../../core/errors.ts';

const policy = (p: Partial<NetworkPolicy> = {}): NetworkPolicy => ({ ...DEFAULT_NETWORK_POLICY, ...p });
const local = policy({ allowHosts: ['127.0.0.1'] });

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
async function serve(handler: Handler, host = '127.0.0.1'): Promise<{ server: Server; base: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url} auth=${req.headers.authorization ?? ''}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, base: `http://${host}:${(server.address() as AddressInfo).port}`, hits };
}

let site: Awaited<ReturnType<typeof serve>>;
let other: Awaited<ReturnType<typeof serve>> | null = null;
const timers = new Set<NodeJS.Timeout>();

before(async () => {
  site = await serve((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const to = url.searchParams.get('to');
    if (url.pathname === '/ok') return void res.end('hello');
    if (url.pathname === '/redirect' && to) return void res.writeHead(302, { location: to }).end();
    if (url.pathname === '/post-redirect') return void res.writeHead(303, { location: '/echo' }).end();
    if (url.pathname === '/echo') return void res.end(`${req.method}`);
    if (url.pathname.startsWith('/loop/')) {
      const n = Number(url.pathname.slice(6));
      return void res.writeHead(301, { location: `/loop/${n + 1}` }).end();
    }
    if (url.pathname === '/big-declared') {
      res.writeHead(200, { 'content-length': String(4096) });
      return void res.end('x'.repeat(4096));
    }
    if (url.pathname === '/big-streamed') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const push = () => {
        if (sent >= 8192 || res.destroyed) return void res.end();
        sent += 512;
        res.write('y'.repeat(512), () => push());
      };
      return void push();
    }
    if (url.pathname === '/slow') {
      const t = setTimeout(() => res.end('late'), 5000);
      timers.add(t);
      res.on('close', () => clearTimeout(t));
      return;
    }
    if (url.pathname === '/slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part ');
      const t = setTimeout(() => res.end('late'), 5000);
      timers.add(t);
      res.on('close', () => clearTimeout(t));
      return;
    }
    res.writeHead(404).end('nope');
  });
});

after(async () => {
  for (const t of timers) clearTimeout(t);
  site.server.closeAllConnections();
  site.server.close();
  if (other) {
    other.server.closeAllConnections();
    other.server.close();
  }
});

const isForbidden = (pattern: RegExp) => (e: unknown) => e instanceof RefdeskError && e.code === 'forbidden' && pattern.test(e.message) && /network\.allowHosts/.test(e.message);

test('loopback is refused by default, before any request reaches the server', async () => {
  const f = createGuardedFetch(policy());
  const before = site.hits.length;
  await assert.rejects(f.fetch(`${site.base}/ok`), isForbidden(/127\.0\.0\.1.*loopback/));
  await assert.rejects(f.fetch(site.base.replace('127.0.0.1', 'localhost') + '/ok'), isForbidden(/localhost.*loopback/));
  assert.equal(site.hits.length, before, 'the server must not be contacted');
  await f.close();
});

test('an operator-allowed host is fetched; the response reports its URL', async () => {
  const f = createGuardedFetch(local);
  const res = await f.fetch(`${site.base}/ok`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'hello');
  assert.equal(res.url, `${site.base}/ok`);
  assert.equal(res.redirected, false);
  await f.close();
});

test('redirects are followed hop by hop; the final URL is reported', async () => {
  const f = createGuardedFetch(local);
  const res = await f.fetch(`${site.base}/redirect?to=/ok`);
  assert.equal(await res.text(), 'hello');
  assert.equal(res.url, `${site.base}/ok`);
  assert.equal(res.redirected, true);
  // 303 after POST becomes a GET without the body.
  const posted = await f.fetch(`${site.base}/post-redirect`, { method: 'POST', body: 'a=1' });
  assert.equal(await posted.text(), 'GET');
  // redirect: 'manual' hands back the 3xx itself.
  const manual = await f.fetch(`${site.base}/redirect?to=/ok`, { redirect: 'manual' });
  assert.equal(manual.status, 302);
  assert.equal(manual.headers.get('location'), '/ok');
  await f.close();
});

test('a redirect from an allowed host to a refused address is refused at that hop', async () => {
  other = await serve((_req, res) => void res.end('internal secret'), '127.0.0.2').catch(() => null);
  const f = createGuardedFetch(local);
  const target = other ? `${other.base}/` : 'http://127.0.0.2:9/';
  await assert.rejects(f.fetch(`${site.base}/redirect?to=${encodeURIComponent(target)}`), isForbidden(/127\.0\.0\.2.*loopback/));
  if (other) assert.equal(other.hits.length, 0, 'the refused host must not be contacted');
  // The same through a name that resolves to a private address.
  const lookup: Lookup = async (host) => (host === 'wiki.internal.test' ? [{ address: '10.0.0.5', family: 4 }] : []);
  const g = createGuardedFetch(local, { lookup });
  await assert.rejects(g.fetch(`${site.base}/redirect?to=${encodeURIComponent('http://wiki.internal.test/')}`), isForbidden(/wiki\.internal\.test.*private address \(10\.0\.0\.5\)/));
  await f.close();
  await g.close();
});

test('cloud metadata addresses and names are refused, also behind a public-looking name', async () => {
  const lookup: Lookup = async (host) => (host === 'innocent.example.com' ? [{ address: '169.254.169.254', family: 4 }] : []);
  const f = createGuardedFetch(policy(), { lookup });
  await assert.rejects(f.fetch('http://169.254.169.254/latest/meta-data/'), isForbidden(/metadata/));
  await assert.rejects(f.fetch('http://metadata.google.internal/computeMetadata/v1/'), isForbidden(/metadata/));
  await assert.rejects(f.fetch('http://innocent.example.com/'), isForbidden(/innocent\.example\.com.*metadata.*169\.254\.169\.254/));
  await assert.rejects(f.fetch('http://[fd00:ec2::254]/'), isForbidden(/metadata/));
  await assert.rejects(f.fetch('http://10.1.2.3/'), isForbidden(/private/));
  await assert.rejects(f.fetch('http://[fe80::1]/'), isForbidden(/link-local/));
  await assert.rejects(f.fetch('file:///etc/passwd'), (e: unknown) => e instanceof RefdeskError && e.code === 'invalid_request');
  await f.close();
});

test('connections go only to the checked addresses: a name that re-binds after the check cannot get in', async () => {
  // First answer: the allowed 127.0.0.1. Any later answer would be the metadata address.
  let calls = 0;
  const lookup: Lookup = async (host) => {
    if (host !== 'docs.rebind.test') return [];
    calls += 1;
    return [{ address: calls === 1 ? '127.0.0.1' : '169.254.169.254', family: 4 }];
  };
  const f = createGuardedFetch(local, { lookup });
  const port = new URL(site.base).port;
  const res = await f.fetch(`http://docs.rebind.test:${port}/ok`);
  assert.equal(await res.text(), 'hello', 'the connection used the checked address, not a fresh DNS answer');
  assert.equal(calls, 1, 'DNS is asked once per hop, by the check only');
  // The next request checks again, sees the metadata address and refuses.
  await assert.rejects(f.fetch(`http://docs.rebind.test:${port}/ok`), isForbidden(/metadata/));
  await f.close();
});

test('an allowed internal name is fetched through its checked address', async () => {
  const lookup: Lookup = async (host) => (host === 'wiki.corp.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
  const port = new URL(site.base).port;
  await assert.rejects(createGuardedFetch(policy(), { lookup }).fetch(`http://wiki.corp.test:${port}/ok`), isForbidden(/loopback/));
  const f = createGuardedFetch(policy({ allowHosts: ['wiki.corp.test'] }), { lookup });
  assert.equal(await (await f.fetch(`http://wiki.corp.test:${port}/ok`)).text(), 'hello');
  await f.close();
});

test('credentials are not carried to another origin on redirect', async () => {
  const lookup: Lookup = async (host) => (host === 'elsewhere.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
  const f = createGuardedFetch(policy({ allowHosts: ['127.0.0.1', 'elsewhere.test'] }), { lookup });
  const port = new URL(site.base).port;
  site.hits.length = 0;
  await (await f.fetch(`${site.base}/redirect?to=/ok`, { headers: { authorization: 'Bearer same-origin' } })).text();
  await (await f.fetch(`${site.base}/redirect?to=${encodeURIComponent(`http://elsewhere.test:${port}/ok`)}`, { headers: { authorization: 'Bearer secret' } })).text();
  assert.deepEqual(site.hits, [
    'GET /redirect?to=/ok auth=Bearer same-origin',
    'GET /ok auth=Bearer same-origin',
    `GET /redirect?to=${encodeURIComponent(`http://elsewhere.test:${port}/ok`)} auth=Bearer secret`,
    'GET /ok auth=',
  ]);
  await f.close();
});

test('too many redirects end in a clear error', async () => {
  const f = createGuardedFetch(local);
  await assert.rejects(f.fetch(`${site.base}/loop/0`), (e: unknown) => e instanceof RefdeskError && e.code === 'invalid_source' && /10 redirects/.test(e.message));
  const g = createGuardedFetch(local, { maxRedirects: 3 });
  await assert.rejects(g.fetch(`${site.base}/loop/0`), /3 redirects/);
  await assert.rejects(f.fetch(`${site.base}/loop/0`, { redirect: 'error' }), /redirect/);
  await f.close();
  await g.close();
});

test('response size is capped: by Content-Length before reading, and while streaming', async () => {
  const f = createGuardedFetch({ ...local, maxResponseBytes: 2048 });
  await assert.rejects(f.fetch(`${site.base}/big-declared`), (e: unknown) => e instanceof RefdeskError && e.code === 'too_large' && /4096 bytes.*2048 bytes.*network\.maxResponseBytes/.test(e.message));
  const res = await f.fetch(`${site.base}/big-streamed`);
  assert.equal(res.status, 200);
  await assert.rejects(res.text(), (e: unknown) => e instanceof RefdeskError && e.code === 'too_large' && /2048 bytes/.test(e.message));
  // Under the cap the body arrives whole.
  const g = createGuardedFetch({ ...local, maxResponseBytes: 10_000 });
  assert.equal((await (await g.fetch(`${site.base}/big-streamed`)).text()).length, 8192);
  await f.close();
  await g.close();
});

test('a slow server times out with a clear error; the caller may only shorten the limit', async () => {
  const f = createGuardedFetch({ ...local, timeoutMs: 300 });
  await assert.rejects(f.fetch(`${site.base}/slow`), (e: unknown) => e instanceof RefdeskError && e.code === 'invalid_source' && /did not finish within 300 ms/.test(e.message));
  await assert.rejects(f.fetch(`${site.base}/slow`, { timeoutMs: 60_000 }), /within 300 ms/);
  const g = createGuardedFetch(local);
  await assert.rejects(g.fetch(`${site.base}/slow`, { timeoutMs: 200 }), /within 200 ms/);
  // The limit covers the body too.
  const res = await f.fetch(`${site.base}/slow-body`);
  await assert.rejects(res.text(), /within 300 ms/);
  // The caller's own abort comes back as the caller's reason.
  const ac = new AbortController();
  const pending = g.fetch(`${site.base}/slow`, { signal: ac.signal });
  ac.abort(new Error('job cancelled'));
  await assert.rejects(pending, /job cancelled/);
  await f.close();
  await g.close();
});
