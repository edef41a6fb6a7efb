/**
 * Identifiers written as one word (`urlretrieve`, `readline`, `getenv`, `filename`) split into
 * the words of the library's own prose (issue 22): no dictionary, the vocabulary is the corpus.
 * A word of the index that is not a prose word itself is cut in two where both halves are words
 * its prose uses (in several sections); of several cuts, the one whose rarer half is the most
 * used wins. The halves are added to the field beside the whole word, so "retrieve a url" finds
 * `urlretrieve` while `urlretrieve` still finds itself first.
 */

export interface SplitOptions {
  /** Shortest word cut (letters). */
  minWord: number;
  /** Shortest half (letters). */
  minPart: number;
  /** Sections whose prose must hold a half for it to count as a word. */
  minSections: number;
}

export const DEFAULT_SPLIT: SplitOptions = { minWord: 6, minPart: 3, minSections: 3 };

/**
 * The splitter of one build: `prose` is each section's prose tokens (stemmed, as indexed).
 * Returns a function giving the halves of a token (empty when it is not cut).
 */
export function corpusSplitter(prose: readonly (readonly string[])[], options: SplitOptions = DEFAULT_SPLIT): (token: string) => readonly string[] {
  const df = new Map<string, number>();
  for (const toks of prose) for (const t of new Set(toks)) if (/^[a-z]+$/.test(t)) df.set(t, (df.get(t) ?? 0) + 1);
  return splitterOfCounts(df, options);
}

/**
 * The same splitter from the counts corpusSplitter makes: for each plain word (letters only) of
 * the prose, the number of sections whose prose holds it (a streamed index build counts them
 * section by section: core/search/index-data.ts).
 */
export function splitterOfCounts(df: ReadonlyMap<string, number>, options: SplitOptions = DEFAULT_SPLIT): (token: string) => readonly string[] {
  const isWord = (w: string) => w.length >= options.minPart && (df.get(w) ?? 0) >= options.minSections;
  const memo = new Map<string, readonly string[]>();
  return (token) => {
    let out = memo.get(token);
    if (out) return out;
    out = [];
    // A word of the prose stays whole (`understand` is not `under` + `stand`).
    if (token.length >= options.minWord && /^[a-z]+$/.test(token) && (df.get(token) ?? 0) < options.minSections) {
      let best = 0;
      for (let i = options.minPart; i <= token.length - options.minPart; i++) {
        const a = token.slice(0, i);
        const b = token.slice(i);
        if (!isWord(a)) continue;
        // The tail as indexed: the stemmer drops a final e of the whole (`readlines` -> `readlin`),
        // not of a short word (`line`).
        const tail = isWord(b) ? b : isWord(b + 'e') ? b + 'e' : '';
        if (!tail) continue;
        const score = Math.min(df.get(a)!, df.get(tail)!);
        if (score > best) {
          best = score;
          out = [a, tail];
        }
      }
    }
    memo.set(token, out);
    return out;
  };
}
