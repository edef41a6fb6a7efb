import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeIndexData, type IndexData } from '../../../core/search/index-data.ts';
import { generatePageSnippets, rng, Vocabulary } from '../../../scripts/bench/scale-docs.ts';
import { DEFAULT_BM25, DEFAULT_CANDIDATES, openLexicalIndex } from '../../../core/search/lexical-index.ts';
import { SYNONYMS } from '../../../core/search/query-terms.ts';
import { chunkedCorpus, hasSharedQuestions, sharedQuestions } from '../../helpers/corpora.ts';

/*
 * Candidate generation (CandidateLimits in core/search/lexical-index.ts): an index at or above
 * `minSections` sections scores only the best sections by BM25F (MaxScore), then runs the rest of
 * the pipeline over those: the parents' and pages' BM25F only for the parents and pages of the
 * sections scored. Checked on koa with the threshold lowered.
 */
const skip = !hasSharedQuestions && 'needs ../shared/corpora and ../shared/bench';

let koaIndex: { data: ReturnType<typeof computeIndexData>; questions: string[] } | undefined;

/** Koa's index (computed once for the file's tests: each search only reads it) and its questions. */
function koa() {
  return (koaIndex ??= koaOnce());
}

function koaOnce() {
  const data = computeIndexData(
    chunkedCorpus('koa').map((s, i) => ({ ...s, id: i + 1 })),
    DEFAULT_BM25,
  );
  const questions = sharedQuestions('koa');
  return { data, questions };
}

test('an index below the threshold scores every touched section (answers as before)', { skip }, () => {
  const { data, questions } = koa();
  assert.ok(data.pageOf.length < DEFAULT_CANDIDATES.minSections);
  const index = openLexicalIndex(data, DEFAULT_BM25);
  index.search(questions[0], 10);
  const stats = index.lastSearch!();
  assert.equal(stats.candidates, false);
  assert.ok(stats.sections > 0);
});

test('candidates as many as the sections give the exhaustive answers: ids, scores and units', { skip }, () => {
  const { data, questions } = koa();
  const all = data.pageOf.length + data.parFirst.length + data.pagePaths.length;
  const exhaustive = openLexicalIndex(data, DEFAULT_BM25);
  const candidates = openLexicalIndex(data, DEFAULT_BM25, SYNONYMS, { minSections: 0, sections: all });
  assert.ok(questions.length >= 10);
  for (const q of questions) {
    for (const limit of [7, 60]) {
      const want = exhaustive.search(q, limit);
      const got = candidates.search(q, limit);
      assert.equal(candidates.lastSearch!().candidates, true);
      assert.deepEqual(got, want, q);
    }
  }
});

test('with few candidates only those are scored, and the best answers mostly stay', { skip }, () => {
  const { data, questions } = koa();
  const exhaustive = openLexicalIndex(data, DEFAULT_BM25);
  const limits = { minSections: 0, sections: 40 };
  const candidates = openLexicalIndex(data, DEFAULT_BM25, SYNONYMS, limits);
  let sameFirst = 0;
  let touchedAll = 0;
  for (const q of questions) {
    const want = exhaustive.search(q, 10);
    touchedAll += exhaustive.lastSearch!().sections;
    const got = candidates.search(q, 10);
    const stats = candidates.lastSearch!();
    assert.equal(stats.candidates, true);
    // The sections' BM25F candidates, plus at most two neighbours each and the link lift's targets.
    assert.ok(stats.sections <= 3 * limits.sections + 200, `${stats.sections} sections scored`);
    if (got.length > 0 && want.length > 0 && got[0].id === want[0].id) sameFirst++;
  }
  assert.ok(touchedAll / questions.length > 3 * limits.sections, `exhaustive scoring touched ${touchedAll / questions.length} sections a question`);
  assert.ok(sameFirst >= 0.8 * questions.length, `the first snippet is the same for ${sameFirst} of ${questions.length} questions`);
});

/**
 * Searches `questions` on the index exhaustively and with `sections` candidates: the parents and
 * pages the candidates score are exactly those of the sections they scored that the exhaustive
 * search scores, each with the exhaustive score to the bit. Returns how many each scored.
 */
function checkParentsAndPages(data: IndexData, questions: readonly string[], sections: number) {
  const exhaustive = openLexicalIndex(data, DEFAULT_BM25, SYNONYMS, DEFAULT_CANDIDATES, { record: true });
  const candidates = openLexicalIndex(data, DEFAULT_BM25, SYNONYMS, { minSections: 0, sections }, { record: true });
  // Parents are listed by first section (the candidates' lookup relies on it).
  for (let p = 1; p < data.parFirst.length; p++) assert.ok(data.parFirst[p - 1] <= data.parFirst[p]);
  const n = { parentsScored: 0, parentsAll: 0, pagesScored: 0, pagesAll: 0 };
  for (const q of questions) {
    exhaustive.search(q, 10);
    const want = exhaustive.lastScores!()!;
    candidates.search(q, 10);
    const got = candidates.lastScores!()!;
    const secs = got.sections;
    assert.ok(secs.length > 0, q);
    const parents = [...want.parents.keys()].filter((p) => secs.some((k) => data.parFirst[p] <= k && k <= data.parLast[p]));
    assert.deepEqual([...got.parents.keys()].sort((a, b) => a - b), parents.sort((a, b) => a - b), q);
    for (const [p, score] of got.parents) assert.equal(score, want.parents.get(p), `${q}: parent ${p}`);
    const pages = [...want.pages.keys()].filter((pg) => secs.some((k) => data.pageOf[k] === pg));
    assert.deepEqual([...got.pages.keys()].sort((a, b) => a - b), pages.sort((a, b) => a - b), q);
    for (const [pg, score] of got.pages) assert.equal(score, want.pages.get(pg), `${q}: page ${pg}`);
    n.parentsScored += got.parents.size;
    n.parentsAll += want.parents.size;
    n.pagesScored += got.pages.size;
    n.pagesAll += want.pages.size;
  }
  // Fewer than every touched one (the candidates matter), but some.
  assert.ok(n.parentsScored > 0 && n.parentsScored < n.parentsAll, `${n.parentsScored} of ${n.parentsAll} parents scored`);
  assert.ok(n.pagesScored > 0 && n.pagesScored < n.pagesAll, `${n.pagesScored} of ${n.pagesAll} pages scored`);
  return n;
}

test('with few candidates, the parents and pages scored are those of the sections scored, each with its exhaustive BM25F score to the bit', { skip }, () => {
  const { data, questions } = koa();
  checkParentsAndPages(data, questions, 40);
});

test('the same on a generated library (many nested parents a page, as bench:scale generates)', () => {
  const vocab = new Vocabulary(5, 3000);
  const random = rng(9);
  const snippets = Array.from({ length: 30 }, (_, i) => generatePageSnippets(vocab, random, `guide/page-${i}.md`, 4 + (i % 20)))
    .flat()
    .map((s, i) => ({ ...s, id: i + 1 }));
  const data = computeIndexData(snippets, DEFAULT_BM25);
  assert.ok(data.parFirst.length > 50, `${data.parFirst.length} parents`);
  const questions = Array.from({ length: 30 }, (_, i) => vocab.question(random, 2 + (i % 4)));
  for (const sections of [5, 60]) checkParentsAndPages(data, questions, sections);
});
