/**
 * The reranker leaves a failing endpoint alone for a while (so a dead LLM does not slow every
 * question) and honours a longer Retry-After; a wrong answer does not pause it. A real OpenAI
 * client against the loopback LLM; the clock is the test's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger, SearchHit, StoredSnippet } from '../../../core/contracts.ts';
import type { Providers } from '../../../core/providers.ts';
import plugin from '../../../plugins/llm-openai/index.ts';
import { LlmReranker } from '../../../plugins/reranker-llm/llm-reranker.ts';
import { connectLlm } from '../../helpers/llm-conformance.ts';
import { startLoopbackLlm, type LoopbackBehaviour } from '../../helpers/loopback-llm.ts';
import { vendorError } from '../../helpers/vendor-llm-server.ts';

const quiet: Logger = { log() {}, debug() {}, info() {}, warn() {}, error() {} };

function hit(id: number, title: string, score: number): SearchHit {
  const snippet = { id, seq: id, type: 'info', title, description: '', content: `${title} text`, code: '', language: '', breadcrumb: [title], pageTitle: title, sourcePath: `${id}.md`, lineStart: 1, lineEnd: 2, tokens: 5 } as unknown as StoredSnippet;
  return { snippet, score };
}
const hits = [hit(1, 'Alpha', 3), hit(2, 'Beta', 2), hit(3, 'Gamma', 1)];

async function setup(t: Parameters<typeof startLoopbackLlm>[0], behaviour: LoopbackBehaviour, maxRetries = 0, timeoutMs = 5000) {
  const server = await startLoopbackLlm(t, behaviour);
  const llm = await connectLlm(plugin, 'openai', server.baseUrl, { maxRetries });
  let now = 1_000_000;
  const providers = { llm: async () => llm, fingerprint: async () => 'fp' } as unknown as Providers;
  const options = { candidates: 20, libraryCandidates: 10, promptTokens: 2500, excerptChars: 400, answerTokens: 300, timeoutMs, cooldownMs: 30_000, cacheEntries: 100 };
  const reranker = new LlmReranker(options, providers, quiet, () => now);
  return { server, reranker, advance: (ms: number) => (now += ms) };
}

test('after an endpoint failure the LLM is paused for cooldownMs, then asked again', async (t) => {
  let down = true;
  const { server, reranker, advance } = await setup(t, (p) => (down ? { status: 503, json: vendorError('openai', 503, 'down') } : p.candidates.map((c) => c.n).reverse()));
  assert.deepEqual((await reranker.rerank('q1', hits, 10)).map((h) => h.snippet.id), [1, 2, 3]);
  assert.equal(server.calls.length, 1);
  await reranker.rerank('q2', hits, 10);
  assert.equal(server.calls.length, 1, 'paused');
  down = false;
  advance(30_001);
  assert.deepEqual((await reranker.rerank('q3', hits, 10)).map((h) => h.snippet.id), [3, 2, 1]);
  assert.equal(server.calls.length, 2);
});

test('a 429 with a longer Retry-After pauses for that long', async (t) => {
  const { server, reranker, advance } = await setup(t, () => ({ status: 429, headers: { 'retry-after': '120' }, json: vendorError('openai', 429, 'slow down') }));
  await reranker.rerank('q1', hits, 10);
  advance(60_000);
  await reranker.rerank('q2', hits, 10);
  assert.equal(server.calls.length, 1, 'still within the 120 s');
  advance(61_000);
  await reranker.rerank('q3', hits, 10);
  assert.equal(server.calls.length, 2);
});

test('an answer that is not a valid ranking does not pause the LLM; a valid one is cached', async (t) => {
  let n = 0;
  const { server, reranker } = await setup(t, (p) => (++n === 1 ? [99] : p.candidates.map((c) => c.n).reverse()));
  assert.deepEqual((await reranker.rerank('q', hits, 10)).map((h) => h.snippet.id), [1, 2, 3]);
  assert.deepEqual((await reranker.rerank('q', hits, 10)).map((h) => h.snippet.id), [3, 2, 1]);
  assert.deepEqual((await reranker.rerank('q', hits, 10)).map((h) => h.snippet.id), [3, 2, 1]);
  assert.equal(server.calls.length, 2);
});

test('a question never waits past timeoutMs, even while the SDK waits out a Retry-After between its retries', async (t) => {
  const { server, reranker } = await setup(t, () => ({ status: 429, headers: { 'retry-after': '20' }, json: vendorError('openai', 429, 'slow down') }), 2, 500);
  const started = Date.now();
  assert.deepEqual((await reranker.rerank('q', hits, 10)).map((h) => h.snippet.id), [1, 2, 3]);
  assert.ok(Date.now() - started < 15_000, `waited ${Date.now() - started} ms`);
  assert.equal(server.calls.length, 1);
});
