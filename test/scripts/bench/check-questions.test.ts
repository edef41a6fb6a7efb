/**
 * scripts/bench/check-questions.ts and sections.ts: gold sections are checked against the
 * extents the pages' markdown headings give, on a small corpus made here and on the committed
 * blind set over the frozen corpora.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkQuestions } from '../../../scripts/bench/check-questions.ts';
import { readCorpora, readQuestions } from '../../../scripts/bench/inputs.ts';
import type { BenchQuestion, GoldSection } from '../../../scripts/bench/metrics.ts';
import { pageSections } from '../../../scripts/bench/sections.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SHARED = join(ROOT, '..', 'shared', 'corpora');

const GUIDE = [
  '# Guide', // 1
  '', // 2
  'Intro.', // 3
  '', // 4
  '## Install', // 5
  '', // 6
  '```sh', // 7
  '# not a heading: a shell comment', // 8
  'npm i thing', // 9
  '```', // 10
  '', // 11
  '### From source', // 12
  '', // 13
  '    # not a heading either (indented code)', // 14
  '', // 15
  'Usage `api()`', // 16
  '-------------', // 17
  '', // 18
  'Call it. ##', // 19
  '', // 20
  '## Options ##', // 21
  '', // 22
  'Last line.', // 23
  '', // 24
  '', // 25
].join('\n');

const TITLED = ['---', 'title: "Reference: ctx"', '---', '', '## Body', 'text', '', '### Raw body', 'bytes', ''].join('\n');

const MDX = [
  '---', // 1
  'title: Api', // 2
  '---', // 3
  "import { Tabs } from 'x';", // 4
  '', // 5
  '# Api', // 6
  '', // 7
  '## Strings', // 8
  '', // 9
  '{/* <Callout>', // 10
  '## Commented out', // 11
  '</Callout> */}', // 12
  '', // 13
  '<Tabs items={["a", "b"]}>', // 14
  '', // 15
  '### Lengths', // 16
  '', // 17
  '</Tabs>', // 18
  '', // 19
  '## Numbers', // 20
  'n', // 21
].join('\n');

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

test('pageSections: headings outside code, setext too, spans to the next heading of the same or higher level', () => {
  assert.deepEqual(pageSections(GUIDE), [
    { heading: ['Guide'], depth: 1, lines: [1, 23] },
    { heading: ['Guide', 'Install'], depth: 2, lines: [5, 15] },
    { heading: ['Guide', 'Install', 'From source'], depth: 3, lines: [12, 15] },
    { heading: ['Guide', 'Usage `api()`'], depth: 2, lines: [16, 20] },
    { heading: ['Guide', 'Options'], depth: 2, lines: [21, 23] },
  ]);
});

test('pageSections: a page without its own level-1 heading is rooted at its front matter title', () => {
  assert.deepEqual(pageSections(TITLED), [
    { heading: ['Reference: ctx', 'Body'], depth: 2, lines: [5, 9] },
    { heading: ['Reference: ctx', 'Body', 'Raw body'], depth: 3, lines: [8, 9] },
  ]);
  // Several level-1 headings are sections, not the page title.
  const two = ['---', 'title: T', '---', '# A', 'a', '# B', 'b'].join('\n');
  assert.deepEqual(pageSections(two).map((s) => s.heading), [['T', 'A'], ['T', 'B']]);
});

test('pageSections: MDX comments and JSX lines do not hide or invent headings', () => {
  assert.deepEqual(
    pageSections(MDX, 'mdx').map((s) => [s.heading.join(' > '), s.lines]),
    [
      ['Api', [6, 21]],
      ['Api > Strings', [8, 19]],
      ['Api > Strings > Lengths', [16, 19]],
      ['Api > Numbers', [20, 21]],
    ],
  );
});

