import { test } from 'node:test';
import assert from 'node:assert/strict';
import plugin from '../../../plugins/llm-openai/index.ts';
import { connectLlm, llmConformance, MODEL, PLANTED_KEY, providerFailureOf } from '../../helpers/llm-conformance.ts';
import { startVendorServer, vendorAnswer } from '../../helpers/vendor-llm-server.ts';

llmConformance('openai', plugin);

test('openai: the request carries the model, the key as a Bearer token, the system prompt and JSON mode', async (t) => {
  const server = await startVendorServer(t, 'openai', () => ({ json: vendorAnswer('openai', '{}', MODEL) }));
  const llm = await connectLlm(plugin, 'openai', server.baseUrl);
  await llm.complete({ system: 'Rank.', prompt: 'The question', json: true, maxTokens: 64, temperature: 0 });
  const call = server.calls[0]!;
  assert.equal(call.headers.authorization, `Bearer ${PLANTED_KEY}`);
  assert.equal(call.body.model, MODEL);
  assert.deepEqual(call.body.messages, [
    { role: 'system', content: 'Rank.' },
    { role: 'user', content: 'The question' },
  ]);
  assert.deepEqual(call.body.response_format, { type: 'json_object' });
  assert.equal(call.body.max_tokens, 64);
  assert.equal(call.body.temperature, 0);
});

test('openai: without JSON mode or a system prompt the request has neither', async (t) => {
  const server = await startVendorServer(t, 'openai', () => ({ json: vendorAnswer('openai', 'plain', MODEL) }));
  await (await connectLlm(plugin, 'openai', server.baseUrl)).complete({ prompt: 'Q' });
  assert.equal(server.calls[0]!.body.response_format, undefined);
  assert.deepEqual(server.calls[0]!.body.messages, [{ role: 'user', content: 'Q' }]);
});

test('openai (custom): a local OpenAI-compatible server without a key is reached', async (t) => {
  const server = await startVendorServer(t, 'openai', () => ({ json: vendorAnswer('openai', 'local answer', 'llama3') }));
  const answer = await (await connectLlm(plugin, 'openai', server.baseUrl, {}, null)).complete({ prompt: 'Q' });
  assert.equal(answer.text, 'local answer');
  assert.ok(!String(server.calls[0]!.headers.authorization ?? '').includes(PLANTED_KEY));
});

test('openai: a refusal is bad_response that says the model refused', async (t) => {
  const reply = vendorAnswer('openai', '', MODEL) as { choices: Array<{ message: Record<string, unknown> }> };
  reply.choices[0]!.message = { role: 'assistant', content: null, refusal: "I'm sorry, I cannot help with that." };
  const server = await startVendorServer(t, 'openai', () => ({ json: reply }));
  const e = await providerFailureOf((await connectLlm(plugin, 'openai', server.baseUrl)).complete({ prompt: 'Q' }));
  assert.equal(e.kind, 'bad_response');
  assert.match(e.message, /refused/);
});
