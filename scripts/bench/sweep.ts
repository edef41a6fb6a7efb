/**
 * A joint search of the ranking's numeric parameters (DEFAULT_BM25 and DEFAULT_ASSEMBLY) by
 * coordinate ascent, judged on half A of the questions only (scripts/bench/halves.ts): each parameter in turn is tried at a few
 * multiples of its current value and the best kept (macro hit@5 of the tuning half, ties by its
 * mrr@10; a move must improve strictly, and the median answer must stay within the token
 * limit); passes repeat with smaller steps until none moves. Every point's half-B figures are
 * printed too, but never used to choose; the end compares the start and the best point on both
 * halves, so a gain that only fits the tuning half shows.
 *
 *   npm run bench:sweep [-- --passes 3 --max-tokens 2500 --only k1,idfPower]
 */
import { parseArgs } from 'node:util';
import { DEFAULT_ASSEMBLY, type AssemblyOptions } from '../../core/context-assembly.ts';
import { DEFAULT_BM25, type Bm25Params } from '../../core/search/lexical-index.ts';
import { buildIndexes, DEFAULT_CORPORA, DEFAULT_QUESTIONS, formatMetrics as fmt, loadRun, mergeParams, runQuestions, type QuickResult } from './quick-run.ts';

const { values } = parseArgs({
  options: {
    questions: { type: 'string', default: DEFAULT_QUESTIONS },
    corpora: { type: 'string', default: DEFAULT_CORPORA },
    passes: { type: 'string', default: '3' },
    'max-tokens': { type: 'string', default: '2500' },
    /** Comma-separated parameter names (as listed below) to search; default all. */
    only: { type: 'string', default: '' },
    /** Start point: JSON merged into DEFAULT_BM25 / DEFAULT_ASSEMBLY. */
    params: { type: 'string', default: '{}' },
    assembly: { type: 'string', default: '{}' },
  },
});

interface Point {
  bm25: Bm25Params;
  assembly: AssemblyOptions;
}

/** A searched parameter: where it lives, and the range its values are kept in. */
interface Dim {
  name: string;
  get(p: Point): number;
  set(p: Point, v: number): Point;
  min: number;
  max: number;
  integer?: boolean;
}

function bm25Dim(name: string, path: string[], min: number, max: number, integer = false): Dim {
  return {
    name,
    min,
    max,
    integer,
    get: (p) => path.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], p.bm25) as number,
    set: (p, v) => {
      // {fields: {heading: {weight: v}}} for the path fields.heading.weight.
      const over = path.reduceRight<unknown>((inner, k) => ({ [k]: inner }), v);
      return { ...p, bm25: mergeParams(p.bm25, over) };
    },
  };
}

function assemblyDim(name: keyof AssemblyOptions, min: number, max: number): Dim {
  return { name, min, max, get: (p) => p.assembly[name], set: (p, v) => ({ ...p, assembly: { ...p.assembly, [name]: v } }) };
}

const DIMS: Dim[] = [
  bm25Dim('k1', ['k1'], 0.3, 4),
  ...(['heading', 'parents', 'code', 'prose', 'path'] as const).flatMap((f) => [
    bm25Dim(`${f}.weight`, ['fields', f, 'weight'], 0.05, 10),
    bm25Dim(`${f}.b`, ['fields', f, 'b'], 0.05, 1),
  ]),
  bm25Dim('neighbourWeight', ['neighbourWeight'], 0.01, 0.6),
  bm25Dim('headingCoverage', ['headingCoverage'], 0.01, 1),
  bm25Dim('idfPower', ['idfPower'], 0.3, 1.5),
  bm25Dim('synonymWeight', ['synonymWeight'], 0.05, 1),
  bm25Dim('parentWeight', ['parentWeight'], 0.3, 1.3),
  bm25Dim('parentMaxTokens', ['parentMaxTokens'], 300, 800, true),
  bm25Dim('mergeRatio', ['mergeRatio'], 0.1, 0.9),
  bm25Dim('mergeMaxTokens', ['mergeMaxTokens'], 300, 800, true),
  assemblyDim('relativeCutoff', 0.1, 0.9),
  assemblyDim('maxUnitTokens', 300, 800),
];
// Not searched: maxUnits (at least 5, it cannot change hit@5), the switches (dropFillers,
// parentMinDepth) and proximity (measured on its own, off).
// maxUnitTokens, mergeMaxTokens and parentMaxTokens are capped at today's 800: a bigger unit
// "hits" more by being bigger, not by ranking better (docs/benchmark.md).

