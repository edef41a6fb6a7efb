/**
 * Judging and metrics of the retrieval benchmark (pure functions, unit-tested).
 *
 * A returned snippet hits a gold section when its source path equals the gold path and its line
 * range overlaps the gold span (a gold entry without a span is page-level: any snippet of that
 * path hits it). Several snippets hitting one gold section count once, at the rank of the first.
 */

export interface GoldSection {
  path: string;
  /** 1-based inclusive line span; absent = page-level gold. */
  lines?: [number, number];
  /** 2 = the section that answers; 1 = a useful supporting section. */
  grade: number;
  heading?: string[];
}

export interface BenchQuestion {
  id: string;
  library: string;
  corpus: string;
  question: string;
  type: string;
  tier?: string;
  gold: GoldSection[];
}

/** Where a returned snippet came from. */
export interface RetrievedRef {
  path: string;
  lineStart: number;
  lineEnd: number;
}

/** The metrics of one question, or their means over several. */
export interface Metrics {
  'hit@1': number;
  'hit@3': number;
  'hit@5': number;
  'hit@10': number;
  'recall@5': number;
  'mrr@10': number;
  'ndcg@10': number;
  /** Questions averaged. */
  n: number;
}

export const METRIC_KEYS = ['hit@1', 'hit@3', 'hit@5', 'hit@10', 'recall@5', 'mrr@10', 'ndcg@10'] as const;

/** True when the snippet hits the gold section. */
export function hits(ref: RetrievedRef, gold: GoldSection): boolean {
  if (ref.path !== gold.path) return false;
  if (!gold.lines) return true;
  return ref.lineEnd >= gold.lines[0] && ref.lineStart <= gold.lines[1];
}

/**
 * For each gold section, the 1-based rank of the first returned snippet that hits it
 * (Infinity when none does).
 */
export function goldRanks(refs: readonly RetrievedRef[], gold: readonly GoldSection[]): number[] {
  return gold.map((g) => {
    const i = refs.findIndex((r) => hits(r, g));
    return i < 0 ? Infinity : i + 1;
  });
}

/**
 * Metrics of one question with gold. hit@k: some gold section within the first k snippets.
 * recall@5: share of the grade-2 sections (all sections when none is grade 2) within the first 5.
 * mrr@10: 1 / rank of the first hit, 0 past 10. nDCG@10: gain 2^grade - 1 credited at the rank
 * of each section's first hit, divided by the ideal ordering of the gold sections (capped at 1,
 * because one long snippet may cover two gold sections at one rank).
 */
export function judgeQuestion(refs: readonly RetrievedRef[], gold: readonly GoldSection[]): Metrics {
  if (gold.length === 0) throw new Error('judgeQuestion needs gold sections; type "none" questions are scored separately.');
  const ranks = goldRanks(refs, gold);
  const first = Math.min(...ranks);
  const hitAt = (k: number) => (first <= k ? 1 : 0);
  const primary = gold.some((g) => g.grade >= 2) ? gold.map((g) => g.grade >= 2) : gold.map(() => true);
  const primaryCount = primary.filter(Boolean).length;
  const recall5 = ranks.filter((r, i) => primary[i] && r <= 5).length / primaryCount;
  let dcg = 0;
  gold.forEach((g, i) => {
    if (ranks[i] <= 10) dcg += gain(g.grade) / Math.log2(ranks[i] + 1);
  });
  const ideal = gold
    .map((g) => gain(g.grade))
    .sort((a, b) => b - a)
    .slice(0, 10)
    .reduce((s, gn, i) => s + gn / Math.log2(i + 2), 0);
  return {
    'hit@1': hitAt(1),
    'hit@3': hitAt(3),
    'hit@5': hitAt(5),
    'hit@10': hitAt(10),
    'recall@5': recall5,
    'mrr@10': first <= 10 ? 1 / first : 0,
    'ndcg@10': ideal > 0 ? Math.min(1, dcg / ideal) : 0,
    n: 1,
  };
}

function gain(grade: number): number {
  return 2 ** grade - 1;
}

/** The mean of several questions' metrics (n = their count; all zero when there are none). */
export function meanMetrics(list: readonly Metrics[]): Metrics {
  const out = { n: list.length } as Metrics;
  for (const k of METRIC_KEYS) out[k] = list.length === 0 ? 0 : list.reduce((s, m) => s + m[k], 0) / list.length;
  return out;
}

/**
 * Means per corpus and the macro mean over corpora (each corpus weighs the same; macro n is the
 * number of questions in all).
 */
export function aggregate(perQuestion: ReadonlyArray<{ corpus: string; metrics: Metrics }>): { macro: Metrics; perCorpus: Record<string, Metrics> } {
  const groups = new Map<string, Metrics[]>();
  for (const q of perQuestion) {
    const g = groups.get(q.corpus) ?? [];
    g.push(q.metrics);
    groups.set(q.corpus, g);
  }
  const perCorpus: Record<string, Metrics> = {};
  for (const [corpus, list] of [...groups].sort(([a], [b]) => a.localeCompare(b))) perCorpus[corpus] = meanMetrics(list);
  const macro = meanMetrics(Object.values(perCorpus));
  macro.n = perQuestion.length;
  return { macro, perCorpus };
}

/** Nearest-rank percentile (p in 0..100) of a list of numbers; 0 for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

/** Whether a question is scored against gold (type "none" questions are not). */
export function hasGold(q: BenchQuestion): boolean {
  return q.type !== 'none' && q.gold.length > 0;
}
