/**
 * POST /api/settings/test's calls, each against a loopback HTTP server shaped like the vendor:
 * the request it sends (path, headers, tiny body), what it makes of 200s, vendor error JSON,
 * redirects and a slow reply; the key never appears in a result.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { startServer, send, type TestServer } from '../helpers/route-server.ts';
import { checkProviders, ANTHROPIC_VERSION } from '../../server/provider-check.ts';
import { resolveProviders, type ProviderSettings } from '../../core/provider-settings.ts';

const KEY = 'sk-PlantedProviderKey-9f8e7d6c5b4a';
const EMBED_KEY = 'sk-PlantedEmbeddingKey-1a2b3c4d5e6f';

async function bodyOf(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

const json = (res: any, status: number, body: unknown) => send(res, status, JSON.stringify(body), 'application/json');

/** An OpenAI-compatible server: /v1/models and /v1/embeddings behind a Bearer key. */
async function openAiLike(t: any, key = KEY): Promise<TestServer & { bodies: any[] }> {
  const bodies: any[] = [];
  const s = await startServer(async (req, res, url) => {
    if (req.headers.authorization !== `Bearer ${key}`) {
      // OpenAI's shape, echoing part of the key as it does.
      return json(res, 401, { error: { message: `Incorrect API key provided: ${String(req.headers.authorization ?? '').slice(7)}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    if (req.method === 'GET' && url.pathname === '/v1/models') return json(res, 200, { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }, { id: 'text-embedding-3-small', object: 'model' }] });
    if (req.method === 'POST' && url.pathname === '/v1/embeddings') {
      const b = await bodyOf(req);
      bodies.push(b);
      return json(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2, 0.3] }], model: b.model });
    }
    return json(res, 404, { error: { message: `Unknown request URL: ${req.method} ${url.pathname}`, type: 'invalid_request_error' } });
  }, t);
  return Object.assign(s, { bodies });
}

const settings = (llm: ProviderSettings['llm'], embedding: ProviderSettings['embedding'] = {}) => resolveProviders({ llm, embedding });
const noKey = (result: unknown) => {
  const text = JSON.stringify(result);
  for (const k of [KEY, EMBED_KEY]) {
    assert.ok(!text.includes(k), 'the key is not in the result');
    assert.ok(!text.includes(k.slice(3, 20)), 'no part of the key either');
  }
};

describe('OpenAI-compatible endpoints', () => {
  test('custom LLM: GET /models with the Bearer key; embeddings: POST /embeddings with one short input', async (t) => {
    const s = await openAiLike(t);
    const r = await checkProviders(settings({ provider: 'custom', baseUrl: `${s.base}/v1`, model: 'gpt-4o-mini', apiKey: KEY }, { model: 'text-embedding-3-small' }));
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.equal(r.llm.ok, true);
    assert.equal(r.llm.status, 200);
    assert.equal(r.embedding.ok, true);
    assert.equal(r.embedding.dimensions, 3);
    assert.deepEqual(s.bodies, [{ model: 'text-embedding-3-small', input: 'ping' }]);
    assert.equal(s.hits('/v1/models')[0].method, 'GET');
    noKey(r);
  });

  test('a model the list does not name is a warning, not a failure', async (t) => {
    const s = await openAiLike(t);
    const r = await checkProviders(settings({ provider: 'openai', baseUrl: `${s.base}/v1`, model: 'gpt-9', apiKey: KEY }));
    assert.equal(r.llm.ok, true);
    assert.match(r.llm.warning ?? '', /does not list model "gpt-9".*gpt-4o-mini/);
  });

  test('a wrong key: 401 with what the vendor said, redacted, and what to check', async (t) => {
    const s = await openAiLike(t, 'sk-the-right-one-000000000');
    const r = await checkProviders(settings({ provider: 'openai', baseUrl: `${s.base}/v1`, apiKey: KEY }));
    assert.equal(r.ok, false);
    assert.equal(r.llm.ok, false);
    assert.equal(r.llm.status, 401);
    assert.match(r.llm.error ?? '', /^HTTP 401: the endpoint refused the key: check the API key \(the endpoint said: Incorrect API key provided: \[redacted\]/);
    assert.equal(r.embedding.status, 401, 'the embedding check (same endpoint and key) fails alike');
    noKey(r);
  });

  test('a base URL that is not an API: 404 says to check the base URL', async (t) => {
    const s = await openAiLike(t);
    const r = await checkProviders(settings({ provider: 'custom', baseUrl: `${s.base}/wrong`, model: 'm', apiKey: KEY }));
    assert.equal(r.llm.status, 404);
    assert.match(r.llm.error ?? '', /check the base URL/);
  });

  test('a 200 that is not a model list fails with a hint', async (t) => {
    const s = await startServer((_req, res) => send(res, 200, '<html>welcome</html>', 'text/html'), t);
    const r = await checkProviders(settings({ provider: 'custom', baseUrl: s.base, model: 'm' }));
    assert.equal(r.llm.ok, false);
    assert.match(r.llm.error ?? '', /model list.*ends in \/v1/);
  });
});

describe('Anthropic', () => {
  test('POST /v1/messages with x-api-key and anthropic-version, 1 token; no embeddings API', async (t) => {
    let seen: { headers: IncomingMessage['headers']; body: any } | undefined;
    const s = await startServer(async (req, res, url) => {
      if (req.method !== 'POST' || url.pathname !== '/v1/messages') return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'Not found' } });
      seen = { headers: req.headers, body: await bodyOf(req) };
      if (req.headers['x-api-key'] !== KEY) return json(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
      return json(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'p' }], model: seen.body.model, stop_reason: 'max_tokens', usage: { input_tokens: 8, output_tokens: 1 } });
    }, t);
    const r = await checkProviders(settings({ provider: 'anthropic', baseUrl: s.base, apiKey: KEY }));
    assert.equal(r.llm.ok, true, JSON.stringify(r.llm));
    assert.equal(seen?.headers['anthropic-version'], ANTHROPIC_VERSION);
    assert.equal(seen?.headers.authorization, undefined, 'no Bearer header to Anthropic');
    assert.deepEqual(seen?.body, { model: 'claude-3-5-haiku-latest', max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] });
    assert.equal(r.embedding.configured, false);
    assert.match(r.embedding.message ?? '', /Anthropic has no embeddings API/);
    assert.equal(r.ok, true, 'only what is configured counts');

    const bad = await checkProviders(settings({ provider: 'anthropic', baseUrl: s.base, apiKey: 'sk-ant-wrong-wrong-wrong' }));
    assert.equal(bad.llm.status, 401);
    assert.match(bad.llm.error ?? '', /invalid x-api-key/);
  });

  test('an overloaded answer (529) says the provider failed', async (t) => {
    const s = await startServer((_req, res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), t);
    const r = await checkProviders(settings({ provider: 'anthropic', baseUrl: s.base, apiKey: KEY }));
    assert.equal(r.llm.ok, false);
    assert.match(r.llm.error ?? '', /^HTTP 529: the provider failed; try again later \(the endpoint said: Overloaded\)/);
  });
});

describe('Gemini', () => {
  test('generateContent and embedContent with x-goog-api-key (never in the URL)', async (t) => {
    const calls: Array<{ path: string; key: unknown; body: any }> = [];
    const s = await startServer(async (req, res, url) => {
      const body = await bodyOf(req);
      calls.push({ path: url.pathname + url.search, key: req.headers['x-goog-api-key'], body });
      if (req.headers['x-goog-api-key'] !== KEY) return json(res, 400, { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' } });
      if (url.pathname === '/v1beta/models/gemini-2.0-flash:generateContent') return json(res, 200, { candidates: [{ content: { parts: [{ text: 'p' }], role: 'model' }, finishReason: 'MAX_TOKENS' }] });
      if (url.pathname === '/v1beta/models/text-embedding-004:embedContent') return json(res, 200, { embedding: { values: [0.5, 0.25, 0.125, 0] } });
      return json(res, 404, { error: { code: 404, message: 'models/x is not found', status: 'NOT_FOUND' } });
    }, t);
    const r = await checkProviders(settings({ provider: 'gemini', baseUrl: `${s.base}/v1beta`, apiKey: KEY }));
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.equal(r.embedding.dimensions, 4);
    assert.deepEqual(calls.map((c) => c.path).sort(), ['/v1beta/models/gemini-2.0-flash:generateContent', '/v1beta/models/text-embedding-004:embedContent']);
    assert.ok(calls.every((c) => c.key === KEY && !c.path.includes(KEY)));
    assert.deepEqual(calls.find((c) => c.path.endsWith(':generateContent'))?.body.generationConfig, { maxOutputTokens: 1 });

    const bad = await checkProviders(settings({ provider: 'gemini', baseUrl: `${s.base}/v1beta`, apiKey: 'AIza-wrong-wrong-wrong' }));
    assert.equal(bad.llm.status, 400);
    assert.match(bad.llm.error ?? '', /API key not valid/);
  });
});

describe('network failures', () => {
  test('a slow endpoint: no answer within the time limit', async (t) => {
    const s = await startServer(async (_req, res) => {
      await new Promise((r) => setTimeout(r, 2000));
      if (!res.writableEnded) json(res, 200, { data: [] });
    }, t);
    const r = await checkProviders(settings({ provider: 'custom', baseUrl: `${s.base}/v1`, model: 'm', apiKey: KEY }, { model: 'e' }), { timeoutMs: 150 });
    assert.equal(r.llm.ok, false);
    assert.match(r.llm.error ?? '', /^no answer within 150 ms from 127\.0\.0\.1:\d+$/);
    assert.match(r.embedding.error ?? '', /no answer within 150 ms/);
  });

  test('connection refused names the host and what to check', async (t) => {
    const s = await startServer((_req, res) => json(res, 200, {}), t);
    await s.close();
    const r = await checkProviders(settings({ provider: 'custom', baseUrl: `${s.base}/v1`, model: 'm', apiKey: KEY }));
    assert.match(r.llm.error ?? '', /could not connect to 127\.0\.0\.1:\d+ \(connection refused\)/);
    noKey(r);
  });

  test('a redirect is not followed: the key is not sent on to another host', async (t) => {
    const other = await startServer((_req, res) => json(res, 200, { data: [{ id: 'm' }] }), t);
    const s = await startServer((_req, res) => send(res, 302, '', 'text/plain', { location: `${other.base}/v1/models` }), t);
    const r = await checkProviders(settings({ provider: 'custom', baseUrl: `${s.base}/v1`, model: 'm', apiKey: KEY }));
    assert.equal(r.llm.ok, false);
    assert.equal(r.llm.status, 302);
    assert.match(r.llm.error ?? '', /redirects; set the base URL to the final address/);
    assert.equal(other.requests.length, 0, 'the other host was never called');
  });

  test('nothing configured: not ok, and says so per role', async () => {
    const r = await checkProviders(settings({}));
    assert.equal(r.ok, false);
    assert.deepEqual(r.llm, { configured: false, ok: false, message: 'no LLM provider is set (llm.provider)' });
    assert.equal(r.embedding.configured, false);
  });
});
