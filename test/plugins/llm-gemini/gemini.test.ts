import { test } from 'node:test';
import assert from 'node:assert/strict';
import plugin from '../../../plugins/llm-gemini/index.ts';
import { connectLlm, llmConformance, MODEL, PLANTED_KEY, providerFailureOf } from '../../helpers/llm-conformance.ts';
import { geminiInvalidKey, startVendorServer, vendorAnswer } from '../../helpers/vendor-llm-server.ts';

llmConformance('gemini', plugin);

test('gemini: the request carries the model in the path, the key header, the system instruction and JSON mode', async (t) => {
  const server = await startVendorServer(t, 'gemini', () => ({ json: vendorAnswer('gemini', '{}', MODEL) }));
  await (await connectLlm(plugin, 'gemini', server.baseUrl)).complete({ system: 'Rank.', prompt: 'The question', json: true, maxTokens: 64, temperature: 0 });
  const call = server.calls[0]!;
  assert.equal(call.path, `/v1beta/models/${MODEL}:generateContent`);
  assert.equal(call.headers['x-goog-api-key'], PLANTED_KEY);
  assert.ok(!call.path.includes(PLANTED_KEY), 'the key is not in the URL');
  assert.deepEqual(call.body.contents, [{ role: 'user', parts: [{ text: 'The question' }] }]);
  assert.deepEqual(call.body.systemInstruction, { parts: [{ text: 'Rank.' }], role: 'user' });
  assert.equal(call.body.generationConfig.responseMimeType, 'application/json');
  assert.equal(call.body.generationConfig.maxOutputTokens, 64);
});

test("gemini: its answer to an unknown key (400 API_KEY_INVALID) is an auth error", async (t) => {
  const server = await startVendorServer(t, 'gemini', () => ({ status: 400, json: geminiInvalidKey() }));
  const e = await providerFailureOf((await connectLlm(plugin, 'gemini', server.baseUrl)).complete({ prompt: 'Q' }));
  assert.equal(e.kind, 'auth');
  assert.match(e.message, /refused the API key/);
});

test('gemini: a blocked prompt is bad_response', async (t) => {
  const server = await startVendorServer(t, 'gemini', () => ({ json: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } } }));
  const e = await providerFailureOf((await connectLlm(plugin, 'gemini', server.baseUrl)).complete({ prompt: 'Q' }));
  assert.equal(e.kind, 'bad_response');
  assert.match(e.message, /blocked/);
});
