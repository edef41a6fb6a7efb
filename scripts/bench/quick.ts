/**
 * The quick, in-process form of the benchmark for tuning: the same snippets (ingested once and
 * cached in bench-out/cache until the chunker changes), the same lexical index and context
 * assembly as the server, judged with the same metrics; no HTTP, no baseline. Prints the macro
 * figures of a tuning half and a held-out half of the corpora, so a change that only helps the
 * corpora it was tuned on shows.
 *
 *   npm run bench:quick [-- --questions FILE --corpora DIR --verbose]
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { assembleContext, CANDIDATES } from '../../core/query.ts';
import { DEFAULT_ASSEMBLY } from '../../core/context-assembly.ts';
import { buildLexicalIndex, DEFAULT_BM25 } from '../../core/search/lexical-index.ts';
import { readCorpora, readQuestions } from './inputs.ts';
import { loadSnippets, searchHits } from './snippet-cache.ts';
import { aggregate, hasGold, judgeQuestion, percentile, type Metrics } from './metrics.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Corpora the ranking is tuned on; the others are held out. */
export const TUNING_CORPORA = new Set(['koa', 'fastify', 'hugo', 'vitest', 'zustand']);

const { values } = parseArgs({
  options: {
    questions: { type: 'string', default: join(ROOT, '..', 'shared', 'bench', 'questions.jsonl') },
    corpora: { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') },
    verbose: { type: 'boolean', default: false },
    /** JSON merged into DEFAULT_BM25 (for sweeps), e.g. '{"k1":1.5}'. */
    params: { type: 'string', default: '{}' },
    /** JSON merged into DEFAULT_ASSEMBLY, e.g. '{"relativeCutoff":0.4}'. */
    assembly: { type: 'string', default: '{}' },
  },
});

const questions = readQuestions(resolve(values.questions!));
const corpora = readCorpora(resolve(values.corpora!)).filter((c) => questions.some((q) => q.corpus === c.name));
const snippets = await loadSnippets(corpora);

let fileHits5 = 0;
const judged: Array<{ corpus: string; metrics: Metrics }> = [];
const tokens: number[] = [];
const searchMs: number[] = [];
const params = merge(DEFAULT_BM25, JSON.parse(values.params!));
const assembly = merge(DEFAULT_ASSEMBLY, JSON.parse(values.assembly!));
const indexes = new Map([...snippets].map(([c, list]) => [c, { index: buildLexicalIndex(list, params), byId: new Map(list.map((s) => [s.id, s])) }]));
for (const q of questions) {
  const { index, byId } = indexes.get(q.corpus)!;
  const t = performance.now();
  const hits = searchHits(index, byId, q.question, CANDIDATES);
  const picked = assembleContext(hits, q.question, 5000, assembly);
  searchMs.push(performance.now() - t);
  tokens.push(picked.reduce((n, s) => n + s.tokens, 0));
  if (!hasGold(q)) continue;
  const refs = picked.map((s) => ({ path: s.sourcePath, lineStart: s.lineStart, lineEnd: s.lineEnd }));
  const metrics = judgeQuestion(refs, q.gold);
  judged.push({ corpus: q.corpus, metrics });
  if (refs.slice(0, 5).some((r) => q.gold.some((g) => g.path === r.path))) fileHits5++;
  if (values.verbose && metrics['hit@5'] === 0) {
    console.log(`MISS ${q.id} ${q.question}\n  gold ${q.gold.map((g) => `${g.path}:${g.lines?.join('-')}`).join(' ')}\n  got  ${refs.slice(0, 5).map((r) => `${r.path}:${r.lineStart}-${r.lineEnd}`).join(' ')}`);
  }
}

const { macro, perCorpus } = aggregate(judged);
const half = (tuning: boolean) => aggregate(judged.filter((j) => TUNING_CORPORA.has(j.corpus) === tuning)).macro;
const fmt = (m: Metrics) => `mrr@10 ${m['mrr@10'].toFixed(3)} hit@1 ${m['hit@1'].toFixed(3)} hit@5 ${m['hit@5'].toFixed(3)} ndcg@10 ${m['ndcg@10'].toFixed(3)}`;
for (const [c, m] of Object.entries(perCorpus)) console.log(`${c.padEnd(9)} ${TUNING_CORPORA.has(c) ? 'T' : 'H'} ${fmt(m)}`);
console.log(`tuning   ${fmt(half(true))}\nheld-out ${fmt(half(false))}\nmacro    ${fmt(macro)}`);
console.log(`gold file among the first 5: ${fileHits5} of ${judged.length} questions; gold section: ${judged.filter((j) => j.metrics['hit@5']).length}`);
console.log(`tokens p50 ${percentile(tokens, 50)} p90 ${percentile(tokens, 90)}; search+assembly p50 ${percentile(searchMs, 50).toFixed(2)} ms p99 ${percentile(searchMs, 99).toFixed(2)} ms`);

function merge<T>(base: T, over: unknown): T {
  if (!over || typeof over !== 'object' || Array.isArray(over)) return (over ?? base) as T;
  const out = { ...(base as object) } as Record<string, unknown>;
  for (const [k, v] of Object.entries(over)) out[k] = merge((base as Record<string, unknown>)[k], v);
  return out as T;
}
