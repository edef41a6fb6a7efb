/**
 * MaxScore top-k (topBm25f) against the exhaustive accumulation the lexical search uses
 * (accumulateBm25f, every touched document sorted), on real indexes: the koa and zod corpora
 * chunked as an upload ingest chunks them, indexed with the default parameters, asked every
 * question of the shared benchmark about them with the term weights the search gives its three
 * BM25F indexes (sections, parents, pages). The randomized cases are in bm25f-topk.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { accumulateBm25f, topBm25f, TopKScratch, type Bm25fData } from '../../../core/search/bm25f.ts';
import { computeIndexData } from '../../../core/search/index-data.ts';
import { DEFAULT_BM25, termNumber } from '../../../core/search/lexical-index.ts';
import { expandQuery, questionWords, SYNONYMS } from '../../../core/search/query-terms.ts';
import { MarkdownChunker } from '../../../plugins/chunker-markdown/markdown-chunker.ts';
import { CORPORA_DIR, hasCorpora } from '../../helpers/corpora.ts';

const QUESTIONS = join(CORPORA_DIR, '..', 'bench', 'questions.jsonl');

function corpusIndex(name: string) {
  const chunker = new MarkdownChunker({ maxInfoTokens: 400, maxDescriptionChars: 600 });
  const root = join(CORPORA_DIR, name);
  const snippets: Array<ReturnType<MarkdownChunker['chunk']>[number] & { id: number }> = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir).sort()) {
      const p = join(dir, entry);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.mdx?$/.test(entry)) {
        for (const s of chunker.chunk({ path: relative(root, p), format: entry.endsWith('.mdx') ? 'mdx' : 'markdown', content: readFileSync(p, 'utf8') })) snippets.push({ ...s, id: snippets.length + 1 });
      }
    }
  };
  walk(root);
  return computeIndexData(snippets, DEFAULT_BM25);
}

function exhaustive(index: Bm25fData, terms: Int32Array, k: number, weights: number[]): Array<{ doc: number; score: number }> {
  const scores = new Float64Array(index.n);
  const touched: number[] = [];
  accumulateBm25f(index, terms, scores, touched, weights);
  return [...new Set(touched)]
    .filter((d) => scores[d] > 0)
    .map((doc) => ({ doc, score: scores[doc] }))
    .sort((a, b) => b.score - a.score || a.doc - b.doc)
    .slice(0, k);
}

test('on koa and zod with the benchmark questions, MaxScore top-k returns the exhaustive top-k: documents, order and scores to the bit', { skip: !(hasCorpora && existsSync(QUESTIONS)) && 'needs ../shared/corpora and ../shared/bench' }, () => {
  const params = DEFAULT_BM25;
  const scratch = new TopKScratch();
  let compared = 0;
  for (const corpus of ['koa', 'zod']) {
    const data = corpusIndex(corpus);
    const asked = readFileSync(QUESTIONS, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { corpus: string; question: string })
      .filter((q) => q.corpus === corpus)
      .map((q) => q.question);
    assert.ok(asked.length >= 10, `${corpus}: benchmark questions`);
    const idfOf = (w: string) => {
      const no = termNumber(data.terms, w);
      return no < 0 ? 0 : data.bm25.idf[no];
    };
    for (const question of asked) {
      const words = questionWords(question, params.dropFillers);
      // The terms and weights the search gives its BM25F indexes (lexical-index.ts scoreSections, fuse).
      const weighted = expandQuery(question, words, { synonyms: SYNONYMS, synonymWeight: params.synonymWeight, prefixWeight: 0, prefixMinLength: params.prefixMinLength, idf: idfOf });
      const nos = Int32Array.from(weighted, (q) => termNumber(data.terms, q.t));
      for (const index of [data.bm25, data.parentBm25, data.pageBm25]) {
        if (index.n === 0) continue;
        const weights = weighted.map((q, k) => q.w * Math.pow(nos[k] < 0 ? 0 : index.idf[nos[k]], params.idfPower - 1));
        for (const k of [1, 10, 60, 200]) {
          assert.deepEqual(topBm25f(index, nos, k, weights, scratch), exhaustive(index, nos, k, weights), `${corpus}, k ${k}: ${question.slice(0, 80)}`);
          compared++;
        }
      }
    }
  }
  assert.ok(compared > 100, `${compared} comparisons`);
});
