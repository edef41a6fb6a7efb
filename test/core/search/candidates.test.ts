import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeIndexData } from '../../../core/search/index-data.ts';
import { DEFAULT_BM25, DEFAULT_CANDIDATES, openLexicalIndex } from '../../../core/search/lexical-index.ts';
import { SYNONYMS } from '../../../core/search/query-terms.ts';
import { chunkedCorpus, hasSharedQuestions, sharedQuestions } from '../../helpers/corpora.ts';

/*
 * Candidate generation (CandidateLimits in core/search/lexical-index.ts): an index at or above
 * `minSections` sections scores only the best sections, parents and pages by BM25F (MaxScore),
 * then runs the rest of the pipeline over those. Checked on koa with the threshold lowered.
 */
const skip = !hasSharedQuestions && 'needs ../shared/corpora and ../shared/bench';

function koa() {
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
  const candidates = openLexicalIndex(data, DEFAULT_BM25, SYNONYMS, { minSections: 0, sections: all, parents: all, pages: all });
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
  const limits = { minSections: 0, sections: 40, parents: 20, pages: 10 };
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
    assert.ok(stats.parents <= limits.parents, `${stats.parents} parents scored`);
    assert.ok(stats.pages <= limits.pages, `${stats.pages} pages scored`);
    if (got.length > 0 && want.length > 0 && got[0].id === want[0].id) sameFirst++;
  }
  assert.ok(touchedAll / questions.length > 3 * limits.sections, `exhaustive scoring touched ${touchedAll / questions.length} sections a question`);
  assert.ok(sameFirst >= 0.8 * questions.length, `the first snippet is the same for ${sameFirst} of ${questions.length} questions`);
});
