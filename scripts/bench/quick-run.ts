/**
 * One in-process benchmark run (what bench:quick prints and bench:sweep repeats): every question
 * asked of a lexical index built with the given parameters over cached snippets, its answer
 * assembled as the server does, judged with the benchmark's metrics.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StoredSnippet } from '../../core/contracts.ts';
import { assembleContext, CANDIDATES } from '../../core/query.ts';
import type { AssemblyOptions } from '../../core/context-assembly.ts';
import { buildLexicalIndex, type Bm25Params, type LexicalIndex } from '../../core/search/lexical-index.ts';
import { readCorpora, readQuestions } from './inputs.ts';
import { loadSnippets, searchHits } from './snippet-cache.ts';
import { aggregate, hasGold, judgeQuestion, percentile, type BenchQuestion, type Metrics } from './metrics.ts';
import { byHalf, questionHalf, type HalvesFigures } from './halves.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Where the in-process tools find the questions and corpora unless told otherwise. */
export const DEFAULT_QUESTIONS = join(ROOT, '..', 'shared', 'bench', 'questions.jsonl');
export const DEFAULT_CORPORA = join(ROOT, '..', 'shared', 'corpora');

/** The questions of a file and the cached snippets of the corpora they ask about. */
export async function loadRun(questionsFile: string, corporaDir: string): Promise<{ questions: BenchQuestion[]; snippets: Map<string, StoredSnippet[]> }> {
  const questions = readQuestions(resolve(questionsFile));
  const corpora = readCorpora(resolve(corporaDir)).filter((c) => questions.some((q) => q.corpus === c.name));
  return { questions, snippets: await loadSnippets(corpora) };
}

/** One line of a run's figures. */
export function formatMetrics(m: Metrics): string {
  return `mrr@10 ${m['mrr@10'].toFixed(3)} hit@1 ${m['hit@1'].toFixed(3)} hit@5 ${m['hit@5'].toFixed(3)} ndcg@10 ${m['ndcg@10'].toFixed(3)}`;
}

export interface QuickResult {
  macro: Metrics;
  /** Half A of the questions (scripts/bench/halves.ts): the one tuned on. */
  tuning: Metrics;
  /** Half B: the validation half, never chosen on. */
  heldOut: Metrics;
  perCorpus: Record<string, Metrics>;
  /** Per-corpus and macro figures of each half. */
  halves: HalvesFigures;
  /** Each judged question's figures. */
  perQuestion: Array<{ id: string; corpus: string; metrics: Metrics }>;
  /** Questions whose gold file is among the first five snippets / whose gold section is. */
  fileHits5: number;
  sectionHits5: number;
  judged: number;
  tokensP50: number;
  tokensP90: number;
  searchP50: number;
  searchP99: number;
  /** Questions whose gold is not in the first five: id, question, gold and the first five refs. */
  misses: string[];
}

/** The indexes of the corpora for one set of parameters (built once, asked many times). */
export function buildIndexes(snippets: ReadonlyMap<string, StoredSnippet[]>, params: Bm25Params): Map<string, { index: LexicalIndex; byId: Map<number, StoredSnippet> }> {
  return new Map([...snippets].map(([c, list]) => [c, { index: buildLexicalIndex(list, params), byId: new Map(list.map((s) => [s.id, s])) }]));
}

/** Asks every question of its corpus's index and judges the answers. */
export function runQuestions(
  questions: readonly BenchQuestion[],
  indexes: ReturnType<typeof buildIndexes>,
  assembly: AssemblyOptions,
): QuickResult {
  let fileHits5 = 0;
  const judged: Array<{ id: string; corpus: string; metrics: Metrics }> = [];
  const tokens: number[] = [];
  const searchMs: number[] = [];
  const misses: string[] = [];
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
    judged.push({ id: q.id, corpus: q.corpus, metrics });
    if (refs.slice(0, 5).some((r) => q.gold.some((g) => g.path === r.path))) fileHits5++;
    if (metrics['hit@5'] === 0) {
      misses.push(
        `MISS ${q.id} ${q.question}\n  gold ${q.gold.map((g) => `${g.path}:${g.lines?.join('-')}`).join(' ')}\n  got  ${refs
          .slice(0, 5)
          .map((r) => `${r.path}:${r.lineStart}-${r.lineEnd}`)
          .join(' ')}`,
      );
    }
  }
  const { macro, perCorpus } = aggregate(judged);
  const halves = byHalf(judged);
  return {
    macro,
    tuning: halves.A.macro,
    heldOut: halves.B.macro,
    perCorpus,
    halves,
    perQuestion: judged,
    fileHits5,
    sectionHits5: judged.filter((j) => j.metrics['hit@5']).length,
    judged: judged.length,
    tokensP50: percentile(tokens, 50),
    tokensP90: percentile(tokens, 90),
    searchP50: percentile(searchMs, 50),
    searchP99: percentile(searchMs, 99),
    misses,
  };
}

/** `over` merged into `base`, objects key by key (for --params / --assembly overrides). */
export function mergeParams<T>(base: T, over: unknown): T {
  if (!over || typeof over !== 'object' || Array.isArray(over)) return (over ?? base) as T;
  const out = { ...(base as object) } as Record<string, unknown>;
  for (const [k, v] of Object.entries(over)) out[k] = mergeParams((base as Record<string, unknown>)[k], v);
  return out as T;
}

/** How one run's questions moved against another's: half A's by id, half B's only counted. */
export interface Moves {
  /** Half A's questions whose first gold rank changed (null: not in the first 10). */
  movedA: Array<{ id: string; before: number | null; after: number | null }>;
  A: { up: number; down: number };
  B: { up: number; down: number };
}

/**
 * The questions whose first gold rank (within the first 10, from mrr@10) differs between `base`
 * and `run`. Half B's are counted and never named: the validation half's rankings are not read
 * while tuning.
 */
export function movesAgainst(base: QuickResult, run: QuickResult): Moves {
  const rank = (m: Metrics) => (m['mrr@10'] > 0 ? Math.round(1 / m['mrr@10']) : null);
  const before = new Map(base.perQuestion.map((q) => [q.id, rank(q.metrics)]));
  const out: Moves = { movedA: [], A: { up: 0, down: 0 }, B: { up: 0, down: 0 } };
  for (const q of run.perQuestion) {
    if (!before.has(q.id)) continue;
    const b = before.get(q.id)!;
    const a = rank(q.metrics);
    if (a === b) continue;
    const half = questionHalf(q.id);
    out[half][a !== null && (b === null || a < b) ? 'up' : 'down']++;
    if (half === 'A') out.movedA.push({ id: q.id, before: b, after: a });
  }
  return out;
}
