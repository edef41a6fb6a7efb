import { test } from 'node:test';
import assert from 'node:assert/strict';
import plugin from '../../../plugins/llm-anthropic/index.ts';
import { JSON_INSTRUCTION } from '../../../plugins/llm-anthropic/anthropic-llm.ts';
import { connectLlm, llmConformance, MODEL, PLANTED_KEY, providerFailureOf } from '../../helpers/llm-conformance.ts';
import { startVendorServer, vendorAnswer } from '../../helpers/vendor-llm-server.ts';

llmConformance('anthropic', plugin);

test('anthropic: the request carries the model, the key, the API version, max_tokens and the system prompt (with the JSON instruction)', async (t) => {
  const server = await startVendorServer(t, 'anthropic', () => ({ json: vendorAnswer('anthropic', '{}', MODEL) }));
  await (await connectLlm(plugin, 'anthropic', server.baseUrl)).complete({ system: 'Rank.', prompt: 'The question', json: true, maxTokens: 64 });
  const call = server.calls[0]!;
  // SDK 1.13 sends the key as a Bearer token (older ones used x-api-key); either carries it.
  assert.ok(call.headers['x-api-key'] === PLANTED_KEY || call.headers.authorization === `Bearer ${PLANTED_KEY}`, JSON.stringify(call.headers));
  assert.ok(call.headers['anthropic-version'], 'the SDK sends its API version');
  assert.equal(call.body.model, MODEL);
  assert.equal(call.body.max_tokens, 64);
  assert.equal(call.body.system, `Rank.\n\n${JSON_INSTRUCTION}`);
  assert.deepEqual(call.body.messages, [{ role: 'user', content: 'The question' }]);
});

test('anthropic: max_tokens (required by the API) has a default', async (t) => {
  const server = await startVendorServer(t, 'anthropic', () => ({ json: vendorAnswer('anthropic', 'x', MODEL) }));
  await (await connectLlm(plugin, 'anthropic', server.baseUrl)).complete({ prompt: 'Q' });
  assert.equal(typeof server.calls[0]!.body.max_tokens, 'number');
  assert.equal(server.calls[0]!.body.system, undefined);
});

test('anthropic: 529 overloaded is unavailable; a refusal is bad_response', async (t) => {
  const overloaded = await startVendorServer(t, 'anthropic', () => ({ status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }));
  assert.equal((await providerFailureOf((await connectLlm(plugin, 'anthropic', overloaded.baseUrl)).complete({ prompt: 'Q' }))).kind, 'unavailable');
  const refusal = { ...(vendorAnswer('anthropic', '', MODEL) as object), content: [], stop_reason: 'refusal' };
  const refused = await startVendorServer(t, 'anthropic', () => ({ json: refusal }));
  const e = await providerFailureOf((await connectLlm(plugin, 'anthropic', refused.baseUrl)).complete({ prompt: 'Q' }));
  assert.equal(e.kind, 'bad_response');
  assert.match(e.message, /refused/);
});
