/**
 * Leave-one-out of the general synonym groups (core/search/data/vocabulary.json, as
 * core/search/query-terms.ts SYNONYM_GROUPS reads them) by
 * half of the questions (issue 22's validation discipline): for each group, the questions one
 * of whose words is in it are asked again without it, and the figures of half A (tuned on) and
 * half B (validation) compared with the full list. A group is kept when the questions give no
 * sign against it; it is flagged for removal when it is no use on half A and dropping it does
 * not hurt half B (and changes something), or when it helps half A but hurts half B (a gain
 * that fits the tuning half only). Groups no question touches are kept as they are: they are
 * general vocabulary the questions cannot judge.
 *
 *   npx tsx scripts/bench/synonym-check.ts [-- --questions FILE --corpora DIR]
 */
import { parseArgs } from 'node:util';
import { DEFAULT_ASSEMBLY } from '../../core/context-assembly.ts';
import { computeIndexData } from '../../core/search/index-data.ts';
import { DEFAULT_BM25, openLexicalIndex } from '../../core/search/lexical-index.ts';
import { SYNONYM_GROUPS, synonymMap } from '../../core/search/query-terms.ts';
import { tokenize } from '../../core/search/tokenize.ts';
import { byHalf } from './halves.ts';
import type { Metrics } from './metrics.ts';
import { DEFAULT_CORPORA, DEFAULT_QUESTIONS, loadRun, runQuestions } from './quick-run.ts';

const { values } = parseArgs({
  options: {
    questions: { type: 'string', default: DEFAULT_QUESTIONS },
    corpora: { type: 'string', default: DEFAULT_CORPORA },
  },
});

const { questions, snippets } = await loadRun(values.questions!, values.corpora!);
const data = new Map([...snippets].map(([c, list]) => [c, { data: computeIndexData(list, DEFAULT_BM25), byId: new Map(list.map((s) => [s.id, s])) }]));
const indexes = (groups: readonly string[]) => {
  const map = synonymMap(groups);
  return new Map([...data].map(([c, d]) => [c, { index: openLexicalIndex(d.data, DEFAULT_BM25, map), byId: d.byId }]));
};

const base = runQuestions(questions, indexes(SYNONYM_GROUPS), DEFAULT_ASSEMBLY);
const baseById = new Map(base.perQuestion.map((q) => [q.id, q]));
const halfFigures = (changed: ReadonlyMap<string, Metrics>) => byHalf(base.perQuestion.map((q) => ({ ...q, metrics: changed.get(q.id) ?? q.metrics })));
const f = (x: number) => (x >= 0 ? '+' : '') + x.toFixed(3);
/** Change of (mrr@10, hit@5) of a half: positive = better without the group. */
const delta = (a: Metrics, b: Metrics) => ({ mrr: a['mrr@10'] - b['mrr@10'], hit: a['hit@5'] - b['hit@5'] });
const sign = (d: { mrr: number; hit: number }) => (d.mrr > 1e-9 || (Math.abs(d.mrr) <= 1e-9 && d.hit > 1e-9) ? 1 : d.mrr < -1e-9 || (Math.abs(d.mrr) <= 1e-9 && d.hit < -1e-9) ? -1 : 0);

const baseHalves = halfFigures(new Map());
const drop: string[] = [];
for (const group of SYNONYM_GROUPS) {
  const words = new Set(tokenize(group));
  const touched = questions.filter((q) => baseById.has(q.id) && tokenize(q.question).some((w) => words.has(w)));
  if (touched.length === 0) continue;
  const r = runQuestions(touched, indexes(SYNONYM_GROUPS.filter((g) => g !== group)), DEFAULT_ASSEMBLY);
  const h = halfFigures(new Map(r.perQuestion.map((q) => [q.id, q.metrics])));
  const dA = delta(h.A.macro, baseHalves.A.macro);
  const dB = delta(h.B.macro, baseHalves.B.macro);
  const [a, b] = [sign(dA), sign(dB)];
  // Without the group: A no worse and B no worse, something changed; or A worse (the group
  // helps A) while B better (it hurts B).
  const remove = (a >= 0 && b >= 0 && (a > 0 || b > 0)) || (a < 0 && b > 0);
  if (remove) drop.push(group);
  console.log(`${remove ? 'DROP' : 'keep'} ${group.padEnd(44)} questions ${String(touched.length).padStart(3)}  without it: A mrr ${f(dA.mrr)} hit@5 ${f(dA.hit)} | B mrr ${f(dB.mrr)} hit@5 ${f(dB.hit)}`);
}
const kept = SYNONYM_GROUPS.filter((g) => !drop.includes(g));
const all = runQuestions(questions, indexes(kept), DEFAULT_ASSEMBLY);
const fm = (m: Metrics) => `mrr@10 ${m['mrr@10'].toFixed(3)} hit@5 ${m['hit@5'].toFixed(3)}`;
console.log(`\n${drop.length} of ${SYNONYM_GROUPS.length} groups flagged: ${drop.map((g) => `'${g}'`).join(', ')}`);
console.log(`all groups:      A ${fm(base.tuning)} | B ${fm(base.heldOut)} | tokens p50 ${base.tokensP50}`);
console.log(`flagged dropped: A ${fm(all.tuning)} | B ${fm(all.heldOut)} | tokens p50 ${all.tokensP50}`);