test('checkQuestions: right gold passes; wrong spans, breadcrumbs, paths, libraries and ids are named', () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-check-q-'));
  try {
    write(join(dir, 'MANIFEST.json'), JSON.stringify({ corpora: [{ name: 'alpha', libraryId: '/acme/alpha' }] }));
    write(join(dir, 'alpha', 'docs', 'guide.md'), GUIDE);
    write(join(dir, 'alpha', 'docs', 'api.mdx'), MDX);
    write(join(dir, 'secret.md'), '# Outside\n');
    const corpora = readCorpora(dir);
    const q = (id: string, gold: GoldSection[], library = '/acme/alpha'): BenchQuestion => ({ id, library, corpus: 'alpha', question: 'how?', type: 'api', gold });
    const good = [
      q('ok-1', [{ path: 'docs/guide.md', heading: ['Guide', 'Install', 'From source'], lines: [12, 15], grade: 2 }, { path: 'docs/guide.md', heading: ['Guide', 'Install'], lines: [5, 15], grade: 1 }]),
      q('ok-2', [{ path: 'docs/api.mdx', heading: ['Api', 'Strings', 'Lengths'], lines: [16, 19], grade: 2 }]),
      q('ok-3', [{ path: 'docs/guide.md', grade: 2 }]),
    ];
    assert.deepEqual(checkQuestions(good, corpora), []);

    const bad = [
      q('span', [{ path: 'docs/guide.md', heading: ['Guide', 'Install'], lines: [5, 11], grade: 2 }]),
      q('crumb', [{ path: 'docs/guide.md', heading: ['Install'], lines: [5, 15], grade: 2 }]),
      q('file', [{ path: 'docs/missing.md', heading: ['X'], lines: [1, 2], grade: 2 }]),
      q('escape', [{ path: '../secret.md', grade: 2 }]),
      q('lib', [{ path: 'docs/guide.md', grade: 2 }], '/acme/beta'),
      q('span', [{ path: 'docs/guide.md', grade: 3 }]),
      q('nohead', [{ path: 'docs/guide.md', lines: [6, 9], grade: 2 }]),
    ];
    const problems = checkQuestions(bad, corpora).map((p) => `${p.id}: ${p.message}`);
    assert.deepEqual(problems, [
      'span: gold[0] docs/guide.md: lines 5-11 should be 5-15 for "Guide > Install"',
      'crumb: gold[0] docs/guide.md: no section "Install" (the section at line 5 is "Guide > Install")',
      'file: gold[0] docs/missing.md: no such file in the corpus',
      'escape: gold[0] ../secret.md: the path leaves the corpus folder',
      'lib: library /acme/beta is not corpus alpha\'s (/acme/alpha)',
      'span: the id is used by an earlier question',
      'span: gold[0] docs/guide.md: grade 3 is neither 1 nor 2',
      'nohead: gold[0] docs/guide.md: lines 6-9 are not the span of any section of the page',
    ]);

    // The command: exit 1 and a line per problem; exit 0 when all is in order.
    const file = join(dir, 'q.jsonl');
    writeFileSync(file, bad.slice(0, 1).map((x) => JSON.stringify(x)).join('\n') + '\n');
    const check = () => spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/bench/check-questions.ts'), file, '--corpora', dir], { cwd: ROOT, encoding: 'utf8' });
    const run = check();
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stdout, /lines 5-11 should be 5-15/);
    writeFileSync(file, good.map((x) => JSON.stringify(x)).join('\n') + '\n');
    const ok = check();
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /3 questions, 4 gold sections, 0 problems/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bench/api-lookup.jsonl: at least 100 task-style API questions over python and one other corpus, every gold section exact', { skip: !existsSync(join(SHARED, 'MANIFEST.json')) && 'no ../shared/corpora here' }, () => {
  const questions = readQuestions(join(ROOT, 'bench', 'api-lookup.jsonl'));
  assert.ok(questions.length >= 100, `${questions.length} questions`);
  const corpora = new Set(questions.map((q) => q.corpus));
  assert.ok(corpora.has('python') && corpora.size === 2, [...corpora].join(','));
  for (const q of questions) {
    assert.equal(q.type, 'api', q.id);
    assert.equal(q.tier, 'C', q.id);
    assert.match(q.id, new RegExp(`^apilookup-${q.corpus}-\\d{3}$`));
    assert.ok(q.gold.some((g) => g.grade === 2 && g.lines && g.heading), `${q.id} has a grade-2 section`);
  }
  const entries = questions.map((q) => (q as BenchQuestion & { entry?: string }).entry);
  assert.equal(new Set(entries).size, questions.length, 'no two questions on the same entry');
  assert.deepEqual(checkQuestions(questions, readCorpora(SHARED)), []);
});
