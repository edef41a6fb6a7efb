import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prng as rng } from '../../../scripts/fuzz/requests.ts';
import { accumulateBm25f, buildBm25fData, scoreDocsBm25f, termUpperBounds, topBm25f, TopKScratch, wholePostings, type Bm25fData, type TopKStats } from '../../../core/search/bm25f.ts';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { computeIndexData } from '../../../core/search/index-data.ts';
import { DEFAULT_BM25, termNumber } from '../../../core/search/lexical-index.ts';
import { expandQuery, questionWords, SYNONYMS } from '../../../core/search/query-terms.ts';
import { MarkdownChunker } from '../../../plugins/chunker-markdown/markdown-chunker.ts';
import { CORPORA_DIR, hasCorpora } from '../../helpers/corpora.ts';

/**
 * A random index: `docs` documents of three fields, words drawn from a skewed vocabulary (a few
 * frequent words, many rare ones), as real text is.
 */
function randomIndex(random: () => number, docs: number, vocabulary: number): Bm25fData {
  const word = () => Math.min(vocabulary - 1, Math.floor(vocabulary * random() ** 3));
  const field = (max: number) => Array.from({ length: Math.floor(random() * max) }, word);
  const fields = [Array.from({ length: docs }, () => field(6)), Array.from({ length: docs }, () => field(40)), Array.from({ length: docs }, () => field(3))];
  return buildBm25fData(fields, [{ weight: 3, b: 0.5 }, { weight: 1, b: 0.75 }, { weight: 2, b: 0.3 }], 1.2, vocabulary);
}

/** The reference: every posting accumulated, then sorted (score, then document). */
function exhaustive(index: Bm25fData, terms: ArrayLike<number>, k: number, weights?: ArrayLike<number>): Array<{ doc: number; score: number }> {
  const scores = new Float64Array(index.n);
  const touched: number[] = [];
  accumulateBm25f(index, terms, scores, touched, weights);
  return [...new Set(touched)]
    .filter((d) => scores[d] > 0)
    .map((doc) => ({ doc, score: scores[doc] }))
    .sort((a, b) => b.score - a.score || a.doc - b.doc)
    .slice(0, k);
}

test('MaxScore top-k equals exhaustive scoring on randomized indexes (documents, order and scores to the bit)', () => {
  const scratch = new TopKScratch();
  let cases = 0;
  for (let seed = 1; seed <= 30; seed++) {
    const random = rng(seed);
    const vocabulary = 20 + Math.floor(random() * 300);
    const index = randomIndex(random, 1 + Math.floor(random() * 400), vocabulary);
    for (let q = 0; q < 20; q++) {
      // Query terms: some frequent, some rare, some unknown (-1) or repeated; weights as the
      // lexical index gives them (1, synonym and prefix weights, idf powers), sometimes 0.
      const terms = Array.from({ length: 1 + Math.floor(random() * 8) }, () => (random() < 0.1 ? -1 : Math.floor(vocabulary * random() ** 2)));
      if (random() < 0.2) terms.push(terms[0]);
      const weights = random() < 0.5 ? undefined : terms.map(() => (random() < 0.1 ? 0 : random() * 2));
      for (const k of [1, 2, 3, 5, 10, 37, index.n, index.n + 5]) {
        const want = exhaustive(index, terms, k, weights);
        const got = topBm25f(index, terms, k, weights, scratch);
        assert.deepEqual(got, want, `seed ${seed}, query ${q}, terms ${JSON.stringify(terms)}, k ${k}`);
        cases++;
      }
    }
  }
  assert.equal(cases, 30 * 20 * 8);
});

test('scoring only the documents asked gives each its exhaustive score to the bit, and touches no other', () => {
  let cases = 0;
  for (let seed = 1; seed <= 30; seed++) {
    const random = rng(500 + seed);
    const vocabulary = 20 + Math.floor(random() * 300);
    const index = randomIndex(random, 1 + Math.floor(random() * 400), vocabulary);
    const full = new Float64Array(index.n);
    const some = new Float64Array(index.n);
    for (let q = 0; q < 20; q++) {
      const terms = Array.from({ length: 1 + Math.floor(random() * 8) }, () => (random() < 0.1 ? -1 : Math.floor(vocabulary * random() ** 2)));
      if (random() < 0.2) terms.push(terms[0]);
      const weights = random() < 0.5 ? undefined : terms.map(() => (random() < 0.1 ? 0 : random() * 2));
      full.fill(0);
      accumulateBm25f(index, terms, full, [], weights);
      // Documents asked: none, a few (short lists are then walked the other way), most, all.
      for (const share of [0, 0.02, 0.3, 0.9, 1]) {
        const asked = [...Array(index.n).keys()].filter(() => random() < share);
        some.fill(0);
        scoreDocsBm25f(index, terms, Int32Array.from(asked), asked.length, some, weights);
        const isAsked = new Set(asked);
        for (let d = 0; d < index.n; d++) {
          if (some[d] !== (isAsked.has(d) ? full[d] : 0)) assert.fail(`seed ${seed}, query ${q}, share ${share}, document ${d}: ${some[d]}, exhaustive ${full[d]}`);
        }
        cases++;
      }
    }
  }
  assert.equal(cases, 30 * 20 * 5);
});

