import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { byHalf, formatHalves, questionHalf, worstCorpora } from '../../../scripts/bench/halves.ts';
import { judgeQuestion, type Metrics } from '../../../scripts/bench/metrics.ts';

test('questionHalf is the parity of the first byte of sha1(id)', () => {
  for (const id of ['koa-A-001', 'zod-C-017', 'k1', 'k2', '']) {
    const even = createHash('sha1').update(id).digest()[0] % 2 === 0;
    assert.equal(questionHalf(id), even ? 'A' : 'B');
  }
  // Fixed values, so a change of the rule shows.
  assert.equal(questionHalf('k1'), 'A');
  assert.equal(questionHalf('k2'), 'B');
});

const SHARED_QUESTIONS = new URL('../../../../shared/bench/questions.jsonl', import.meta.url);

test('the shared questions split into two halves of similar size, every corpus in both', { skip: !existsSync(SHARED_QUESTIONS) && 'no ../shared/bench/questions.jsonl beside the checkout' }, () => {
  const file = SHARED_QUESTIONS;
  const qs = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; corpus: string });
  const a = qs.filter((q) => questionHalf(q.id) === 'A');
  assert.ok(a.length > qs.length * 0.4 && a.length < qs.length * 0.6, `half A holds ${a.length} of ${qs.length}`);
  for (const c of new Set(qs.map((q) => q.corpus))) {
    const inA = qs.filter((q) => q.corpus === c && questionHalf(q.id) === 'A').length;
    const all = qs.filter((q) => q.corpus === c).length;
    assert.ok(inA > 0 && inA < all, `corpus ${c}: ${inA} of ${all} in half A`);
  }
});

const hit: Metrics = judgeQuestion([{ path: 'a.md', lineStart: 1, lineEnd: 2 }], [{ path: 'a.md', grade: 2 }]);
const miss: Metrics = judgeQuestion([{ path: 'b.md', lineStart: 1, lineEnd: 2 }], [{ path: 'a.md', grade: 2 }]);

test('byHalf aggregates each half per corpus; worstCorpora orders by mrr@10 then hit@5', () => {
  const h = byHalf([
    { id: 'k1', corpus: 'koa', metrics: hit },
    { id: 'k2', corpus: 'koa', metrics: miss },
    { id: 'z1', corpus: 'zod', metrics: miss },
    { id: 'z2', corpus: 'zod', metrics: hit },
  ]);
  assert.equal(h.A.perCorpus.koa['mrr@10'], 1);
  assert.equal(h.A.perCorpus.zod['mrr@10'], 0);
  assert.equal(h.B.perCorpus.koa['mrr@10'], 0);
  assert.equal(h.B.perCorpus.zod['mrr@10'], 1);
  assert.equal(h.A.macro['mrr@10'], 0.5);
  assert.deepEqual(
    worstCorpora(h.A.perCorpus, 1).map(([c]) => c),
    ['zod'],
  );
  const text = formatHalves({ koa: hit, zod: miss }, hit, h);
  assert.match(text, /worst corpora of half A \(mrr@10\/hit@5\): zod 0\.000\/0\.000, koa 1\.000\/1\.000/);
  assert.match(text, /worst corpora of half B \(mrr@10\/hit@5\): koa 0\.000/);
});
