/**
 * Why a question ranks as it does: for each question id given, its search terms, its gold
 * sections and the answer units in order (score, source, heading path, size), with the gold
 * ones marked, as far down as the first gold hit. Reads the snippets bench:quick cached for
 * the current chunking code (run `npm run bench:quick` first).
 *
 *   npm run bench:explain -- hugo-C-014 zod-C-006 [--questions FILE] [--show N]
 *   npm run bench:explain -- --half A [--below 1]   every half-A question whose first gold unit
 *                                                   ranks below N (default 1), or is missing
 *
 * `--half` takes only A, the tuning half: the validation half's rankings are not for reading.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_ASSEMBLY, assembleContext } from '../../core/context-assembly.ts';
import { buildLexicalIndex, DEFAULT_BM25 } from '../../core/search/lexical-index.ts';
import { tokenize } from '../../core/search/tokenize.ts';
import { readQuestions } from './inputs.ts';
import { hasGold, hits as hitsGold } from './metrics.ts';
import { questionHalf } from './halves.ts';
import { DEFAULT_QUESTIONS, mergeParams } from './quick-run.ts';
import { cachedSnippets, searchHits } from './snippet-cache.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    questions: { type: 'string', default: DEFAULT_QUESTIONS },
    show: { type: 'string', default: '8' },
    /** JSON merged into DEFAULT_BM25, as for bench:quick. */
    params: { type: 'string', default: '{}' },
    /** Explain every question of this half (A only) whose gold ranks below `below`. */
    half: { type: 'string' },
    below: { type: 'string', default: '1' },
  },
});
if (values.half !== undefined && values.half !== 'A') {
  console.error('--half takes only A: half B validates and its rankings are not read while tuning');
  process.exit(2);
}
if (positionals.length === 0 && !values.half) {
  console.error('Give the ids of the questions to explain, e.g. npm run bench:explain -- koa-C-002, or --half A');
  process.exit(2);
}
const wanted = new Set(positionals);
const questions = readQuestions(resolve(values.questions!)).filter((q) =>
  values.half ? hasGold(q) && questionHalf(q.id) === 'A' : wanted.has(q.id),
);
for (const id of wanted) if (!questions.some((q) => q.id === id)) console.log(`${id}: no such question`);
const show = Number(values.show);
const below = Number(values.below);

for (const q of questions) {
  const list = cachedSnippets(q.corpus);
  if (!list) {
    console.log(`${q.id}: corpus ${q.corpus} is not cached for the current chunking code; run npm run bench:quick first`);
    continue;
  }
  const byId = new Map(list.map((s) => [s.id, s]));
  const found = searchHits(buildLexicalIndex(list, mergeParams(DEFAULT_BM25, JSON.parse(values.params!))), byId, q.question, 5000);
  const units = assembleContext(found, q.question, 1e9, { ...DEFAULT_ASSEMBLY, relativeCutoff: 0, maxUnits: 100000 });
  const score = new Map(found.map((h) => [h.snippet.id, h.score]));
  const isGold = (s: (typeof units)[number]) => q.gold.some((g) => hitsGold({ path: s.sourcePath, lineStart: s.lineStart, lineEnd: s.lineEnd }, g));
  if (values.half && units.slice(0, below).some(isGold)) continue;
  console.log(`\n== ${q.id}: ${q.question}\n   terms: ${tokenize(q.question).join(' ')}`);
  for (const g of q.gold) console.log(`   gold (grade ${g.grade}): ${g.path}${g.lines ? `:${g.lines.join('-')}` : ''}`);
  let firstGold = -1;
  units.forEach((s, i) => {
    const gold = isGold(s);
    if (gold && firstGold < 0) firstGold = i;
    if (i < show || gold) {
      console.log(`${gold ? '*' : ' '}${String(i + 1).padStart(4)} ${(score.get(s.id) ?? 0).toFixed(2).padStart(6)} ${s.sourcePath}:${s.lineStart}-${s.lineEnd} [${s.breadcrumb.join(' > ')}] ${s.tokens}t`);
    }
  });
  if (firstGold < 0) console.log('   (no answer unit holds a gold section)');
}
