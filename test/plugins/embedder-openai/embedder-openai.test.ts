import { test } from 'node:test';
import assert from 'node:assert/strict';
import plugin, { openAiEmbedder } from '../../../plugins/embedder-openai/index.ts';
import type { ProviderEndpoint } from '../../../core/provider-settings.ts';
import { providerError } from '../../helpers/provider-error.ts';
import { EMBED_BATCH_DEFAULTS } from '../../../core/embed-batches.ts';
import { hashEmbedding } from '../../helpers/hash-embedding.ts';
import { startOpenAiEmbeddings } from '../../helpers/embedding-servers.ts';

const KEY = 'sk-planted-0penai-KEY-9f8e7d';
const fast = { ...EMBED_BATCH_DEFAULTS, batchSize: 3, concurrency: 2, maxRetries: 2, retryBaseMs: 5, timeoutMs: 2000 };

function endpoint(base: string, over: Partial<ProviderEndpoint> = {}): ProviderEndpoint {
  return { provider: 'custom', api: 'openai', baseUrl: `${base}/v1`, model: 'loopback-hash', apiKey: KEY, keyFrom: 'embedding', ...over };
}

test('embedder-openai: batches of batchSize, base64 as the SDK asks, vectors in input order, key as Bearer', async (t) => {
  const server = await startOpenAiEmbeddings(t, { key: KEY });
  const embedder = openAiEmbedder(endpoint(server.base), fast);
  const texts = ['koa middleware', 'router params', 'error handling', 'context state', 'body parser', 'static files', 'cookies', 'sessions'];
  const got = await embedder.embed(texts, 'document');
  assert.equal(got.length, texts.length);
  got.forEach((v, i) => assert.deepEqual(Array.from(v), Array.from(hashEmbedding(texts[i]))));
  assert.equal(server.bodies.length, 3, 'three requests of at most 3 texts');
  assert.deepEqual(server.bodies.map((b) => (b.input as string[]).length), [3, 3, 2]);
  assert.ok(server.bodies.every((b) => b.encoding_format === 'base64' && b.model === 'loopback-hash'));
  assert.ok(server.requests.every((r) => r.headers.authorization === `Bearer ${KEY}`));
  assert.equal(embedder.dimensions, 256, 'the dimension is learnt from the first reply');
});

test('embedder-openai: a 429 with Retry-After is waited out and retried, then succeeds (counted)', async (t) => {
  const server = await startOpenAiEmbeddings(t);
  server.script.push({ status: 429, headers: { 'retry-after': '0' }, body: JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }) });
  const embedder = openAiEmbedder(endpoint(server.base), { ...fast, retryBaseMs: 0 });
  const got = await embedder.embed(['one', 'two'], 'document');
  assert.equal(got.length, 2);
  assert.equal(server.requests.length, 2, 'one refused, one answered');
  assert.equal(embedder.stats.retries, 1);
});

test('embedder-openai: a Retry-After longer than the client accepts fails as rate_limited with the wait', async (t) => {
  const server = await startOpenAiEmbeddings(t);
  server.script.push({ status: 429, headers: { 'retry-after': '120' }, body: '{"error":{"message":"slow down","type":"requests","param":null,"code":null}}' });
  const err = await providerError(openAiEmbedder(endpoint(server.base), { ...fast, maxRetryDelayMs: 1000 }).embed(['x'], 'document'), KEY);
  assert.equal(err.kind, 'rate_limited');
  assert.equal(err.retryAfterMs, 120_000);
  assert.equal(server.requests.length, 1);
});

