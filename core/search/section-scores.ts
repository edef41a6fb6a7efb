/**
 * The steps that adjust the sections' BM25F scores for one question, in the order the lexical
 * index applies them (core/search/lexical-index.ts): heading coverage, verbatim phrases, the
 * static priors, then the lifts a section gets from its neighbours and from the sections that
 * link to it. Each works on the search's score buffer (`scores`, by section number) and the list
 * of the sections it touched; a lift may touch more sections (appended to `touched`).
 */
import type { Ragged } from './index-data.ts';
import { PhraseMatcher, questionPhrases } from './phrases.ts';
import { codeIdentifiers, tokenize } from './tokenize.ts';

/** Sections searched for a question's verbatim phrases (the best by score so far). */
export const PHRASE_CANDIDATES = 200;

/** Item k of a ragged list. */
export const run = (r: Ragged, k: number): Int32Array => (r.row ? r.row(k) : r.items.subarray(r.start[k], r.start[k + 1]));

/** Whether items[i] occurs in items[lo..i). */
export function seenBefore(items: Int32Array, lo: number, i: number): boolean {
  const t = items[i];
  for (let j = lo; j < i; j++) if (items[j] === t) return true;
  return false;
}

/** Whether the sorted run items[lo..hi) holds a value. */
export function sortedHas(items: Int32Array, lo: number, hi: number, v: number): boolean {
  hi--;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid] === v) return true;
    if (items[mid] < v) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** The `n` sections of `among` with the highest (positive) score, best first (ties: lower index first). */
export function bestOf(among: readonly number[], score: Float64Array, n: number): number[] {
  const top: number[] = [];
  const better = (a: number, b: number) => score[a] > score[b] || (score[a] === score[b] && a < b);
  for (const sec of among) {
    if (!(score[sec] > 0) || (top.length === n && !better(sec, top[n - 1]))) continue;
    let i = top.length < n ? top.length : n - 1;
    while (i > 0 && better(sec, top[i - 1])) {
      top[i] = top[i - 1];
      i--;
    }
    top[i] = sec;
  }
  return top;
}

/**
 * Each heading's norm for heading coverage: the idf of its distinct words summed, in the order
 * of their first occurrence.
 */
export function headNorms(heads: Ragged, idf: Float64Array): Float64Array {
  const out = new Float64Array(heads.start.length - 1);
  for (let d = 0; d < out.length; d++) {
    const lo = heads.start[d];
    for (let i = lo; i < heads.start[d + 1]; i++) if (!seenBefore(heads.items, lo, i)) out[d] += idf[heads.items[i]];
  }
  return out;
}

/**
 * Heading coverage: each of `docs` whose own heading holds asked words gains
 * weight x (their idf summed) x (that sum's share of the heading's norm).
 */
export function coverHeadings(
  heads: Ragged,
  norms: Float64Array,
  docs: readonly number[],
  into: Float64Array,
  askedNos: readonly number[],
  idf: Float64Array,
  weight: number,
): void {
  if (weight <= 0 || askedNos.length === 0) return;
  const { start, items } = heads;
  for (const d of docs) {
    const lo = start[d];
    const hi = start[d + 1];
    let hit = 0;
    for (let i = lo; i < hi; i++) {
      const t = items[i];
      if (askedNos.includes(t) && !seenBefore(items, lo, i)) hit += idf[t];
    }
    if (hit > 0) into[d] += weight * hit * (hit / norms[d]);
  }
}

/** A section's word lists searched for phrases, as term numbers in order. */
export interface PhraseFields {
  head: Ragged;
  prose: Ragged;
  code: Ragged;
}

/**
 * Verbatim phrases (core/search/phrases.ts): of the PHRASE_CANDIDATES best sections, one holding
 * a run of at least `minTokens` consecutive words of the question's quoted text or error message,
 * and at least half of it, in its heading, prose or code, has its score multiplied by
 * 1 + weight x the run's share of the phrase.
 */
export function boostPhrases(
  query: string,
  fields: PhraseFields,
  termNo: (w: string) => number,
  touched: readonly number[],
  scores: Float64Array,
  weight: number,
  minTokens: number,
): void {
  if (weight <= 0) return;
  // Phrase words as term numbers; a word the index does not hold gets a number of its own that
  // no text holds (negative).
  let unknown = -1;
  const numbered = (list: string[]) => Int32Array.from(list, (w) => (termNo(w) >= 0 ? termNo(w) : unknown--));
  const phrases = questionPhrases(query, minTokens).flatMap((text) => {
    const phraseWords = tokenize(text);
    return phraseWords.length >= minTokens
      ? [{ words: new PhraseMatcher<number>(numbered(phraseWords)), names: new PhraseMatcher<number>(numbered(codeIdentifiers(text))) }]
      : [];
  });
  if (phrases.length === 0) return;
  /** The share of the phrase a run covers, when the run counts (>= minTokens, >= half). */
  const shareOf = (len: number, of: number) => (len >= minTokens && 2 * len >= of ? len / of : 0);
  for (const sec of bestOf(touched, scores, PHRASE_CANDIDATES)) {
    let share = 0;
    for (const { words: ws, names } of phrases) {
      const len = Math.max(ws.longestRun(run(fields.head, sec)), ws.longestRun(run(fields.prose, sec)));
      share = Math.max(share, shareOf(len, ws.length), shareOf(names.longestRun(run(fields.code, sec)), names.length));
    }
    if (share > 0) scores[sec] *= 1 + weight * share;
  }
}

/**
 * A section next to one that matches well (same file) often holds the answer the question words
 * only circle around (the example after the explanation, the option after the intro): it gains
 * `weight` x the better neighbour's score (`before`: the scores before any lift).
 */
export function liftNeighbours(touched: number[], scores: Float64Array, before: Float64Array, pageOf: Int32Array, weight: number): void {
  if (weight <= 0) return;
  const nsec = pageOf.length;
  for (let x = 0, n = touched.length; x < n; x++) {
    const sec = touched[x];
    for (let nb = sec - 1; nb <= sec + 1; nb += 2) {
      if (nb < 0 || nb >= nsec || pageOf[nb] !== pageOf[sec]) continue;
      if (scores[nb] === 0) touched.push(nb);
      scores[nb] = Math.max(scores[nb], before[nb] + weight * before[sec]);
    }
  }
}

/**
 * A section a well-matching section links to often holds the details the question asks about:
 * the guide matches the question's wording, the reference it links to answers it. Each section
 * a link of the `sources` best sections points at gains the linking section's score x `weight`,
 * up to that score, not above (a link vouches for its target, it does not make it the better
 * answer); of several linking sections, the best lift counts.
 */
export function liftLinked(touched: number[], scores: Float64Array, before: Float64Array, links: Ragged, weight: number, sources: number): void {
  const lift = new Map<number, number>();
  for (const sec of bestOf(touched, before, sources)) {
    for (const t of run(links, sec)) {
      const g = Math.min(weight * before[sec], before[sec] - before[t]);
      if (g > (lift.get(t) ?? 0)) lift.set(t, g);
    }
  }
  for (const [t, g] of lift) {
    if (scores[t] === 0) touched.push(t);
    scores[t] = Math.max(scores[t], before[t] + g);
  }
}
