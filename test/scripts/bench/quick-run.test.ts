import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredSnippet } from '../../../core/contracts.ts';
import { DEFAULT_ASSEMBLY } from '../../../core/context-assembly.ts';
import { DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import type { BenchQuestion } from '../../../scripts/bench/metrics.ts';
import { infoSnippet } from '../../helpers/info-snippet.ts';
import { buildIndexes, mergeParams, movesAgainst, runQuestions, type QuickResult } from '../../../scripts/bench/quick-run.ts';

const info = (sourcePath: string, heading: string, content: string, lineStart: number): StoredSnippet => ({
  ...infoSnippet(sourcePath, ['Guide', heading], content),
  lineStart,
  lineEnd: lineStart + 5,
});

const snippets = new Map([
  ['koa', [info('cookies.md', 'Cookies', 'Set and read cookies on the response.', 1), info('errors.md', 'Errors', 'Throw an error with a status.', 1)]],
  ['zod', [info('strings.md', 'Strings', 'Validate email addresses and urls.', 1), info('numbers.md', 'Numbers', 'Integers and ranges of numbers.', 1)]],
]);
const q = (corpus: string, qid: string, question: string, path: string): BenchQuestion => ({
  id: qid,
  library: corpus,
  corpus,
  question,
  type: 'api',
  gold: [{ path, lines: [1, 6], grade: 2 }],
});

test('runQuestions judges each half of the questions (by id) on its own and lists the misses', () => {
  // Halves by sha1(id): k1 and z1 are in half A, k2 and z2 in half B.
  const questions = [
    q('koa', 'k1', 'how do I set cookies', 'cookies.md'),
    q('koa', 'k2', 'throw an error with a status', 'errors.md'),
    q('zod', 'z1', 'validate email addresses', 'strings.md'),
    // Gold that no snippet of the answer reaches: a miss of half B.
    q('zod', 'z2', 'validate email addresses', 'numbers.md'),
  ];
  const r = runQuestions(questions, buildIndexes(snippets, DEFAULT_BM25), DEFAULT_ASSEMBLY);
  assert.equal(r.judged, 4);
  assert.equal(r.tuning['hit@5'], 1);
  assert.equal(r.heldOut['hit@5'], 0.5);
  assert.equal(r.macro['hit@5'], 0.75);
  assert.equal(r.halves.B.perCorpus.zod['hit@5'], 0);
  assert.equal(r.halves.B.perCorpus.koa['hit@5'], 1);
  assert.equal(r.halves.A.macro.n, 2);
  assert.equal(r.misses.length, 1);
  assert.match(r.misses[0], /^MISS z2 /);
  assert.ok(r.tokensP50 > 0);
});

test('mergeParams merges objects key by key and leaves the base unchanged', () => {
  const merged = mergeParams(DEFAULT_BM25, { k1: 2, fields: { heading: { weight: 5 } } });
  assert.equal(merged.k1, 2);
  assert.equal(merged.fields.heading.weight, 5);
  assert.equal(merged.fields.heading.b, DEFAULT_BM25.fields.heading.b);
  assert.equal(merged.fields.prose.weight, DEFAULT_BM25.fields.prose.weight);
  assert.notEqual(DEFAULT_BM25.fields.heading.weight, 5);
});

test('movesAgainst names half A\'s moved questions and only counts half B\'s', () => {
  // k1 and z1 are in half A, k2 and z2 in half B (sha1 of the id).
  const ranked = (ranks: Record<string, number | null>): QuickResult =>
    ({
      perQuestion: Object.entries(ranks).map(([id, r]) => ({ id, corpus: 'koa', metrics: { 'mrr@10': r === null ? 0 : 1 / r } })),
    }) as unknown as QuickResult;
  const m = movesAgainst(ranked({ k1: 2, z1: 1, k2: null, z2: 3 }), ranked({ k1: 1, z1: null, k2: 4, z2: 3 }));
  assert.deepEqual(m.movedA, [
    { id: 'k1', before: 2, after: 1 },
    { id: 'z1', before: 1, after: null },
  ]);
  assert.deepEqual(m.A, { up: 1, down: 1 });
  assert.deepEqual(m.B, { up: 1, down: 0 });
  assert.ok(!JSON.stringify(m).includes('k2'), 'half B questions are not named');
});
