/**
 * The benchmark harness end to end on a tiny synthetic corpus: real ingest, a real server
 * process, real HTTP, the MiniSearch baseline, summary.json's exact shape.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeTinyBench } from './tiny-bench.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

test('npm run bench indexes, asks over HTTP, judges both systems and writes summary.json', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-bench-test-'));
  try {
    const { corpora, questions } = writeTinyBench(dir);
    const out = join(dir, 'out');
    const res = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'bench', 'run.ts'), '--questions', questions, '--corpora', corpora, '--out', out, '--rounds', '1'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });
    assert.equal(res.status, 0, res.stderr + res.stdout);
    assert.match(res.stdout, /macro/);
    assert.match(res.stdout, /type-none questions \(no answer in the docs\): 1/);

    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    assert.deepEqual(Object.keys(summary).sort(), ['ingest', 'questions', 'systems']);
    assert.equal(summary.questions, 4);
    assert.deepEqual(Object.keys(summary.systems).sort(), ['minisearch', 'refdesk']);
    assert.deepEqual(Object.keys(summary.ingest).sort(), ['alpha', 'beta', 'total']);
    assert.ok(summary.ingest.alpha.snippets >= 3);
    assert.equal(summary.ingest.total.snippets, summary.ingest.alpha.snippets + summary.ingest.beta.snippets);
    for (const name of ['refdesk', 'minisearch']) {
      const s = summary.systems[name];
      // refdesk's figures come by half of the questions too (scripts/bench/halves.ts).
      assert.deepEqual(Object.keys(s).sort(), name === 'refdesk' ? ['halves', 'latencyMs', 'macro', 'perCorpus', 'tokens'] : ['latencyMs', 'macro', 'perCorpus', 'tokens']);
      assert.deepEqual(Object.keys(s.macro).sort(), ['hit@1', 'hit@10', 'hit@3', 'hit@5', 'mrr@10', 'n', 'ndcg@10', 'recall@5']);
      assert.deepEqual(Object.keys(s.perCorpus).sort(), ['alpha', 'beta']);
      assert.deepEqual(Object.keys(s.tokens).sort(), ['p50', 'p90']);
      assert.deepEqual(Object.keys(s.latencyMs).sort(), ['p50', 'p95', 'p99']);
      // The none question is not judged: 2 questions for alpha, 1 for beta.
      assert.equal(s.perCorpus.alpha.n, 2);
      assert.equal(s.perCorpus.beta.n, 1);
      assert.equal(s.macro.n, 3);
    }
    const { A, B } = summary.systems.refdesk.halves;
    assert.equal(A.macro.n + B.macro.n, 3);
    assert.match(res.stdout, /refdesk by half of the questions/);
    assert.match(res.stdout, /worst corpora of half A/);
    // Unambiguous questions: both systems find the answer first.
    const r = summary.systems.refdesk;
    assert.equal(r.perCorpus.alpha['hit@1'], 1);
    assert.equal(r.perCorpus.beta['mrr@10'], 1);
    assert.equal(r.macro['hit@1'], 1);
    assert.ok(r.tokens.p50 > 0);

    const details = JSON.parse(readFileSync(join(out, 'questions.json'), 'utf8'));
    assert.equal(details.length, 4);
    const none = details.find((d: { id: string }) => d.id === 'a-3');
    assert.equal(none.refdesk.metrics, undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('npm run bench without --questions says how to call it', () => {
  const res = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'bench', 'run.ts')], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_NO_WARNINGS: '1' } });
  assert.equal(res.status, 1);
  assert.match(res.stderr, /--questions FILE\.jsonl/);
});
