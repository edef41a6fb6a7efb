/**
 * The kit's contract suites, run against the built-in plugins (built with runPlugin) and the fakes;
 * and, in a child process, against implementations that break each rule (they must fail).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { SourceDocument } from '../../core/contracts.ts';
import type { Llm } from '../../core/providers.ts';
import { failingContractTests } from './helpers/contract-failures.ts';
import { createFakeEmbedder, runChunkerContract, runEmbedderContract, runPlugin, runRerankerContract } from '../../core/testing/index.ts';
import markdownPlugin from '../../plugins/chunker-markdown/index.ts';
import openapiPlugin from '../../plugins/source-openapi/index.ts';
import embedderOpenAi from '../../plugins/embedder-openai/index.ts';
import rerankerPlugin from '../../plugins/reranker-llm/index.ts';

const GUIDE = `---
title: Guide
---
# Koa guide

Koa is a small web framework.

## Install

Run the installer:

\`\`\`bash
npm install koa
\`\`\`

## Middleware

Each middleware awaits \`next()\`.

\`\`\`js
app.use(async (ctx, next) => {
  await next();
});
\`\`\`

### Errors

Throw with \`ctx.throw(404)\`.
`;

const docs = (format: string): SourceDocument[] => [
  { path: 'docs/guide.md', format, content: GUIDE },
  { path: 'docs/short.md', format, content: 'Just a line of text.\n' },
];

runChunkerContract('markdown (built-in)', async () => {
  const run = await runPlugin(markdownPlugin, { kind: 'markdown', role: 'chunker' });
  return { chunker: run.instance, documents: docs('markdown'), cleanup: run.close };
});

runChunkerContract('openapi-operations (built-in)', async () => {
  const run = await runPlugin(openapiPlugin, { kind: 'openapi-operations', role: 'chunker' });
  const page = '# Pets API\n\nA pet store.\n\n## List pets\n\n`GET /pets`\n\n```bash\ncurl https://api.example.com/pets\n```\n';
  return { chunker: run.instance, documents: [{ path: 'openapi/pets.md', format: run.instance.formats[0], content: page }], cleanup: run.close };
});

runEmbedderContract('fake embedder (core/testing)', async () => ({ embedder: createFakeEmbedder({ dimensions: 32 }) }));

/** A loopback server shaped like OpenAI's POST /v1/embeddings. */
async function openAiShaped(answer: (body: { input: string[]; model: string }) => { status: number; body: string }): Promise<{ url: string; server: Server }> {
  const fake = createFakeEmbedder({ dimensions: 24 });
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', async () => {
      const body = JSON.parse(raw) as { input: string[]; model: string; encoding_format?: string };
      const out = answer(body);
      if (out.status === 200 && out.body === '') {
        const vectors = await fake.embed(body.input, 'document');
        // Answered in reverse order with their indexes, as servers may.
        const encode = (v: Float32Array) => (body.encoding_format === 'base64' ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') : [...v]);
        const data = vectors.map((v, index) => ({ object: 'embedding', index, embedding: encode(v) })).reverse();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
        return;
      }
      res.writeHead(out.status, { 'content-type': 'application/json' }).end(out.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

async function openAiEmbedder(answer: Parameters<typeof openAiShaped>[0]) {
  const { url, server } = await openAiShaped(answer);
  const run = await runPlugin(embedderOpenAi, { kind: 'openai', role: 'embedder', options: { maxRetries: 0, batchSize: 100 } });
  const embedder = run.instance.connect({ provider: 'custom', api: 'openai', baseUrl: url, model: 'test-embedding', apiKey: null, keyFrom: null });
  return {
    embedder,
    cleanup: async () => {
      await run.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

runEmbedderContract('openai (built-in, loopback server)', () => openAiEmbedder(() => ({ status: 200, body: '' })), {
  makeFailing: () => openAiEmbedder(() => ({ status: 500, body: JSON.stringify({ error: { message: 'boom', type: 'server_error' } }) })),
});

runRerankerContract('llm (built-in, no LLM set)', async () => {
  const run = await runPlugin(rerankerPlugin, { kind: 'llm', role: 'reranker' });
  return { reranker: run.instance, cleanup: run.close };
});

runRerankerContract('llm (built-in, an LLM that answers in reverse)', async () => {
  const run = await runPlugin(rerankerPlugin, { kind: 'llm', role: 'reranker' });
  const llm: Llm = {
    provider: 'custom',
    model: 'reverse',
    async complete(req) {
      req.signal?.throwIfAborted();
      const count = (req.prompt.match(/^\[\d+\]/gm) ?? []).length || 1;
      return { text: JSON.stringify({ ranking: Array.from({ length: count }, (_, i) => count - i) }), model: 'reverse' };
    },
  };
  run.fakes.providers.set({ llm });
  return { reranker: run.instance, cleanup: run.close };
});

test('the suites fail implementations that break the contracts, and do not hang on them', () => {
  const fixture = fileURLToPath(new URL('./fixtures/broken-kit-plugins.ts', import.meta.url));
  const res = failingContractTests(fixture, [
    ['formats is', 'formats'], ['the given documents', 'snippets'], ['chunk() is pure', 'pure'], ['line ranges are cited', 'linemap'], ['odd content', 'odd'],
    ['model is', 'shape'], ['embed() gives one', 'vectors'], ['embed([])', 'empty'], ['vectors come in the order', 'order'], ['many texts', 'batch'], ['a failing provider', 'fails'],
    ['rerank() gives at most', 'subset'], ['rerank() leaves', 'unchanged'], ['no hits', 'empty'], ['an aborted signal', 'abort'], ['active()', 'active'], ['rerankLibraries()', 'libraries'],
  ]);
  assert.notEqual(res.status, 0, 'the broken implementations fail');
  assert.deepEqual(res.failed, [
    'Chunker async: linemap',
    'Chunker async: odd',
    'Chunker async: pure',
    'Chunker async: snippets',
    'Chunker ignores-line-map: linemap',
    'Chunker impure: pure',
    'Chunker out-of-order: linemap',
    'Chunker out-of-order: odd',
    'Chunker out-of-order: snippets',
    'Chunker throws-on-empty: odd',
    'Embedder drops-empty: batch',
    'Embedder drops-empty: empty',
    'Embedder partial-on-failure: fails',
    'Embedder sorts-texts: batch',
    'Embedder sorts-texts: order',
    'Embedder wrong-length: batch',
    'Embedder wrong-length: vectors',
    'Reranker hangs-when-aborted: abort',
    'Reranker ignores-n: abort',
    'Reranker ignores-n: empty',
    'Reranker ignores-n: subset',
    'Reranker invents-hits: abort',
    'Reranker invents-hits: empty',
    'Reranker invents-hits: subset',
    'Reranker sorts-in-place: unchanged',
  ]);
  assert.match(res.stdout, /snippets of a type come in document order/);
  assert.match(res.stdout, /chunk\(\) threw on odd\/empty/);
});
