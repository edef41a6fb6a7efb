/**
 * A question as search terms: its words (less the filler words that phrase a question rather
 * than name its subject), then the words added to reach the documentation's vocabulary, each
 * with its weight relative to an asked word:
 *
 * - general synonyms (core/search/data/vocabulary.json: plain English and general software
 *   vocabulary, the same for every library) at `synonymWeight`;
 * - for a plain question word the library's index does not hold at all, the index words
 *   sharing its longest prefix at `prefixWeight`;
 * - the heading words mined from the library's own text as associates of a question word
 *   (core/search/bridge.ts) at `bridgeWeight` times their strength.
 *
 * Each added word is searched once, at the weight of the first source that adds it.
 */
import vocabulary from './data/vocabulary.json' with { type: 'json' };
import { tokenize } from './tokenize.ts';
import type { Words } from './index-data.ts';

interface VocabularyFile {
  categories: Array<{ name: string; why: string; groups: string[] }>;
  fillers: { words: string[] };
}

const VOCABULARY = vocabulary as VocabularyFile;

/**
 * Groups of words questions and documentation use for the same thing (the data file's groups,
 * every category in order). Checked group by group on the two halves of the shared questions by
 * scripts/bench/synonym-check.ts.
 */
export const SYNONYM_GROUPS: readonly string[] = VOCABULARY.categories.flatMap((c) => c.groups);

/** Each stemmed word of the groups -> the other words of its groups. */
export function synonymMap(groups: readonly string[]): ReadonlyMap<string, readonly string[]> {
  const out = new Map<string, string[]>();
  for (const group of groups) {
    const words = [...new Set(tokenize(group))];
    for (const w of words) out.set(w, [...new Set([...(out.get(w) ?? []), ...words.filter((x) => x !== w)])]);
  }
  return out;
}

/** Each stemmed word of a synonym group -> the other words of its group. */
export const SYNONYMS: ReadonlyMap<string, readonly string[]> = synonymMap(SYNONYM_GROUPS);

/**
 * Words that phrase a question rather than name its subject ("is it possible to...", "something
 * like..."): plain English, the same for every library (stemmed).
 */
export const QUESTION_FILLERS: ReadonlySet<string> = new Set(tokenize(VOCABULARY.fillers.words.join(' ')));

/** A question asking how to do something. */
export const HOW_TO = /\bhow\s+(?:do|can|could|should|would|may)\s+(?:i|we|you|one)\b|\bhow\s+to\b/i;

/** Most index words one unknown question word is searched as (the most frequent of those tied). */
export const PREFIX_MAX_WORDS = 3;

/** A search term and its weight relative to an asked word. */
export interface WeightedTerm {
  t: string;
  w: number;
}

/** The question's distinct words, less its filler words (unless that leaves none). */
export function questionWords(query: string, dropFillers: boolean): string[] {
  const words = [...new Set(tokenize(query))];
  if (!dropFillers) return words;
  const kept = words.filter((t) => !QUESTION_FILLERS.has(t));
  return kept.length > 0 ? kept : words;
}

/** What expandQuery needs of the index and the parameters. */
export interface ExpansionContext {
  synonyms: ReadonlyMap<string, readonly string[]>;
  synonymWeight: number;
  /** The index's plain words, sorted (undefined: prefix matching off). */
  vocabulary?: Words;
  prefixWeight: number;
  prefixMinLength: number;
  /** The sections' idf of an index word (0: not in the index). */
  idf: (w: string) => number;
  /** Corpus-mined associates of an asked word with their strength in (0, 1] (core/search/bridge.ts; undefined: off). */
  associates?: (w: string) => ReadonlyArray<{ t: string; s: number }>;
  bridgeWeight?: number;
}

/** The asked words (weight 1), then their synonyms, prefix matches and mined associates. */
export function expandQuery(query: string, words: readonly string[], ctx: ExpansionContext): WeightedTerm[] {
  const weighted: WeightedTerm[] = words.map((t) => ({ t, w: 1 }));
  const added = new Set(words);
  const add = (t: string, w: number) => {
    if (added.has(t)) return;
    added.add(t);
    weighted.push({ t, w });
  };
  // Each synonym once, even when two asked words lead to it.
  if (ctx.synonymWeight > 0) for (const t of words) for (const syn of ctx.synonyms.get(t) ?? []) add(syn, ctx.synonymWeight);
  if (ctx.vocabulary) {
    const plain = plainWords(query);
    for (const t of words) {
      if (ctx.idf(t) > 0 || !plain.has(t)) continue;
      for (const near of nearestByPrefix(ctx.vocabulary, t, ctx.prefixMinLength, PREFIX_MAX_WORDS, ctx.idf)) add(near, ctx.prefixWeight);
    }
  }
  const bridgeWeight = ctx.bridgeWeight ?? 0;
  if (ctx.associates && bridgeWeight > 0) for (const t of words) for (const a of ctx.associates(t)) add(a.t, bridgeWeight * a.s);
  return weighted;
}

/** The question's plain words (no code names: not camelCase, dotted or snake_case), stemmed. */
export function plainWords(query: string): Set<string> {
  const out = new Set<string>();
  for (const m of query.matchAll(/[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*/g))
    if (/^[A-Za-z]+$/.test(m[0]) && !/[a-z][A-Z]/.test(m[0])) for (const t of tokenize(m[0])) out.add(t);
  return out;
}

function commonPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/**
 * The words of a sorted vocabulary sharing the longest prefix with `word` (not in it), when that
 * prefix has at least `minLength` letters or is the whole of the shorter word (and at least 4
 * letters): at most `max`, the most frequent (lowest idf) first.
 */
export function nearestByPrefix(vocabulary: Words, word: string, minLength: number, max: number, idf: (w: string) => number): string[] {
  if (!/^[a-z]+$/.test(word) || word.length < 4) return [];
  const at = (i: number) => vocabulary.at(i)!;
  let lo = 0;
  let hi = vocabulary.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at(mid) < word) lo = mid + 1;
    else hi = mid;
  }
  // The words sharing the longest prefix with `word` are next to where it would be.
  const best = Math.max(lo > 0 ? commonPrefix(at(lo - 1), word) : 0, lo < vocabulary.length ? commonPrefix(at(lo), word) : 0);
  if (best < 4) return [];
  const out: string[] = [];
  for (let i = lo - 1; i >= 0 && commonPrefix(at(i), word) >= best; i--) out.push(at(i));
  for (let i = lo; i < vocabulary.length && commonPrefix(at(i), word) >= best; i++) out.push(at(i));
  const ok = out.filter((w) => best >= minLength || best === Math.min(w.length, word.length));
  return ok.sort((a, b) => idf(a) - idf(b) || a.localeCompare(b)).slice(0, max);
}
