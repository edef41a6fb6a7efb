import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RefdeskError } from '../../core/errors.ts';
import { displayUrl, fetchWithRetry, readBodyCapped, retryAfterMs } from '../../core/net/retry.ts';
import { createFetch } from '../../core/services.ts';
import { send, startServer } from '../helpers/route-server.ts';

test('fetchWithRetry: retries 429/5xx with growing delays, honours Retry-After, returns the first final answer', async (t) => {
  let n = 0;
  const server = await startServer((_req, res) => {
    n++;
    if (n === 1) return send(res, 429, 'slow down', 'text/plain', { 'retry-after': '0' });
    if (n === 2) return send(res, 503, 'busy');
    send(res, 200, 'ok');
  }, t);
  const delays: number[] = [];
  const { response, attempts } = await fetchWithRetry(createFetch(), `${server.base}/x?token=secret`, {}, {
    policy: { attempts: 4, baseDelayMs: 10, maxDelayMs: 1000 },
    onRetry: ({ delayMs }) => delays.push(delayMs),
  });
  assert.equal(response.status, 200);
  assert.equal(await response.text(), 'ok');
  assert.equal(attempts, 3);
  assert.deepEqual(delays, [10, 20]);
});

test('fetchWithRetry: a 404 is final at once; a policy refusal is never retried', async (t) => {
  const server = await startServer((_req, res) => send(res, 404, 'no'), t);
  const { response, attempts } = await fetchWithRetry(createFetch(), `${server.base}/missing`, {}, { policy: { baseDelayMs: 1 } });
  assert.equal(response.status, 404);
  assert.equal(attempts, 1);
  let calls = 0;
  const refusing = { fetch: async () => { calls++; throw new RefdeskError('forbidden', 'Refusing to fetch from "x"'); } };
  await assert.rejects(fetchWithRetry(refusing, 'http://x/', {}, { policy: { baseDelayMs: 1 } }), /Refusing to fetch/);
  assert.equal(calls, 1);
});

test('readBodyCapped refuses bodies over the limit; displayUrl drops credentials and queries', async (t) => {
  const server = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }); // no content-length: counted while reading
    res.end('y'.repeat(5000));
  }, t);
  const res = await createFetch().fetch(`${server.base}/big`);
  await assert.rejects(readBodyCapped(res, 1000, `${server.base}/big`), (e: RefdeskError) => e.code === 'too_large' && /larger than 1000 bytes/.test(e.message));
  assert.equal(displayUrl('https://u:p@h.example/a/b?token=1#f'), 'https://h.example/a/b');
  assert.equal(retryAfterMs('3'), 3000);
  assert.equal(retryAfterMs(new Date(Date.now() - 1000).toUTCString()), 0);
  assert.equal(retryAfterMs('soon'), null);
});