test('embedder-openai: 401 and 403 are auth errors, not retried, without the key', async (t) => {
  const server = await startOpenAiEmbeddings(t, { key: 'sk-the-right-one' });
  const err = await providerError(openAiEmbedder(endpoint(server.base), fast).embed(['x'], 'document'), KEY);
  assert.equal(err.kind, 'auth');
  assert.equal(err.status, 401);
  assert.equal(server.requests.length, 1);
  server.script.push({ status: 403, body: '{"error":{"message":"Project does not have access","type":"invalid_request_error","param":null,"code":null}}' });
  const open = await startOpenAiEmbeddings(t);
  open.script.push({ status: 403, body: '{"error":{"message":"no access","type":"x","param":null,"code":null}}' });
  assert.equal((await providerError(openAiEmbedder(endpoint(open.base), fast).embed(['x'], 'document'), KEY)).kind, 'auth');
});

test('embedder-openai: 5xx is retried then unavailable; 400 is bad_request with the vendor message', async (t) => {
  const server = await startOpenAiEmbeddings(t);
  for (let i = 0; i < 3; i++) server.script.push({ status: 503, body: '{"error":{"message":"overloaded","type":"server_error","param":null,"code":null}}' });
  const err = await providerError(openAiEmbedder(endpoint(server.base), fast).embed(['x'], 'document'), KEY);
  assert.equal(err.kind, 'unavailable');
  assert.equal(server.requests.length, 3, 'the first try and two retries');
  server.script.push({ status: 400, body: '{"error":{"message":"The model `nope` does not exist","type":"invalid_request_error","param":"model","code":"model_not_found"}}' });
  const bad = await providerError(openAiEmbedder(endpoint(server.base), fast).embed(['x'], 'document'), KEY);
  assert.equal(bad.kind, 'bad_request');
  assert.match(bad.message, /does not exist/);
});

test('embedder-openai: truncated JSON, a wrong count and a wrong dimension are bad_response', async (t) => {
  const server = await startOpenAiEmbeddings(t);
  const embedder = () => openAiEmbedder(endpoint(server.base), { ...fast, maxRetries: 0 });
  server.script.push({ status: 200, body: '{"object":"list","data":[{"object":"embedding","index":0,"embe' });
  assert.equal((await providerError(embedder().embed(['a'], 'document'), KEY)).kind, 'bad_response');
  server.script.push({ mutate: (a) => (a.data as unknown[]).pop() });
  assert.equal((await providerError(embedder().embed(['a', 'b'], 'document'), KEY)).kind, 'bad_response');
  const e = embedder();
  await e.embed(['first'], 'document');
  server.script.push({ mutate: (a) => ((a.data as Array<{ embedding: string }>)[0].embedding = Buffer.alloc(12).toString('base64')) });
  const wrongDim = await providerError(e.embed(['second'], 'document'), KEY);
  assert.equal(wrongDim.kind, 'bad_response');
  assert.match(wrongDim.message, /3 dimensions where 256/);
});

test('embedder-openai: a slow reply past timeoutMs is a timeout (retried, then given up)', async (t) => {
  const server = await startOpenAiEmbeddings(t);
  server.script.push({ delayMs: 600 }, { delayMs: 600 });
  const err = await providerError(openAiEmbedder(endpoint(server.base), { ...fast, timeoutMs: 150, maxRetries: 1 }).embed(['x'], 'document'), KEY);
  assert.equal(err.kind, 'timeout');
  assert.equal(server.requests.length, 2);
});

test('embedder-openai: a refused connection is unavailable; no key sends no Authorization header', async (t) => {
  const server = await startOpenAiEmbeddings(t);
  await openAiEmbedder(endpoint(server.base, { apiKey: null }), fast).embed(['x'], 'document');
  assert.equal(server.requests[0].headers.authorization, undefined);
  const base = server.base;
  await server.close();
  assert.equal((await providerError(openAiEmbedder(endpoint(base), { ...fast, maxRetries: 0 }).embed(['x'], 'document'), KEY)).kind, 'unavailable');
});

test('embedder-openai: the plugin defines an embedder connector of the openai API', async () => {
  const def = plugin.definitions[0];
  assert.equal(def.role, 'embedder');
  const connector = (await def.create({ ...fast }, {} as never)) as { api: string };
  assert.equal(connector.api, 'openai');
});
