/**
 * What every LLM provider plugin must do against its vendor's API (a loopback server shaped like
 * it: test/helpers/vendor-llm-server.ts): answer, refuse a key with `auth` (never echoing it),
 * honour Retry-After on 429, map 5xx, malformed, truncated and slow replies to their kinds.
 * Each plugin's test file runs this suite and adds its own checks of the request it sends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { Plugin } from '../../core/define.ts';
import type { ProviderEndpoint } from '../../core/provider-settings.ts';
import { ProviderError, type Llm, type LlmConnector } from '../../core/providers.ts';
import type { ProviderClientOptions } from '../../core/provider-sdk.ts';
import { completionPath, startVendorServer, vendorAnswer, vendorError, type ScriptedReply, type Vendor, type VendorServer } from './vendor-llm-server.ts';

export const PLANTED_KEY = 'sk-planted-4f8c2e9a71d3b6c5e0f4a2d8';
export const MODEL = 'test-model-1';

/** A client of `plugin` for the server's endpoint. */
export async function connectLlm(plugin: Plugin, vendor: Vendor, baseUrl: string, options: Partial<ProviderClientOptions> = {}, apiKey: string | null = PLANTED_KEY): Promise<Llm> {
  const def = plugin.definitions.find((d) => d.role === 'llm')!;
  const connector = (await def.create({ timeoutMs: 5000, maxRetries: 0, ...options }, {})) as LlmConnector;
  assert.equal(connector.api, vendor);
  const endpoint: ProviderEndpoint = { provider: vendor, api: vendor, baseUrl, model: MODEL, apiKey, keyFrom: apiKey ? 'llm' : null };
  return connector.connect(endpoint);
}

/** The failure of `p`, checked to be a ProviderError that nowhere carries the planted key. */
export async function providerFailureOf(p: Promise<unknown>): Promise<ProviderError> {
  const e = await p.then(
    () => assert.fail('expected the call to fail'),
    (err: unknown) => err,
  );
  assert.ok(e instanceof ProviderError, `not a ProviderError: ${String(e)}`);
  for (const text of [e.message, String(e.stack), JSON.stringify(e), JSON.stringify(Object.entries(e))]) assert.ok(!text.includes(PLANTED_KEY), `the key leaked: ${text}`);
  return e;
}

