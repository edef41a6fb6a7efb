/**
 * A tokenizer that understands code as well as prose.
 *
 * - Compound API names are kept whole and split into parts: `ctx.throw` gives `ctx.throw`,
 *   `ctx`, `throw`; `useState` gives `usestate`, `use`, `state`; `return_exceptions` gives
 *   `return_exceptions`, `return`, `exceptions`; `--max-old-space-size` gives its words.
 * - Words are lower-cased and lightly stemmed (plural, -ing, -ed), so "routes" finds "route".
 * - Stop words are dropped (they carry no signal in BM25 and only cost time).
 */

const WORD = /[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*|\d+(?:\.\d+)+|\d+/g;

export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be been being but by can could did do does doing done for from had has have ' +
    'having he her here hers him his how i if in into is it its itself just me more most my no nor not ' +
    'of off on once only or other our ours out over own same she should so some such than that the their ' +
    'theirs them then there these they this those through to too under until up very was we were what ' +
    'when where which while who whom why will with would you your yours want wants need needs get got ' +
    'use using used way ways also e g eg ie etc please thanks thank hi hello anyone someone something ' +
    'there s t d ll m re ve'
  ).split(/\s+/),
);

/** Splits an identifier into its words: `parseAsync` -> parse, async; `HTTPServer` -> http, server. */
export function splitIdentifier(id: string): string[] {
  return id
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z\d]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** Light, deterministic English stemmer (plural, -ing, -ed, -ly); same rules at index and query time. */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'i';
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('xes') || w.endsWith('ches') || w.endsWith('shes')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length > 4) w = undouble(w.slice(0, -2));
  else if (w.endsWith('ly') && w.length > 5) w = w.slice(0, -2);
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  // "library"/"libraries" and "cookie"/"cookies" end alike: a final y after a consonant is i.
  else if (w.endsWith('y') && w.length > 3 && !/[aeiouy]/.test(w[w.length - 2])) w = w.slice(0, -1) + 'i';
  return w;
}

function undouble(w: string): string {
  return /([bdfgmnprt])\1$/.test(w) ? w.slice(0, -1) : w;
}

export interface TokenizeOptions {
  /** Keep stop words (used for phrase-like fields such as headings). Default false. */
  keepStopWords?: boolean;
}

/**
 * Tokens of a text, in order, with duplicates (term frequency matters). Compound names give the
 * whole name first, then their parts.
 */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const out: string[] = [];
  const keepStop = options.keepStopWords === true;
  for (const m of text.matchAll(WORD)) {
    const raw = m[0];
    const compound = /[.:#>_$]|[a-z][A-Z]/.test(raw);
    if (compound) {
      const whole = raw.toLowerCase();
      if (whole.length <= 64) out.push(whole);
      const parts = raw.split(/\.|::|#|->/);
      for (const p of parts) {
        const words = splitIdentifier(p);
        if (words.length > 1 || parts.length > 1) {
          const joined = p.toLowerCase();
          if (parts.length > 1 && joined !== whole && words.length > 1) out.push(joined);
          for (const w of words) if (keepStop || !STOP_WORDS.has(w)) out.push(stem(w));
        }
      }
      continue;
    }
    const w = raw.toLowerCase();
    if (!keepStop && STOP_WORDS.has(w)) continue;
    if (w.length > 64) continue;
    out.push(stem(w));
  }
  return out;
}

/** The identifiers of a code block: names worth matching (skips one-letter names and keywords). */
export function codeIdentifiers(code: string): string[] {
  const out: string[] = [];
  for (const t of tokenize(code)) if (t.length > 1 && !CODE_KEYWORDS.has(t)) out.push(t);
  return out;
}

const CODE_KEYWORDS: ReadonlySet<string> = new Set(
  'const let var function return import export from default new class extend await async typeof instanceof void null undefined true false this def self none pass elif els lambda yield try catch finally throw func fn pub mut impl struct enum type interface package nil err'.split(
    ' ',
  ),
);
