/**
 * The plain-BM25-over-sections baseline (issue 22): pages cut at every heading into parts that do
 * not overlap, searched with MiniSearch's BM25; and `npm run bench -- --baseline sections` end to
 * end (real ingest, real server process) reporting it beside Refdesk.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSectionBaseline, readSectionDocs } from '../../../scripts/bench/section-baseline.ts';
import { sectionBodies } from '../../../scripts/bench/sections.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

const GUIDE = [
  '---', // 1
  'title: Widgets', // 2
  '---', // 3
  '', // 4
  'Widgets are small.', // 5
  '', // 6
  '## Frobnicate', // 7
  '', // 8
  'Call frobnicate to spin a widget.', // 9
  '', // 10
  '### Options', // 11
  '', // 12
  'The speed option sets revolutions per second.', // 13
  '', // 14
  '## Polish', // 15
  '', // 16
  'Polishing makes widgets shine.', // 17
  '',
].join('\n');

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

test('sectionBodies: the intro, then every heading up to the next heading of any level', () => {
  assert.deepEqual(sectionBodies(GUIDE), [
    { heading: ['Widgets'], depth: 0, lines: [1, 6] },
    { heading: ['Widgets', 'Frobnicate'], depth: 2, lines: [7, 10] },
    { heading: ['Widgets', 'Frobnicate', 'Options'], depth: 3, lines: [11, 14] },
    { heading: ['Widgets', 'Polish'], depth: 2, lines: [15, 17] },
  ]);
  // No text before the first heading: no intro part.
  assert.deepEqual(sectionBodies('# A\n\ntext\n').map((s) => s.lines), [[1, 3]]);
});

test('the section baseline ranks the section holding the words, heading words included', () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-secbase-'));
  try {
    write(join(dir, 'docs', 'guide.md'), GUIDE);
    write(join(dir, 'docs', 'other.md'), '# Other\n\nNothing about revolutions here, only gears.\n');
    const docs = readSectionDocs(dir, ['docs/guide.md', 'docs/other.md', 'docs/guide.md']);
    assert.equal(docs.length, 5);
    const index = buildSectionBaseline(docs);
    const top = index.search('speed per second', 10);
    assert.deepEqual([top[0].path, top[0].lineStart, top[0].lineEnd], ['docs/guide.md', 11, 14]);
    assert.deepEqual(top[0].breadcrumb, ['Widgets', 'Frobnicate', 'Options']);
    assert.ok(top[0].tokens > 0);
    assert.deepEqual(index.search('polish', 1).map((s) => s.lineStart), [15]);
    assert.deepEqual(index.search('quaternion', 10), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('npm run bench -- --baseline sections reports bm25Sections beside refdesk and minisearch', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-secbase-run-'));
  try {
    const corpora = join(dir, 'corpora');
    write(join(corpora, 'MANIFEST.json'), JSON.stringify({ corpora: [{ name: 'alpha', libraryId: '/acme/alpha', bytes: 0 }] }));
    write(join(corpora, 'alpha', 'docs', 'guide.md'), GUIDE);
    const questions = join(dir, 'q.jsonl');
    write(
      questions,
      JSON.stringify({ id: 'a-1', library: '/acme/alpha', corpus: 'alpha', question: 'what sets the revolutions per second?', type: 'api', gold: [{ path: 'docs/guide.md', lines: [11, 14], grade: 2 }] }) + '\n',
    );
    const bench = (...extra: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'bench', 'run.ts'), '--questions', questions, '--corpora', corpora, '--out', join(dir, 'out'), '--rounds', '1', ...extra], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, NODE_NO_WARNINGS: '1' },
      });
    const wrong = bench('--baseline', 'pages');
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /--baseline takes "sections"/);

    const res = bench('--baseline', 'sections');
    assert.equal(res.status, 0, res.stderr + res.stdout);
    assert.match(res.stdout, /bm25 over sections/);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));
    assert.deepEqual(Object.keys(summary.systems).sort(), ['bm25Sections', 'minisearch', 'refdesk']);
    const s = summary.systems.bm25Sections;
    assert.equal(s.perCorpus.alpha.n, 1);
    assert.equal(s.macro['hit@1'], 1);
    assert.ok(s.tokens.p50 > 0);
    const details = JSON.parse(readFileSync(join(dir, 'out', 'questions.json'), 'utf8'));
    assert.equal(details[0].bm25Sections.top[0], 'docs/guide.md:11-14');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
