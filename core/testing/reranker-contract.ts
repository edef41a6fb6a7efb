/**
 * A reusable node:test suite for the Reranker contract: every Reranker implementation runs it.
 *
 *   runRerankerContract('llm', async () => ({ reranker, cleanup }));
 *
 * `makeReranker` returns a reranker ready to judge (e.g. with a fake LLM that answers); each test
 * calls it again.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LibraryRecord, Reranker, SearchHit } from '../contracts.ts';
import { withFixture } from './fixture.ts';

export interface RerankerFixture {
  reranker: Reranker;
  cleanup?(): Promise<void>;
}

export interface RerankerContractOptions {
  /** How long one call may take before the test fails as hung, in milliseconds (default 10 s). */
  timeoutMs?: number;
}

const TOPICS = [
  ['Install', 'Run npm install koa to add the package.'],
  ['Middleware', 'app.use(fn) adds a middleware function; each awaits next().'],
  ['Context', 'ctx.body sets the response body; ctx.status the status code.'],
  ['Errors', 'Throw ctx.throw(404) to answer with an error status.'],
  ['Routing', 'Koa has no router: use @koa/router for routes.'],
  ['Testing', 'Start the app on port 0 and request it with fetch.'],
] as const;

/** Hits to rerank: distinct snippets, ids 1..n, best-first by a made-up lexical score. */
export function sampleHits(count = TOPICS.length): SearchHit[] {
  return Array.from({ length: count }, (_, i) => {
    const [title, content] = TOPICS[i % TOPICS.length];
    return {
      score: count - i,
      snippet: {
        id: i + 1,
        seq: i,
        type: 'info' as const,
        title: `${title} ${i + 1}`,
        description: '',
        language: '',
        code: '',
        content,
        breadcrumb: ['Koa', title],
        pageTitle: 'Koa',
        sourcePath: `docs/${title.toLowerCase()}.md`,
        lineStart: 1,
        lineEnd: 5,
        tokens: 20,
      },
    };
  });
}

function sampleLibraries(): LibraryRecord[] {
  return ['koa', 'express', 'fastify', 'hono'].map((n, i) => ({
    id: `/docs/${n}`,
    title: n,
    description: `The ${n} web framework.`,
    branch: 'main',
    lastUpdateDate: null,
    state: 'finalized' as const,
    totalTokens: 1000,
    totalSnippets: 10 + i,
    stars: 0,
    trustScore: 5,
    benchmarkScore: 50,
    versions: [],
    source: { kind: 'upload', spec: { name: n } },
    createdAt: '2026-01-01T00:00:00.000Z',
  }));
}

/** Problems of a reranked list: not an array, more than n, hits not among the given ones, duplicates. */
export function rerankProblems(given: readonly SearchHit[], out: unknown, n: number): string[] {
  if (!Array.isArray(out)) return [`rerank() resolved with ${typeof out}, not an array`];
  const problems: string[] = [];
  if (out.length > n) problems.push(`rerank() gave ${out.length} hits, more than n (${n})`);
  const ids = new Set(given.map((h) => h.snippet.id));
  const seen = new Set<number>();
  out.forEach((h: SearchHit, i) => {
    const id = h?.snippet?.id;
    if (!ids.has(id)) problems.push(`hit #${i + 1} is not one of the given hits`);
    else if (seen.has(id)) problems.push(`hit #${i + 1} (snippet ${id}) is given twice`);
    seen.add(id);
  });
  return problems;
}

async function settles<T>(p: Promise<T>, timeoutMs: number): Promise<{ value?: T; error?: unknown; hung: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<{ hung: true }>((resolve) => {
    timer = setTimeout(() => resolve({ hung: true }), timeoutMs);
  });
  try {
    return await Promise.race([p.then((value) => ({ value, hung: false }), (error: unknown) => ({ error, hung: false })), hung]);
  } finally {
    clearTimeout(timer);
  }
}

export function runRerankerContract(name: string, makeReranker: () => Promise<RerankerFixture>, options: RerankerContractOptions = {}): void {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const context = (signal?: AbortSignal) => ({ libraryId: '/docs/koa', version: '', ...(signal ? { signal } : {}) });

  const withReranker = (fn: (r: Reranker) => Promise<void>) => withFixture(makeReranker, (f) => fn(f.reranker));

  describe(`Reranker contract: ${name}`, () => {
    test('rerank() gives at most n of the given hits, each once', () =>
      withReranker(async (r) => {
        const hits = sampleHits();
        for (const n of [hits.length, 3, 1]) {
          const out = await r.rerank('how do I add middleware', hits, n, context());
          assert.deepEqual(rerankProblems(hits, out, n), [], `rerank(query, ${hits.length} hits, ${n}) breaks the Reranker contract`);
        }
      }));

    test('rerank() leaves the given hits and their array unchanged', () =>
      withReranker(async (r) => {
        const hits = sampleHits();
        const before = structuredClone(hits);
        await r.rerank('set the response body', hits, 3, context());
        assert.deepEqual(hits, before, 'rerank() changed its input');
      }));

    test('no hits, or n = 0, gives no hits', () =>
      withReranker(async (r) => {
        assert.deepEqual(await r.rerank('anything', [], 5, context()), []);
        assert.deepEqual(await r.rerank('anything', sampleHits(), 0, context()), []);
      }));

    test('an aborted signal makes rerank() settle promptly (resolved within the contract, or rejected)', () =>
      withReranker(async (r) => {
        const controller = new AbortController();
        controller.abort();
        const hits = sampleHits();
        const out = await settles(r.rerank('routing', hits, 4, context(controller.signal)), timeoutMs);
        assert.ok(!out.hung, `rerank() with an aborted signal did not settle within ${timeoutMs} ms`);
        if (!('error' in out)) assert.deepEqual(rerankProblems(hits, out.value, 4), []);
      }));

    test('active(), when present, resolves to a boolean', () =>
      withReranker(async (r) => {
        if (!r.active) return;
        assert.equal(typeof (await r.active()), 'boolean');
      }));

    test('rerankLibraries(), when present, gives at most the given candidates, each once', () =>
      withReranker(async (r) => {
        if (!r.rerankLibraries) return;
        const candidates = sampleLibraries();
        const before = structuredClone(candidates);
        const out = await r.rerankLibraries('a small web framework', 'koa', candidates);
        assert.ok(Array.isArray(out), 'rerankLibraries() must resolve with an array');
        const ids = out.map((l) => l.id);
        assert.equal(new Set(ids).size, ids.length, 'a library is given twice');
        for (const id of ids) assert.ok(before.some((c) => c.id === id), `${id} is not one of the candidates`);
        assert.deepEqual(candidates, before, 'rerankLibraries() changed its input');
      }));
  });
}
