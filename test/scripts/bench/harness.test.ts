/**
 * The benchmark harness end to end on a tiny synthetic corpus: real ingest, a real server
 * process, real HTTP, the MiniSearch baseline, summary.json's exact shape.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

test('npm run bench indexes, asks over HTTP, judges both systems and writes summary.json', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-bench-test-'));
  try {
    const corpora = join(dir, 'corpora');
    write(
      join(corpora, 'MANIFEST.json'),
      JSON.stringify({ corpora: [{ name: 'alpha', libraryId: '/acme/alpha', bytes: 0 }, { name: 'beta', libraryId: '/acme/beta', bytes: 0 }] }),
    );
    write(
      join(corpora, 'alpha', 'docs', 'guide.md'),
      [
        '# Alpha guide', // 1
        '', // 2
        'Alpha is a tiny framework for examples.', // 3
        '', // 4
        '## Frobnicate widgets', // 5
        '', // 6
        'Call `frobnicateWidget()` to frobnicate a widget quickly.', // 7
        '', // 8
        '```js', // 9
        'frobnicateWidget({ speed: 3 })', // 10
        '```', // 11
        '', // 12
        '## Install', // 13
        '', // 14
        'Run the installer with npm to install alpha.', // 15
        '',
      ].join('\n'),
    );
    write(join(corpora, 'alpha', 'docs', 'faq.md'), '# FAQ\n\nAnswers about the zebra crossing and the lighthouse keeper.\n');
    write(join(corpora, 'beta', 'README.md'), '# Beta\n\nBeta renders quaternion matrices for games.\n\n## Rotation\n\nUse slerp to rotate a quaternion smoothly.\n');
    const questions = join(dir, 'questions.jsonl');
    const q = (o: object) => JSON.stringify(o);
    write(
      questions,
      [
        q({ id: 'a-1', library: '/acme/alpha', corpus: 'alpha', question: 'how do I frobnicate a widget?', type: 'howto', gold: [{ path: 'docs/guide.md', lines: [5, 12], grade: 2 }] }),
        q({ id: 'a-2', library: '/acme/alpha', corpus: 'alpha', question: 'zebra lighthouse keeper', type: 'concept', gold: [{ path: 'docs/faq.md', grade: 2 }] }),
        q({ id: 'a-3', library: '/acme/alpha', corpus: 'alpha', question: 'how do I deploy to kubernetes', type: 'none', gold: [] }),
        q({ id: 'b-1', library: '/acme/beta', corpus: 'beta', question: 'rotate a quaternion with slerp', type: 'api', gold: [{ path: 'README.md', lines: [5, 7], grade: 2 }] }),
      ].join('\n') + '\n',
    );
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
