import { test } from 'node:test';
import assert from 'node:assert/strict';
import plugin, { geminiEmbedder, splitGeminiBase } from '../../../plugins/embedder-gemini/index.ts';
import type { ProviderEndpoint } from '../../../core/provider-settings.ts';
import { providerError } from '../../helpers/provider-error.ts';
import { EMBED_BATCH_DEFAULTS } from '../../../core/embed-batches.ts';
import { hashEmbedding } from '../../helpers/hash-embedding.ts';
import { startGeminiEmbeddings } from '../../helpers/embedding-servers.ts';

const KEY = 'AIza-planted-GEMINI-key-5c4b3a';
const fast = { ...EMBED_BATCH_DEFAULTS, batchSize: 2, concurrency: 2, maxRetries: 2, retryBaseMs: 5, timeoutMs: 2000 };

function endpoint(base: string, over: Partial<ProviderEndpoint> = {}): ProviderEndpoint {
  return { provider: 'gemini', api: 'gemini', baseUrl: `${base}/v1beta`, model: 'loopback-hash', apiKey: KEY, keyFrom: 'embedding', ...over };
}

test('embedder-gemini: the base URL splits into the SDK base and API version', () => {
  assert.deepEqual(splitGeminiBase('https://generativelanguage.googleapis.com/v1beta'), { baseUrl: 'https://generativelanguage.googleapis.com', apiVersion: 'v1beta' });
  assert.deepEqual(splitGeminiBase('http://127.0.0.1:9/proxy/v1'), { baseUrl: 'http://127.0.0.1:9/proxy', apiVersion: 'v1' });
});

test('embedder-gemini: batchEmbedContents in batches, task type per purpose, key in x-goog-api-key, order kept', async (t) => {
  const server = await startGeminiEmbeddings(t, { key: KEY });
  const embedder = geminiEmbedder(endpoint(server.base), fast);
  const texts = ['hugo shortcodes', 'front matter', 'taxonomies', 'page bundles', 'image processing'];
  const got = await embedder.embed(texts, 'document');
  got.forEach((v, i) => assert.deepEqual(Array.from(v), Array.from(hashEmbedding(texts[i]))));
  assert.deepEqual(server.bodies.map((b) => (b.requests as unknown[]).length), [2, 2, 1]);
  const first = (server.bodies[0].requests as Array<{ model: string; taskType: string }>)[0];
  assert.equal(first.model, 'models/loopback-hash');
  assert.equal(first.taskType, 'RETRIEVAL_DOCUMENT');
  assert.ok(server.requests.every((r) => r.headers['x-goog-api-key'] === KEY && r.path === '/v1beta/models/loopback-hash:batchEmbedContents'));
  await embedder.embed(['a question'], 'query');
  assert.equal((server.bodies.at(-1)!.requests as Array<{ taskType: string }>)[0].taskType, 'RETRIEVAL_QUERY');
});

test('embedder-gemini: an invalid key (400 API_KEY_INVALID) and 403 are auth errors', async (t) => {
  const server = await startGeminiEmbeddings(t, { key: 'the-right-key' });
  const err = await providerError(geminiEmbedder(endpoint(server.base), fast).embed(['x'], 'document'), KEY);
  assert.equal(err.kind, 'auth');
  assert.equal(server.requests.length, 1, 'not retried');
  const other = await startGeminiEmbeddings(t);
  other.script.push({ status: 403, body: '{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}' });
  assert.equal((await providerError(geminiEmbedder(endpoint(other.base), fast).embed(['x'], 'document'), KEY)).kind, 'auth');
});

test('embedder-gemini: 429 with Retry-After or RetryInfo is retried then succeeds; a long one fails as rate_limited', async (t) => {
  const server = await startGeminiEmbeddings(t);
  server.script.push({ status: 429, headers: { 'retry-after': '0' }, body: '{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}' });
  const embedder = geminiEmbedder(endpoint(server.base), fast);
  assert.equal((await embedder.embed(['x'], 'document')).length, 1);
  assert.equal(embedder.stats.retries, 1);
  assert.equal(server.requests.length, 2);
  server.script.push({
    status: 429,
    body: '{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"45s"}]}}',
  });
  const err = await providerError(geminiEmbedder(endpoint(server.base), { ...fast, maxRetryDelayMs: 1000 }).embed(['x'], 'document'), KEY);
  assert.equal(err.kind, 'rate_limited');
  assert.equal(err.retryAfterMs, 45_000);
});

test('embedder-gemini: truncated JSON, a wrong count, 500s and a slow reply', async (t) => {
  const server = await startGeminiEmbeddings(t);
  const once = { ...fast, maxRetries: 0 };
  server.script.push({ status: 200, body: '{"embeddings":[{"values":[0.1,0.' });
  assert.equal((await providerError(geminiEmbedder(endpoint(server.base), once).embed(['a'], 'document'), KEY)).kind, 'bad_response');
  server.script.push({ mutate: (a) => (a.embeddings as unknown[]).push({ values: [1, 2] }) });
  assert.equal((await providerError(geminiEmbedder(endpoint(server.base), once).embed(['a'], 'document'), KEY)).kind, 'bad_response');
  server.script.push({ status: 500, body: '{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}' });
  assert.equal((await providerError(geminiEmbedder(endpoint(server.base), once).embed(['a'], 'document'), KEY)).kind, 'unavailable');
  server.script.push({ delayMs: 500 });
  assert.equal((await providerError(geminiEmbedder(endpoint(server.base), { ...once, timeoutMs: 100 }).embed(['a'], 'document'), KEY)).kind, 'timeout');
});

test('embedder-gemini: the plugin defines an embedder connector of the gemini API', async () => {
  const connector = (await plugin.definitions[0].create({ ...fast }, {} as never)) as { api: string };
  assert.equal(connector.api, 'gemini');
});
