import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REDACTED, createRedactor, excerpt, redactFields, redactGeneric, specRedactor } from '../../core/redact.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { fetchWithRetry, httpFailure, mediaTypeLabel, statusLine } from '../../core/net/retry.ts';
import { createFetch } from '../../core/services.ts';
import { startServer } from '../helpers/route-server.ts';

const TOKEN = 'glpat-Planted0123456789xyz';
const EMAIL = 'me@example.com';
const b64 = (s: string) => Buffer.from(s).toString('base64');

test('a redactor removes the secret, its encodings, and base64 runs that decode to it', () => {
  const r = createRedactor([TOKEN], [EMAIL]);
  const text = [
    `raw ${TOKEN}`,
    `pct ${encodeURIComponent(TOKEN + '/')}`,
    `b64 ${b64(TOKEN)}`,
    `basic-with-user ${b64(`${EMAIL}:${TOKEN}`)}`,
    // A provider user name the redactor was not told about: found by decoding the run.
    `basic-unknown-user ${b64(`x-token-auth:${TOKEN}`)}`,
  ].join('\n');
  const out = r(text);
  for (const leak of [TOKEN, b64(TOKEN), b64(`${EMAIL}:${TOKEN}`), b64(`x-token-auth:${TOKEN}`)]) assert.ok(!out.includes(leak), `${leak} in ${out}`);
  assert.equal(out.split('\n').length, 5);
  assert.match(out, /^raw \[redacted\]$/m);
});

test('the generic shapes go whatever their value; ordinary prose stays', () => {
  const cases: Array<[string, RegExp]> = [
    ['Authorization: Bearer abc.def-123456', /^Authorization: \[redacted\]$/],
    ['set-cookie: session=s3cr3tvalue; HttpOnly', /^set-cookie: \[redacted\]$/],
    ['sent "Bearer sk-live-0123456789abcdef" upstream', /^sent "Bearer \[redacted\]" upstream$/],
    ['GET /x?access_token=abc123&page=2', /^GET \/x\?access_token=\[redacted\]&page=2$/],
    ['clone https://user:hunter2pass@git.example.com/r.git failed', /^clone https:\/\/\[redacted\]@git\.example\.com\/r\.git failed$/],
    ['{"apiToken":"zzz-secret","name":"ok"}', /^\{"apiToken":"\[redacted\]","name":"ok"\}$/],
    ['HTTP Basic authentication failed for the token', /^HTTP Basic authentication failed for the token$/],
    ['Confluence answered HTTP 401 for the pages of space "ENG"', /^Confluence answered HTTP 401 for the pages of space "ENG"$/],
  ];
  for (const [input, expected] of cases) assert.match(redactGeneric(input), expected, input);
});

test('specRedactor uses the named secret fields, with the other fields as Basic user names', () => {
  const r = specRedactor({ siteUrl: 'https://wiki.example.com', email: EMAIL, apiToken: TOKEN }, ['apiToken']);
  assert.equal(r(`Basic ${b64(`${EMAIL}:${TOKEN}`)} and ${TOKEN}`), `Basic ${REDACTED} and ${REDACTED}`);
  assert.equal(r('https://wiki.example.com and me@example.com stay'), 'https://wiki.example.com and me@example.com stay');
});

test('excerpt: one short redacted line of an upstream body', () => {
  const body = `<html>\n  <p>Denied</p>\n  Authorization: Bearer ${TOKEN}\n${'x'.repeat(500)}</html>`;
  const out = excerpt(body, createRedactor([TOKEN]), 80);
  assert.ok(!out.includes(TOKEN) && !out.includes('\n'));
  assert.ok(out.length <= 83);
});

test('the console logger redacts messages and fields (errors included) at any depth', () => {
  const lines: string[] = [];
  const logger = createConsoleLogger('debug', (l) => lines.push(l));
  logger.warn(`upstream said Authorization: Bearer ${TOKEN}`, { nested: { url: `https://u:${TOKEN}@h/x` }, error: new Error(`token=${TOKEN}`) });
  assert.equal(lines.length, 1);
  assert.ok(!lines[0].includes(TOKEN), lines[0]);
  assert.deepEqual(Object.keys(redactFields({ a: 1, b: [`token=${TOKEN}`] })), ['a', 'b']);
});

test('core/net: an upstream status text and content type never reach a message', async (t) => {
  const server = await startServer((req, res) => {
    res.writeHead(req.url === '/busy' ? 503 : 401, `Nope ${TOKEN}`, { 'content-type': `text/html; auth=${TOKEN}` });
    res.end(`body ${TOKEN}`);
  }, t);
  const retries: string[] = [];
  const busy = await fetchWithRetry(createFetch(), `${server.base}/busy`, {}, { policy: { attempts: 2, baseDelayMs: 1 }, onRetry: ({ reason }) => retries.push(reason) });
  assert.deepEqual(retries, ['HTTP 503 Service Unavailable']);
  assert.equal(httpFailure(`${server.base}/busy`, busy.response, 'The page', { attempts: busy.attempts }).message.includes(TOKEN), false);
  const denied = await fetchWithRetry(createFetch(), `${server.base}/denied`, {}, { policy: { attempts: 1 } });
  const message = httpFailure(`${server.base}/denied`, denied.response, 'The page').message;
  assert.match(message, /HTTP 401 Unauthorized/);
  assert.ok(!message.includes(TOKEN), message);
  assert.equal(statusLine(599), 'HTTP 599');
  assert.equal(mediaTypeLabel(denied.response.headers.get('content-type')), 'text/html');
  assert.equal(mediaTypeLabel(`${TOKEN} text`), 'an unrecognised content type');
});