const only = new Set(values.only!.split(',').filter(Boolean));
const dims = only.size > 0 ? DIMS.filter((d) => only.has(d.name)) : DIMS;
for (const n of only) if (!DIMS.some((d) => d.name === n)) throw new Error(`--only: no parameter ${n} (known: ${DIMS.map((d) => d.name).join(', ')})`);
const maxTokens = Number(values['max-tokens']);

const { questions, snippets } = await loadRun(values.questions!, values.corpora!);

const seen = new Map<string, QuickResult>();
function evaluate(p: Point): QuickResult {
  const key = JSON.stringify(p);
  let r = seen.get(key);
  if (!r) seen.set(key, (r = runQuestions(questions, buildIndexes(snippets, p.bm25), p.assembly)));
  return r;
}
/** Whether a beats b on the tuning half: hit@5, then mrr@10 (1e-9 guards float noise). */
function better(a: QuickResult, b: QuickResult): boolean {
  const d = a.tuning['hit@5'] - b.tuning['hit@5'];
  return d > 1e-9 || (Math.abs(d) <= 1e-9 && a.tuning['mrr@10'] - b.tuning['mrr@10'] > 1e-9);
}
const f3 = (x: number) => x.toFixed(3);
const line = (r: QuickResult) =>
  `A hit@5 ${f3(r.tuning['hit@5'])} mrr ${f3(r.tuning['mrr@10'])} | B hit@5 ${f3(r.heldOut['hit@5'])} mrr ${f3(r.heldOut['mrr@10'])} | macro hit@5 ${f3(r.macro['hit@5'])} mrr ${f3(r.macro['mrr@10'])} | tokens ${r.tokensP50}`;
const round = (d: Dim, v: number) => {
  const c = Math.min(d.max, Math.max(d.min, v));
  return d.integer ? Math.round(c) : Math.round(c * 1000) / 1000;
};

const start: Point = { bm25: mergeParams(DEFAULT_BM25, JSON.parse(values.params!)), assembly: mergeParams(DEFAULT_ASSEMBLY, JSON.parse(values.assembly!)) };
let best = start;
let bestR = evaluate(start);
console.log(`start: ${line(bestR)}`);
const STEPS = [
  [0.5, 0.75, 1.25, 1.5, 2],
  [0.8, 0.9, 1.1, 1.2],
  [0.9, 0.95, 1.05, 1.1],
];
for (let pass = 0; pass < Number(values.passes); pass++) {
  let moved = false;
  for (const d of dims) {
    const cur = d.get(best);
    const tried = new Set([cur]);
    let pick: { p: Point; r: QuickResult; v: number } | undefined;
    for (const m of STEPS[Math.min(pass, STEPS.length - 1)]) {
      const v = round(d, cur === 0 ? m - 1 : cur * m);
      if (tried.has(v)) continue;
      tried.add(v);
      const p = d.set(best, v);
      const r = evaluate(p);
      if (r.tokensP50 > maxTokens) continue;
      if (better(r, pick?.r ?? bestR)) pick = { p, r, v };
    }
    if (pick) {
      console.log(`pass ${pass + 1} ${d.name} ${cur} -> ${pick.v}: ${line(pick.r)}`);
      best = pick.p;
      bestR = pick.r;
      moved = true;
    }
  }
  if (!moved) {
    console.log(`pass ${pass + 1}: no parameter moved`);
    break;
  }
}

const s = evaluate(start);
console.log(`\n${seen.size} points evaluated.`);
for (const [label, r] of [['start', s], ['best', bestR]] as const) {
  console.log(`${label}:\n  half A   ${fmt(r.tuning)}\n  half B   ${fmt(r.heldOut)}\n  macro    ${fmt(r.macro)}\n  tokens p50 ${r.tokensP50} p90 ${r.tokensP90}`);
}
const changed: string[] = dims.filter((d) => d.get(best) !== d.get(start)).map((d) => `${d.name} ${d.get(start)} -> ${d.get(best)}`);
console.log(`changed: ${changed.join(', ') || 'nothing'}`);
console.log(`--params '${JSON.stringify(diff(start.bm25, best.bm25) ?? {})}' --assembly '${JSON.stringify(diff(start.assembly, best.assembly) ?? {})}'`);
const holds = bestR.heldOut['mrr@10'] >= s.heldOut['mrr@10'] && bestR.heldOut['hit@5'] >= s.heldOut['hit@5'] && bestR.tokensP50 <= maxTokens;
console.log(holds ? 'half B mrr@10 and hit@5 do not drop: a candidate default.' : 'half B figures drop: the gain fits half A only; keep the defaults.');

/** The keys of `b` that differ from `a` (objects key by key). */
function diff(a: unknown, b: unknown): unknown {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b ? undefined : b;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b)) {
    const d = diff((a as Record<string, unknown>)[k], v);
    if (d !== undefined) out[k] = d;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