test('ties at the k-th score keep the lower documents, as the exhaustive sort does', () => {
  // Every document holds the one word once in a field of one token: all score alike.
  const fields = [Array.from({ length: 50 }, () => [0])];
  const index = buildBm25fData(fields, [{ weight: 1, b: 0.75 }], 1.2, 1);
  const got = topBm25f(index, [0], 7);
  assert.deepEqual(
    got.map((r) => r.doc),
    [0, 1, 2, 3, 4, 5, 6],
  );
  assert.deepEqual(got, exhaustive(index, [0], 7));
});

test('pruning skips work: on a large skewed index fewer postings are read than exhaustive scoring reads', () => {
  const random = rng(7);
  const index = randomIndex(random, 5000, 2000);
  // A frequent word and two rarer ones: the frequent word's list becomes non-essential.
  const common = 0;
  const df = (t: number) => index.start[t + 1] - index.start[t];
  const rare = [...Array(2000).keys()].filter((t) => df(t) >= 20 && df(t) <= 60).slice(0, 2);
  assert.equal(rare.length, 2);
  const terms = [common, ...rare];
  const all = terms.reduce((n, t) => n + df(t), 0);
  const stats: TopKStats = { postings: 0, scored: 0 };
  const got = topBm25f(index, terms, 10, undefined, new TopKScratch(), stats);
  assert.deepEqual(got, exhaustive(index, terms, 10));
  assert.ok(df(common) > 1000, `the common word is in ${df(common)} documents`);
  assert.ok(stats.postings < all / 2, `read ${stats.postings} of ${all} postings`);
  assert.ok(stats.scored < 200, `scored ${stats.scored} documents`);
});

test('upper bounds bound every posting of their term and are reached by one', () => {
  const index = randomIndex(rng(3), 300, 100);
  const bounds = termUpperBounds(index);
  assert.equal(termUpperBounds(index), bounds, 'computed once per index');
  for (let t = 0; t < 100; t++) {
    let max = 0;
    for (let i = index.start[t]; i < index.start[t + 1]; i++) max = Math.max(max, index.tfw[i]);
    assert.equal(bounds[t], max);
  }
});

test('a negative term weight is refused (it would break the bounds); k of 0 and empty queries give nothing', () => {
  const index = randomIndex(rng(5), 50, 30);
  assert.throws(() => topBm25f(index, [1, 2], 5, [1, -1]), RangeError);
  assert.deepEqual(topBm25f(index, [1, 2], 0), []);
  assert.deepEqual(topBm25f(index, [], 5), []);
  assert.deepEqual(topBm25f(index, [-1], 5), []);
});

/*
 * The same on real indexes: the koa and zod corpora chunked as an upload ingest chunks them,
 * indexed with the default parameters, asked every question of the shared benchmark about them
 * with the term weights the search gives its three BM25F indexes (sections, parents, pages).
 */
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

test('an index whose postings are read by term (a paged segment) scores as the arrays do: top-k and accumulation', () => {
  const scratch = new TopKScratch();
  for (let seed = 1; seed <= 10; seed++) {
    const random = rng(100 + seed);
    const vocabulary = 50 + Math.floor(random() * 200);
    const index = randomIndex(random, 1 + Math.floor(random() * 300), vocabulary);
    let reads = 0;
    const paged: Bm25fData = {
      n: index.n,
      idf: index.idf,
      start: index.start,
      docs: new Int32Array(0),
      tfw: new Float64Array(0),
      ub: termUpperBounds(index),
      postings: (t) => {
        reads++;
        return { docs: index.docs.slice(index.start[t], index.start[t + 1]), tfw: index.tfw.slice(index.start[t], index.start[t + 1]) };
      },
    };
    for (let q = 0; q < 10; q++) {
      const terms = Array.from({ length: 1 + Math.floor(random() * 6) }, () => (random() < 0.1 ? -1 : Math.floor(vocabulary * random() ** 2)));
      const weights = terms.map(() => random() * 2);
      for (const k of [1, 10, index.n]) assert.deepEqual(topBm25f(paged, terms, k, weights, scratch), topBm25f(index, terms, k, weights, scratch));
      const a = new Float64Array(index.n);
      const b = new Float64Array(index.n);
      const ta: number[] = [];
      const tb: number[] = [];
      accumulateBm25f(index, terms, a, ta, weights);
      accumulateBm25f(paged, terms, b, tb, weights);
      assert.deepEqual(b, a);
      assert.deepEqual(tb, ta);
    }
    assert.ok(reads > 0);
    assert.deepEqual(wholePostings(paged).docs, index.docs);
    assert.deepEqual(wholePostings(paged).tfw, index.tfw);
  }
});