export function llmConformance(vendor: Vendor, plugin: Plugin): void {
  const path = completionPath(vendor, MODEL);
  const serve = (t: Parameters<typeof startVendorServer>[0], script: (n: number) => ScriptedReply): Promise<VendorServer> => startVendorServer(t, vendor, (_call, n) => script(n));

  test(`${vendor}: answers with the model's text, model and token counts`, async (t) => {
    const server = await serve(t, () => ({ json: vendorAnswer(vendor, '{"ranking":[3,1]}', MODEL) }));
    const llm = await connectLlm(plugin, vendor, server.baseUrl);
    const answer = await llm.complete({ system: 'You rank snippets.', prompt: 'Which?', json: true, maxTokens: 50, temperature: 0 });
    assert.deepEqual(answer, { text: '{"ranking":[3,1]}', model: MODEL, inputTokens: 19, outputTokens: 10 });
    assert.equal(server.calls.length, 1);
    assert.equal(server.calls[0]!.method, 'POST');
    assert.equal(server.calls[0]!.path, path);
    assert.equal(llm.model, MODEL);
  });

  test(`${vendor}: a refused key (401) is an auth error that says so and never shows the key, even when the vendor echoes it`, async (t) => {
    const server = await serve(t, () => ({ status: 401, json: vendorError(vendor, 401, `Incorrect API key provided: ${PLANTED_KEY}. Authorization: Bearer ${PLANTED_KEY}`) }));
    const llm = await connectLlm(plugin, vendor, server.baseUrl, { maxRetries: 2 });
    const e = await providerFailureOf(llm.complete({ prompt: 'hi' }));
    assert.equal(e.kind, 'auth');
    assert.equal(e.status, 401);
    assert.match(e.message, /refused the API key \(HTTP 401\)/);
    assert.equal(server.calls.length, 1, '401 is not retried');
  });

  test(`${vendor}: 403 is an auth error too`, async (t) => {
    const server = await serve(t, () => ({ status: 403, json: vendorError(vendor, 403, 'Permission denied for this key.') }));
    const e = await providerFailureOf((await connectLlm(plugin, vendor, server.baseUrl)).complete({ prompt: 'hi' }));
    assert.equal(e.kind, 'auth');
  });

  test(`${vendor}: 429 with Retry-After is waited out and retried, then answers`, async (t) => {
    const server = await serve(t, (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' }, json: vendorError(vendor, 429, 'Rate limit reached.') } : { json: vendorAnswer(vendor, 'after the wait', MODEL) }));
    const llm = await connectLlm(plugin, vendor, server.baseUrl, { maxRetries: 2 });
    const started = Date.now();
    const answer = await llm.complete({ prompt: 'hi' });
    assert.equal(answer.text, 'after the wait');
    assert.equal(server.calls.length, 2);
    // The wait the vendor asked for was honoured (a lower bound only: never an upper one).
    assert.ok(Date.now() - started >= 900, `retried after ${Date.now() - started} ms`);
  });

  test(`${vendor}: 429 past the retries is rate_limited with the vendor's Retry-After`, async (t) => {
    const server = await serve(t, () => ({ status: 429, headers: { 'retry-after': '7' }, json: vendorError(vendor, 429, 'Rate limit reached.') }));
    const e = await providerFailureOf((await connectLlm(plugin, vendor, server.baseUrl, { maxRetries: 0 })).complete({ prompt: 'hi' }));
    assert.equal(e.kind, 'rate_limited');
    assert.equal(e.retryAfterMs, 7000);
    assert.match(e.message, /HTTP 429/);
    assert.equal(server.calls.length, 1);
  });

  test(`${vendor}: 5xx is unavailable (after its retries)`, async (t) => {
    const server = await serve(t, () => ({ status: 503, headers: { 'retry-after': '0' }, json: vendorError(vendor, 503, 'The server is overloaded.') }));
    const e = await providerFailureOf((await connectLlm(plugin, vendor, server.baseUrl, { maxRetries: 1 })).complete({ prompt: 'hi' }));
    assert.equal(e.kind, 'unavailable');
    assert.equal(e.status, 503);
    assert.equal(server.calls.length, 2, 'one retry');
  });

  test(`${vendor}: 400 (an unknown model) is bad_request with the vendor's reason`, async (t) => {
    const server = await serve(t, () => ({ status: 400, json: vendorError(vendor, 400, 'The model `nope` does not exist.') }));
    const e = await providerFailureOf((await connectLlm(plugin, vendor, server.baseUrl, { maxRetries: 2 })).complete({ prompt: 'hi' }));
    assert.equal(e.kind, 'bad_request');
    assert.match(e.message, /does not exist/);
    assert.equal(server.calls.length, 1);
  });

  test(`${vendor}: malformed JSON is bad_response`, async (t) => {
    const server = await serve(t, () => ({ raw: '{"id": "x", oops' }));
    const e = await providerFailureOf((await connectLlm(plugin, vendor, server.baseUrl)).complete({ prompt: 'hi' }));
    assert.equal(e.kind, 'bad_response');
  });

  test(`${vendor}: a truncated reply (JSON cut short) is bad_response`, async (t) => {
    const full = JSON.stringify(vendorAnswer(vendor, 'a long enough answer', MODEL));
    const server = await serve(t, () => ({ raw: full.slice(0, Math.floor(full.length / 2)) }));
    const e = await providerFailureOf((await connectLlm(plugin, vendor, server.baseUrl)).complete({ prompt: 'hi' }));
    assert.equal(e.kind, 'bad_response');
  });

  test(`${vendor}: a connection cut mid-body is bad_response or unavailable, never an untyped error`, async (t) => {
    const full = JSON.stringify(vendorAnswer(vendor, 'a long enough answer', MODEL));
    const server = await serve(t, () => ({ raw: full, cutAfterBytes: 20 }));
    const e = await providerFailureOf((await connectLlm(plugin, vendor, server.baseUrl)).complete({ prompt: 'hi' }));
    assert.ok(e.kind === 'bad_response' || e.kind === 'unavailable', e.kind);
  });

  test(`${vendor}: a reply of the wrong shape is bad_response`, async (t) => {
    const server = await serve(t, () => ({ json: { unexpected: true } }));
    const e = await providerFailureOf((await connectLlm(plugin, vendor, server.baseUrl)).complete({ prompt: 'hi' }));
    assert.equal(e.kind, 'bad_response');
  });

  test(`${vendor}: a reply slower than the timeout is a timeout`, async (t) => {
    const server = await serve(t, () => ({ delayMs: 3000, json: vendorAnswer(vendor, 'too late', MODEL) }));
    const e = await providerFailureOf((await connectLlm(plugin, vendor, server.baseUrl, { timeoutMs: 200, maxRetries: 0 })).complete({ prompt: 'hi' }));
    assert.equal(e.kind, 'timeout');
  });

  test(`${vendor}: a refused connection is unavailable`, async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const e = await providerFailureOf((await connectLlm(plugin, vendor, `http://127.0.0.1:${port}/v1`)).complete({ prompt: 'hi' }));
    assert.equal(e.kind, 'unavailable');
  });
}
