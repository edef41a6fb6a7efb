/**
 * The fixed split of the benchmark's questions into two halves (issue 22): half A is the one
 * the ranking may be tuned on, half B the one it is validated on. A question's half is the
 * parity of the first byte of sha1(its id), so it never depends on the questions asked, their
 * order or the figures: the same question is always in the same half, and a new question falls
 * into one without moving any other.
 */
import { createHash } from 'node:crypto';
import { aggregate, type Metrics } from './metrics.ts';

export type Half = 'A' | 'B';

/** The half of a question id: A when sha1(id)'s first byte is even, else B. */
export function questionHalf(id: string): Half {
  return createHash('sha1').update(id).digest()[0] % 2 === 0 ? 'A' : 'B';
}

export interface HalvesFigures {
  A: { macro: Metrics; perCorpus: Record<string, Metrics> };
  B: { macro: Metrics; perCorpus: Record<string, Metrics> };
}

/** Per-corpus and macro figures of each half of judged questions. */
export function byHalf(judged: ReadonlyArray<{ id: string; corpus: string; metrics: Metrics }>): HalvesFigures {
  const of = (h: Half) => aggregate(judged.filter((j) => questionHalf(j.id) === h));
  return { A: of('A'), B: of('B') };
}

/** The `n` corpora with the lowest MRR@10 (ties: lower Hit@5 first), worst first. */
export function worstCorpora(perCorpus: Record<string, Metrics>, n = 3): Array<[string, Metrics]> {
  return Object.entries(perCorpus)
    .sort(([, a], [, b]) => a['mrr@10'] - b['mrr@10'] || a['hit@5'] - b['hit@5'])
    .slice(0, n);
}

const f3 = (x: number | undefined) => (x === undefined ? '    - ' : x.toFixed(3).padStart(6));

/**
 * The halves side by side: one line per corpus (all questions, then half A, then half B: MRR@10
 * and Hit@5 each), the macro line of each, and the worst corpora of each half.
 */
export function formatHalves(all: Record<string, Metrics>, allMacro: Metrics, halves: HalvesFigures): string {
  const cols = (m: Metrics | undefined) => `${f3(m?.['mrr@10'])} ${f3(m?.['hit@5'])} ${String(m?.n ?? 0).padStart(3)}`;
  const lines = [
    `${'corpus'.padEnd(9)} | all  mrr@10  hit@5   n | A    mrr@10  hit@5   n | B    mrr@10  hit@5   n`,
    ...Object.keys(all).map((c) => `${c.padEnd(9)} |      ${cols(all[c])} |      ${cols(halves.A.perCorpus[c])} |      ${cols(halves.B.perCorpus[c])}`),
    `${'macro'.padEnd(9)} |      ${cols(allMacro)} |      ${cols(halves.A.macro)} |      ${cols(halves.B.macro)}`,
  ];
  for (const h of ['A', 'B'] as const) {
    const worst = worstCorpora(halves[h].perCorpus).map(([c, m]) => `${c} ${m['mrr@10'].toFixed(3)}/${m['hit@5'].toFixed(3)}`);
    lines.push(`worst corpora of half ${h} (mrr@10/hit@5): ${worst.join(', ')}`);
  }
  return lines.join('\n');
}
