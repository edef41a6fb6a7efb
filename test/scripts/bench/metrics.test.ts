import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregate, goldRanks, hasGold, judgeQuestion, percentile, type GoldSection, type RetrievedRef } from '../../../scripts/bench/metrics.ts';
import { parseQuestions } from '../../../scripts/bench/inputs.ts';

const ref = (path: string, lineStart: number, lineEnd: number): RetrievedRef => ({ path, lineStart, lineEnd });
const miss = ref('other.md', 1, 100);

test('a snippet hits a gold section when the path is equal and the line ranges overlap', () => {
  const gold: GoldSection[] = [{ path: 'a.md', lines: [10, 20], grade: 2 }];
  assert.deepEqual(goldRanks([ref('a.md', 1, 9)], gold), [Infinity]); // ends before the span
  assert.deepEqual(goldRanks([ref('a.md', 21, 30)], gold), [Infinity]); // starts after it
  assert.deepEqual(goldRanks([ref('b.md', 10, 20)], gold), [Infinity]); // other file, same lines
  assert.deepEqual(goldRanks([ref('a.md', 20, 25)], gold), [1]); // touches the last line
  assert.deepEqual(goldRanks([ref('a.md', 5, 10)], gold), [1]); // touches the first line
  assert.deepEqual(goldRanks([ref('a.md', 1, 100)], gold), [1]); // encloses it
});

test('page-level gold (no line span) is hit by any snippet of that path', () => {
  const gold: GoldSection[] = [{ path: 'guide/a.md', grade: 2 }];
  assert.equal(judgeQuestion([miss, ref('guide/a.md', 900, 910)], gold)['mrr@10'], 0.5);
  assert.equal(judgeQuestion([ref('guide/b.md', 1, 10)], gold)['hit@10'], 0);
});

test('hit@k and mrr@10 follow the rank of the first hit', () => {
  const gold: GoldSection[] = [{ path: 'a.md', lines: [10, 20], grade: 2 }];
  const at = (rank: number) => judgeQuestion([...Array(rank - 1).fill(miss), ref('a.md', 12, 14)], gold);
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 10, 11].map((r) => [at(r)['hit@1'], at(r)['hit@3'], at(r)['hit@5'], at(r)['hit@10']]),
    [[1, 1, 1, 1], [0, 1, 1, 1], [0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]],
  );
  assert.equal(at(1)['mrr@10'], 1);
  assert.equal(at(4)['mrr@10'], 0.25);
  assert.equal(at(10)['mrr@10'], 0.1);
  assert.equal(at(11)['mrr@10'], 0);
  assert.equal(judgeQuestion([], gold)['mrr@10'], 0);
});

test('several snippets of one gold section count once, at the rank of the first', () => {
  const gold: GoldSection[] = [
    { path: 'a.md', lines: [10, 20], grade: 2 },
    { path: 'a.md', lines: [40, 50], grade: 1 },
  ];
  const dup = judgeQuestion([ref('a.md', 10, 12), ref('a.md', 13, 20), ref('a.md', 14, 15)], gold);
  const once = judgeQuestion([ref('a.md', 10, 12)], gold);
  assert.equal(dup['ndcg@10'], once['ndcg@10']); // the repeats add no gain
  assert.deepEqual(goldRanks([miss, ref('a.md', 10, 12), ref('a.md', 13, 20)], gold), [2, Infinity]);
  // nDCG: gain 3 at rank 1 against the ideal 3 + 1/log2(3)
  assert.ok(Math.abs(once['ndcg@10'] - 3 / (3 + 1 / Math.log2(3))) < 1e-12);
});

test('nDCG@10 uses gain 2^grade - 1 and the ideal order of the gold grades', () => {
  const gold: GoldSection[] = [
    { path: 'a.md', lines: [1, 5], grade: 2 },
    { path: 'b.md', lines: [1, 5], grade: 1 },
  ];
  const ideal = 3 + 1 / Math.log2(3);
  const best = judgeQuestion([ref('a.md', 1, 2), ref('b.md', 1, 2)], gold);
  const swapped = judgeQuestion([ref('b.md', 1, 2), ref('a.md', 1, 2)], gold);
  const onlySupport = judgeQuestion([ref('b.md', 1, 2)], gold);
  assert.equal(best['ndcg@10'], 1);
  assert.ok(Math.abs(swapped['ndcg@10'] - (1 + 3 / Math.log2(3)) / ideal) < 1e-12);
  assert.ok(Math.abs(onlySupport['ndcg@10'] - 1 / ideal) < 1e-12);
  assert.ok(swapped['ndcg@10'] < best['ndcg@10']);
  // One long snippet covering both sections at rank 1 cannot score above 1.
  const gold2: GoldSection[] = [
    { path: 'a.md', lines: [1, 50], grade: 2 },
    { path: 'a.md', lines: [10, 20], grade: 1 },
  ];
  assert.equal(judgeQuestion([ref('a.md', 1, 50)], gold2)['ndcg@10'], 1);
});

