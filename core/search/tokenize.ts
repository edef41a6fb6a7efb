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
  /** Words also meet their derived forms (validate/validation/validator): `deriveBase`. */
  derive?: boolean;
  /**
   * Programmers' abbreviations and their full words (ABBREVIATION_GROUPS): 'conflate' writes
   * every form as the group's full word (ctx and context are one term); 'expand' keeps the
   * word and adds the full word after an abbreviation (ctx gives ctx, context).
   */
  abbreviations?: 'conflate' | 'expand';
  /** Words dropped (checked after stemming, before derive and abbreviations). */
  exclude?: ReadonlySet<string>;
}

/**
 * Tokens of a text, in order, with duplicates (term frequency matters). Compound names give the
 * whole name first, then their parts.
 */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const out: string[] = [];
  const keepStop = options.keepStopWords === true;
  const exclude = options.exclude;
  const abbr = options.abbreviations ? abbreviationMap(options.derive === true) : undefined;
  const derive = options.derive === true;
  /** Adds a stemmed word, normalised as the options ask. */
  const word = (stemmed: string) => {
    if (exclude?.has(stemmed)) return;
    const w = derive ? deriveBase(stemmed) : stemmed;
    const full = abbr?.get(w);
    if (full === undefined || full === w) out.push(w);
    else if (options.abbreviations === 'conflate') out.push(full);
    else out.push(w, full);
  };
  for (const m of text.matchAll(WORD)) {
    const raw = m[0];
    const compound = /[.:#>_$]|[a-z][A-Z]/.test(raw);
    if (compound) {
      const whole = raw.toLowerCase();
      if (whole.length <= 64 && !exclude?.has(whole)) out.push(whole);
      const parts = raw.split(/\.|::|#|->/);
      for (const p of parts) {
        const words = splitIdentifier(p);
        if (words.length > 1 || parts.length > 1) {
          const joined = p.toLowerCase();
          if (parts.length > 1 && joined !== whole && words.length > 1) out.push(joined);
          for (const w of words) if (keepStop || !STOP_WORDS.has(w)) word(stem(w));
        }
      }
      continue;
    }
    const w = raw.toLowerCase();
    if (!keepStop && STOP_WORDS.has(w)) continue;
    if (w.length > 64) continue;
    word(stem(w));
  }
  return out;
}

/** The identifiers of a code block: names worth matching (skips one-letter names and keywords). */
export function codeIdentifiers(code: string, options: TokenizeOptions = {}): string[] {
  return tokenize(code, { ...options, exclude: CODE_KEYWORDS }).filter((t) => t.length > 1);
}

const CODE_KEYWORDS: ReadonlySet<string> = new Set(
  'const let var function return import export from default new class extend await async typeof instanceof void null undefined true false this def self none pass elif els lambda yield try catch finally throw func fn pub mut impl struct enum type interface package nil err'.split(
    ' ',
  ),
);

/**
 * Derivational suffixes the light stemmer leaves alone, so a verb meets its noun and its agent:
 * validate, validation, validator -> valid; serialize, serialization, serializer -> serializ;
 * connect, connection, connector -> connect; render, renderer -> render; configure,
 * configurable, configuration -> configur. Applied to stemmed words (stem() has already taken
 * plural, -ing, -ed and a final e), at index and query time alike. A base shorter than five
 * letters keeps its suffix (format is not form, server is not serve, option is not opt).
 */
export function deriveBase(w: string): string {
  if (w.length < 7 || /[^a-z]/.test(w)) return w;
  let m: RegExpMatchArray | null;
  // serialization, serialisation, serializer, serialiser -> serializ (as serialize).
  if ((m = w.match(/^(.{3,})i[sz](?:ation|er)$/))) return m[1] + 'iz';
  // British -ise verbs (initialise -> initialis) meet -ize.
  if ((m = w.match(/^(.{4,}[lmnrt])is$/))) return m[1] + 'iz';
  // validation, validator, validat(e) -> valid; iteration -> iterat (short base keeps -at).
  if ((m = w.match(/^(.+)at(?:ion|or)?$/))) return m[1].length >= 5 ? m[1] : m[1] + 'at';
  // connection, connector -> connect; execution -> execut.
  if ((m = w.match(/^(.{4,}t)(?:ion|or)$/))) return m[1];
  // configurable -> configur, accessible -> access; availability -> avail.
  if ((m = w.match(/^(.{5,})(?:abl|ibl|abiliti|ibiliti)$/))) return m[1];
  // renderer -> render, handler -> handl (as handle), formatter -> format.
  if ((m = w.match(/^(.{5,})er$/))) return undouble(m[1]);
  return w;
}

/**
 * Abbreviations programmers write in code and docs, each group led by its full word: the same
 * for every library. (Ambiguous ones stay out: desc is description or descending, sec is
 * seconds or security, spec is a specification or a test.)
 */
export const ABBREVIATION_GROUPS: readonly string[] = [
  'context ctx',
  'request req',
  'response res resp',
  'error err',
  'message msg',
  'configuration config conf cfg',
  'environment env',
  'database db',
  'function fn func',
  'parameter param',
  'argument arg',
  'directory dir',
  'repository repo',
  'authentication auth authn',
  'authorization authz',
  'application app',
  'initialize init',
  'implementation impl',
  'dependency dep',
  'internationalization i18n',
  'localization l10n',
  'documentation doc',
  'information info',
  'library lib',
  'package pkg',
  'source src',
  'destination dest dst',
  'temporary tmp temp',
  'previous prev',
  'current cur curr',
  'number num',
  'string str',
  'integer int',
  'boolean bool',
  'object obj',
  'array arr',
  'value val',
  'variable var',
  'attribute attr',
  'property prop',
  'element elem el',
  'button btn',
  'image img',
  'navigation nav',
  'maximum max',
  'minimum min',
  'length len',
  'index idx',
  'asynchronous async',
  'synchronous sync',
  'address addr',
  'utility util',
  'manager mgr',
  'millisecond ms',
  'administrator admin',
  'password pwd passwd',
  'command cmd',
  'execute exec',
  'evaluate eval',
  'generate gen',
  'development dev',
  'production prod',
  'regex regexp',
  'typescript ts',
  'javascript js',
  'option opt opts',
  'callback cb',
  'event evt',
  'transaction tx',
  'connection conn',
  'reference ref',
  'format fmt',
  'version ver',
  'column col',
  'buffer buf',
  'channel chan',
  'process proc',
  'dictionary dict',
  'sequence seq',
  'expression expr',
  'statement stmt',
  'declaration decl',
  'pointer ptr',
  'standard std',
  'language lang',
  'average avg',
  'system sys',
  'iterator iter',
  'allocate alloc',
  'character char',
  'certificate cert',
  'calculate calc',
  'instance inst',
  'identifier id',
];

const abbreviationMaps = new Map<boolean, ReadonlyMap<string, string>>();

/** Each form of an abbreviation group (stemmed, derived when `derive`) -> the group's full word. */
export function abbreviationMap(derive: boolean): ReadonlyMap<string, string> {
  let map = abbreviationMaps.get(derive);
  if (map) return map;
  const out = new Map<string, string>();
  const norm = (w: string) => (derive ? deriveBase(stem(w)) : stem(w));
  for (const group of ABBREVIATION_GROUPS) {
    const [full, ...short] = group.split(' ');
    const canonical = norm(full);
    for (const w of [full, ...short]) if (!out.has(norm(w))) out.set(norm(w), canonical);
  }
  abbreviationMaps.set(derive, (map = out));
  return map;
}