test('recall@5 counts the grade-2 sections found in the first five', () => {
  const gold: GoldSection[] = [
    { path: 'a.md', lines: [1, 5], grade: 2 },
    { path: 'b.md', lines: [1, 5], grade: 2 },
    { path: 'c.md', lines: [1, 5], grade: 1 },
  ];
  assert.equal(judgeQuestion([ref('c.md', 1, 1), ref('a.md', 1, 1)], gold)['recall@5'], 0.5);
  assert.equal(judgeQuestion([miss, miss, miss, miss, miss, ref('a.md', 1, 1)], gold)['recall@5'], 0);
  assert.equal(judgeQuestion([ref('b.md', 2, 2), ref('a.md', 1, 1)], gold)['recall@5'], 1);
  // only grade-1 gold: recall counts those
  assert.equal(judgeQuestion([ref('c.md', 1, 1)], [{ path: 'c.md', lines: [1, 5], grade: 1 }])['recall@5'], 1);
});

test('type-none questions are not judged against gold but scored separately', () => {
  const [withGold, none] = parseQuestions(
    [
      JSON.stringify({ id: 'x-1', library: '/o/x', corpus: 'x', question: 'q?', type: 'howto', gold: [{ path: 'a.md', lines: [1, 2], grade: 2 }] }),
      JSON.stringify({ id: 'x-2', library: '/o/x', corpus: 'x', question: 'r?', type: 'none', gold: [] }),
    ].join('\n'),
  );
  assert.equal(hasGold(withGold), true);
  assert.equal(hasGold(none), false);
  assert.throws(() => judgeQuestion([miss], none.gold), /scored separately/);
});

test('macro is the mean over corpora, each corpus weighing the same', () => {
  const m = (mrr: number) => ({ ...judgeQuestion([], [{ path: 'a.md', grade: 2 }]), 'mrr@10': mrr });
  const { macro, perCorpus } = aggregate([
    { corpus: 'big', metrics: m(1) },
    { corpus: 'big', metrics: m(1) },
    { corpus: 'big', metrics: m(1) },
    { corpus: 'small', metrics: m(0) },
  ]);
  assert.equal(perCorpus.big['mrr@10'], 1);
  assert.equal(perCorpus.big.n, 3);
  assert.equal(perCorpus.small['mrr@10'], 0);
  assert.equal(macro['mrr@10'], 0.5); // not 0.75, the mean over questions
  assert.equal(macro.n, 4);
});

test('percentiles are nearest-rank', () => {
  const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 1..100 shuffled order
  assert.equal(percentile(xs, 50), 50);
  assert.equal(percentile(xs, 99), 99);
  assert.equal(percentile(xs, 100), 100);
  assert.equal(percentile([7], 95), 7);
  assert.equal(percentile([], 50), 0);
});

test('a bad questions file is refused with the line and what to fix', () => {
  assert.throws(() => parseQuestions('{"id":"a"', 'q.jsonl'), /q\.jsonl:1: not valid JSON/);
  const noGold = JSON.stringify({ id: 'a', library: '/o/x', corpus: 'x', question: 'q', type: 'api', gold: [] });
  assert.throws(() => parseQuestions('\n' + noGold, 'q.jsonl'), /q\.jsonl:2: a question of type "api" needs gold sections/);
  const badLines = JSON.stringify({ id: 'a', library: '/o/x', corpus: 'x', question: 'q', type: 'api', gold: [{ path: 'a.md', lines: [9, 3], grade: 2 }] });
  assert.throws(() => parseQuestions(badLines), /gold\[0\]\.lines must be \[first, last\]/);
  assert.throws(() => parseQuestions('\n\n'), /no questions/);
});
