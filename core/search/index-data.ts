/**
 * The lexical index of a build as data: plain typed arrays over numbered terms and a few string
 * lists, everything core/search/lexical-index.ts searches with, computed once from the snippets
 * (at the end of a build) and written to a file as is (plugins/store-embedded/segment.ts).
 * openLexicalIndex (lexical-index.ts) searches it without rebuilding anything.
 */
import { buildBm25fData, flatLists, buildBm25fDataFlat, type Bm25fData } from './bm25f.ts';
import type { Bm25Params, FieldName, IndexedSnippet } from './lexical-index.ts';
import { INLINE_LINK, inlinkCounts, isLinkList, resolveSectionLinks, type LinkSource } from './links.ts';
import { groupSections, sectionKey } from './sections.ts';
import { codeIdentifiers, stem, tokenize } from './tokenize.ts';
import { readPageWords } from './page-words.ts';
import { corpusSplitter, splitterOfCounts } from './word-split.ts';

export const FIELD_ORDER: readonly FieldName[] = ['heading', 'parents', 'code', 'prose', 'path', 'meta'];

/** Lists of numbers, one per item: item i is `items[start[i]..start[i+1]]`. */
export interface Ragged {
  start: Int32Array;
  /** Every item, list after list (empty when `row` reads them by list). */
  items: Int32Array;
  /** List k read on demand (a segment read by pages: plugins/store-embedded/segment.ts). */
  row?: (k: number) => Int32Array;
}

/**
 * A list of strings read by position: an array (an index computed in memory), or a table that
 * decodes the string asked for (a segment's dictionary and page paths, plugins/store-embedded/
 * segment.ts: opening a segment makes no string of them).
 */
export interface Words {
  readonly length: number;
  /** The string at `i` (0 <= i < length). */
  at(i: number): string | undefined;
}

/** A Words as an array (for code that walks every word; a segment's table decodes them all). */
export function wordArray(words: Words): string[] {
  if (Array.isArray(words)) return words as string[];
  return Array.from({ length: words.length }, (_, i) => words.at(i)!);
}

/** An index computed in memory: its dictionary and page paths are arrays. */
export type ComputedIndexData = IndexData & { terms: string[]; pagePaths: string[] };

export interface IndexData {
  /** Every word of the index, sorted (JavaScript string order); term numbers index it. */
  terms: Words;
  /** Snippet ids in snippet (document) order. */
  ids: Float64Array;
  /** Section k holds the snippets secStart[k]..secStart[k+1]-1 (sections are runs of snippets). */
  secStart: Int32Array;
  /** The file of each section (an index of pagePaths). */
  pageOf: Int32Array;
  pagePaths: Words;
  /** Sum of the tokens of each section's snippets. */
  secTokens: Float64Array;
  /** 1 for a section holding a code snippet (empty when codePrior is off). */
  hasCode: Uint8Array;
  /** Each section's in-link prior factor (empty when off or no links). */
  prior: Float64Array;
  /** Sections each section links to (empty start when linkWeight is off or there are no links). */
  links: Ragged;
  /** Section fields searched word by word (heading coverage, verbatim phrases): term numbers in order. */
  head: Ragged;
  code: Ragged;
  prose: Ragged;
  /** The heading path of each section's first snippet, JSON of a string array per section (UTF-8). */
  crumbs: { start: Int32Array; bytes: Uint8Array; row?: (k: number) => Uint8Array };
  /** Parent units: their first and last section and heading depth. */
  parFirst: Int32Array;
  parLast: Int32Array;
  parDepth: Int32Array;
  parHead: Ragged;
  /** Each snippet's own words, sorted term numbers (to order the snippets inside a section). */
  own: Ragged;
  bm25: Bm25fData;
  parentBm25: Bm25fData;
  /** The page-level index (n = 0 when pageFusion is off). */
  pageBm25: Bm25fData;
  /** Term numbers of the plain words (letters only), in order (empty when prefixWeight is off). */
  vocab: Int32Array;
}

/** The words of one snippet alone (its title and code names, or its prose). */
function memberWords(m: IndexedSnippet): string[] {
  return m.type === 'code' ? [...tokenize(m.title), ...codeIdentifiers(m.code)] : tokenize(m.content);
}

/** The token lists of one section's fields, in FIELD_ORDER. */
function sectionFields(members: readonly IndexedSnippet[]): string[][] {
  const first = members[0];
  const crumbs = first.breadcrumb.length > 0 ? first.breadcrumb : [first.pageTitle];
  const heading = tokenize(crumbs[crumbs.length - 1]);
  const parents = tokenize(crumbs.slice(0, -1).join(' \n '));
  const code: string[] = [];
  const prose: string[] = [];
  const info = members.filter((m) => m.type === 'info');
  for (const m of members) if (m.code) code.push(...codeIdentifiers(m.code));
  if (info.length > 0) for (const m of info) prose.push(...tokenize(m.content));
  else for (const d of new Set(members.map((m) => m.description))) prose.push(...tokenize(d));
  const path = tokenize(first.sourcePath.replace(/\.[a-z]+$/i, '').replace(/[/_-]/g, ' '));
  return [heading, parents, code, prose, path, []];
}

/**
 * The tokens with the halves of each split word after it, unless its parts follow it already
 * (the tokenizer gives `useState` as `usestate`, `use`, `state`).
 */
function withHalves(toks: readonly string[], split: (t: string) => readonly string[]): string[] {
  const out: string[] = [];
  toks.forEach((t, i) => {
    out.push(t);
    const halves = split(t);
    if (halves.length === 0) return;
    const next = toks.slice(i + 1, i + 1 + halves.length);
    if (halves.every((h, j) => next[j] === h || next[j] === stem(h))) return;
    for (const h of halves) out.push(h);
  });
  return out;
}

interface Parent {
  /** Indexes of its sections (consecutive). */
  sections: number[];
  depth: number;
}

/**
 * The parent sections of a build: for each heading path of at least `minDepth` headings, the run
 * of consecutive sections of one file under it, when that is more than one section or a section
 * deeper than the heading (a heading with no text of its own over one subsection).
 */
function findParents(sections: readonly number[][], snippets: readonly IndexedSnippet[], minDepth: number): Parent[] {
  const out: Parent[] = [];
  const open = new Map<string, Parent>();
  const deepest = new Map<Parent, number>();
  for (let k = 0; k < sections.length; k++) {
    const first = snippets[sections[k][0]];
    const crumbs = first.breadcrumb;
    for (let d = Math.max(1, minDepth); d <= crumbs.length; d++) {
      const key = parentKey(first.sourcePath, crumbs, d);
      const p = open.get(key);
      if (p && p.sections[p.sections.length - 1] === k - 1) {
        p.sections.push(k);
        deepest.set(p, Math.max(deepest.get(p)!, crumbs.length));
      } else {
        const np: Parent = { sections: [k], depth: d };
        open.set(key, np);
        deepest.set(np, crumbs.length);
        out.push(np);
      }
    }
  }
  return out.filter((p) => p.sections.length > 1 || deepest.get(p)! > p.depth);
}

/** The key of a parent unit: its file and the first `depth` headings of its path. */
export function parentKey(sourcePath: string, crumbs: readonly string[], depth: number): string {
  return sourcePath + '\u0000' + crumbs.slice(0, depth).join('\u0001') + '\u0002p';
}

/** Numbers words as they come; `finish` sorts the dictionary and renumbers every list made. */
class Dictionary {
  private readonly numbers = new Map<string, number>();
  private readonly lists: Int32Array[] = [];

  list(words: readonly string[]): Int32Array {
    const out = new Int32Array(words.length);
    for (let i = 0; i < words.length; i++) {
      let no = this.numbers.get(words[i]);
      if (no === undefined) this.numbers.set(words[i], (no = this.numbers.size));
      out[i] = no;
    }
    this.lists.push(out);
    return out;
  }

  /** A new list of numbers of this dictionary (copied from lists it made): renumbered by `finish` too. */
  adopt(numbers: readonly number[]): Int32Array {
    const out = Int32Array.from(numbers);
    this.lists.push(out);
    return out;
  }

  get size(): number {
    return this.numbers.size;
  }

  /** The sorted words; every list made is renumbered in place to match. */
  finish(): string[] {
    const words = [...this.numbers.keys()].sort();
    const renumber = new Int32Array(words.length);
    words.forEach((w, i) => (renumber[this.numbers.get(w)!] = i));
    for (const l of this.lists) for (let i = 0; i < l.length; i++) l[i] = renumber[l[i]];
    return words;
  }
}

export function computeIndexData(snippets: readonly IndexedSnippet[], params: Bm25Params): ComputedIndexData {
  const sections = groupSections(snippets);
  const fields: string[][][] = FIELD_ORDER.map(() => []);
  for (const members of sections) {
    const f = sectionFields(members.map((i) => snippets[i]));
    for (let k = 0; k < FIELD_ORDER.length; k++) fields[k].push(f[k]);
  }
  // A page's search words (front-matter keywords, tags, aliases: the description of an info
  // snippet, where the markdown chunker puts them) are a field of every section of the page.
  const META = FIELD_ORDER.indexOf('meta');
  // A page's front-matter summary (core/search/page-words.ts): words of the page as a whole,
  // searched in the page-level ranking only.
  const pageSummary = new Map<string, string[]>();
  if (params.fields.meta.weight > 0) {
    const pageWords = new Map<string, string[]>();
    for (const s of snippets)
      if (s.type === 'info' && s.description && !pageWords.has(s.sourcePath)) {
        const { words, summary } = readPageWords(s.description);
        pageWords.set(s.sourcePath, tokenize(words));
        if (summary) pageSummary.set(s.sourcePath, tokenize(summary));
      }
    sections.forEach((members, k) => {
      const words = pageWords.get(snippets[members[0]].sourcePath);
      if (words) fields[META][k] = words;
    });
  }
  // Identifiers written as one word get their halves beside them (headings, code, prose; of
  // sections, parents and pages alike).
  const split = params.splitWords ? corpusSplitter(fields[FIELD_ORDER.indexOf('prose')]) : undefined;
  if (split) for (let k = 0; k < 3; k++) fields[k] = fields[k].map((toks) => withHalves(toks, split));
  const words = (text: string) => (split ? withHalves(tokenize(text), split) : tokenize(text));
  const dict = new Dictionary();
  const fieldNos = fields.map((docs) => docs.map((toks) => dict.list(toks)));
  const resolved = params.linkWeight > 0 || params.inlinkPrior > 0 ? resolveSectionLinks(sections, snippets).targets : undefined;
  const hasLinks = resolved?.some((t) => t.length > 0) ?? false;
  const links = hasLinks && params.linkWeight > 0 ? resolved! : [];
  // Each section's prior factor from its in-links (absent: all 1).
  const prior =
    hasLinks && params.inlinkPrior > 0 ? Float64Array.from(inlinkCounts(sections, snippets, resolved!), (n) => 1 + params.inlinkPrior * Math.log1p(n)) : new Float64Array(0);
  const secTokens = Float64Array.from(sections, (m) => m.reduce((n, i) => n + (snippets[i].tokens ?? 0), 0));
  const parents =
    params.parentWeight > 0
      ? findParents(sections, snippets, params.parentMinDepth).filter(
          (p) => p.sections.reduce((n, k) => n + secTokens[k], 0) <= params.parentMaxTokens,
        )
      : [];
  const parentFields: Int32Array[][] = FIELD_ORDER.map(() => []);
  for (const p of parents) {
    const depth = p.depth;
    const crumbs = snippets[sections[p.sections[0]][0]].breadcrumb.slice(0, depth);
    parentFields[0].push(dict.list(words(crumbs[depth - 1])));
    parentFields[1].push(dict.list(words(crumbs.slice(0, -1).join(' \n '))));
    const code: number[] = [];
    const prose: number[] = [];
    for (const sec of p.sections) {
      const below = snippets[sections[sec][0]].breadcrumb;
      if (below.length > depth) for (const t of dict.list(words(below.slice(depth).join(' \n ')))) prose.push(t);
      for (const t of fieldNos[2][sec]) code.push(t);
      for (const t of fieldNos[3][sec]) prose.push(t);
    }
    parentFields[2].push(dict.adopt(code));
    parentFields[3].push(dict.adopt(prose));
    parentFields[4].push(fieldNos[4][p.sections[0]]);
    parentFields[META].push(fieldNos[META][p.sections[0]]);
  }
  // The sections holding a code snippet (codePrior; empty when off).
  const hasCode = params.codePrior > 0 ? Uint8Array.from(sections, (m) => (m.some((i) => snippets[i].type === 'code') ? 1 : 0)) : new Uint8Array(0);

  // Each snippet's own words, to order the snippets inside a section.
  const own: Int32Array[] = new Array(snippets.length);
  const ownWords: Int32Array[] = new Array(snippets.length);
  for (const members of sections) {
    for (const i of members) {
      own[i] = new Int32Array(0);
      if (members.length === 1 && parents.length === 0) continue;
      ownWords[i] = dict.list(memberWords(snippets[i]));
    }
  }

  // The file of each section, so only sections of one file are neighbours.
  const pageOf = new Int32Array(sections.length);
  const pageIndex = new Map<string, number>();
  sections.forEach((members, k) => {
    const path = snippets[members[0]].sourcePath;
    if (!pageIndex.has(path)) pageIndex.set(path, pageIndex.size);
    pageOf[k] = pageIndex.get(path)!;
  });

  // The page-level ranking fused with the units' (pageFusion).
  const pf: Array<Array<ArrayLike<number>>> = FIELD_ORDER.map(() => []);
  if (params.pageFusion > 0) {
    const grow: number[][][] = FIELD_ORDER.map(() => []);
    sections.forEach((members, k) => {
      const pg = pageOf[k];
      const first = snippets[members[0]];
      if (grow[0].length <= pg) {
        grow[0].push(Array.from(dict.list(words(first.pageTitle || first.breadcrumb[0] || ''))));
        for (let f = 1; f < FIELD_ORDER.length; f++) grow[f].push([]);
        grow[4][pg] = Array.from(fieldNos[4][k]);
        // The page's search words (front matter) are the same for each of its sections.
        grow[META][pg] = Array.from(fieldNos[META][k]);
        const summary = pageSummary.get(first.sourcePath);
        if (summary) for (const t of dict.list(summary)) grow[META][pg].push(t);
      }
      if (first.breadcrumb.length > 1) for (const t of dict.list(words(first.breadcrumb.slice(1).join(' \n ')))) grow[1][pg].push(t);
      for (const t of fieldNos[2][k]) grow[2][pg].push(t);
      for (const t of fieldNos[3][k]) grow[3][pg].push(t);
    });
    for (let f = 0; f < FIELD_ORDER.length; f++) pf[f] = grow[f].map((l) => dict.adopt(l));
  }

  // Every word is numbered now: sort the dictionary (every list made is renumbered).
  const terms = dict.finish();
  const weights = FIELD_ORDER.map((f) => params.fields[f]);
  const bm25 = buildBm25fData(fieldNos, weights, params.k1, terms.length);
  const parentBm25 = buildBm25fData(parentFields, weights, params.k1, terms.length);
  const pageBm25 = buildBm25fData(params.pageFusion > 0 ? pf : FIELD_ORDER.map(() => []), weights, params.k1, terms.length);
  for (const members of sections) for (const i of members) if (ownWords[i]) own[i] = Int32Array.from(new Set(ownWords[i])).sort();

  const vocab: number[] = [];
  if (params.prefixWeight > 0) {
    // The plain words of the sections' fields (not of parents' or pages' extra headings).
    const inFields = new Uint8Array(terms.length);
    for (const docs of fieldNos) for (const toks of docs) for (const t of toks) inFields[t] = 1;
    terms.forEach((w, t) => {
      if (inFields[t] && /^[a-z]+$/.test(w)) vocab.push(t);
    });
  }
  const encoder = new TextEncoder();
  const crumbLists = sections.map((m) => encoder.encode(JSON.stringify(snippets[m[0]].breadcrumb)));
  const crumbStart = new Int32Array(sections.length + 1);
  crumbLists.forEach((b, k) => (crumbStart[k + 1] = crumbStart[k] + b.length));
  const crumbBytes = new Uint8Array(crumbStart[sections.length]);
  crumbLists.forEach((b, k) => crumbBytes.set(b, crumbStart[k]));
  return {
    terms,
    ids: Float64Array.from(snippets, (s) => s.id),
    secStart: Int32Array.from([...sections.map((m) => m[0]), snippets.length]),
    pageOf,
    pagePaths: [...pageIndex.keys()],
    secTokens,
    hasCode,
    prior,
    links: links.length > 0 ? flatLists(links) : { start: new Int32Array(0), items: new Int32Array(0) },
    head: flatLists(fieldNos[0]),
    code: flatLists(fieldNos[2]),
    prose: flatLists(fieldNos[3]),
    crumbs: { start: crumbStart, bytes: crumbBytes },
    parFirst: Int32Array.from(parents, (p) => p.sections[0]),
    parLast: Int32Array.from(parents, (p) => p.sections[p.sections.length - 1]),
    parDepth: Int32Array.from(parents, (p) => p.depth),
    parHead: flatLists(parentFields[0]),
    own: flatLists(own),
    bm25,
    parentBm25,
    pageBm25,
    vocab: Int32Array.from(vocab),
  };
}

/**
 * The position of a snippet id in `ids`, or -1: a binary search when the ids ascend (as
 * computeIndexData makes them), else a map built on first use.
 */
export function positionFinder(ids: ArrayLike<number>): (id: number) => number {
  let ascending = true;
  for (let i = 1; i < ids.length && ascending; i++) ascending = ids[i] > ids[i - 1];
  let byId: Map<number, number> | undefined;
  return (id: number): number => {
    if (!ascending) {
      byId ??= new Map(Array.from(ids, (v, i) => [v, i]));
      return byId.get(id) ?? -1;
    }
    let lo = 0;
    let hi = ids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (ids[mid] === id) return mid;
      if (ids[mid] < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  };
}

// ---------------------------------------------------------------------------------------------
// The same index, computed from the snippets as a stream (issue 17: builds in bounded memory)
// ---------------------------------------------------------------------------------------------

/** One pass over a build's snippets, in order (a file read again for each pass, or an array). */
export type SnippetPass = (visit: (s: IndexedSnippet) => void) => void;

/** A growable typed array. */
class Grow<T extends Int32Array | Float64Array | Uint8Array> {
  n = 0;
  constructor(
    public a: T,
    private readonly make: (n: number) => T,
  ) {}

  push(v: number): void {
    if (this.n === this.a.length) this.reserve(this.n + 1);
    this.a[this.n++] = v;
  }

  pushAll(src: ArrayLike<number>, lo = 0, hi = src.length): void {
    const len = hi - lo;
    if (len <= 0) return;
    this.reserve(this.n + len);
    if (ArrayBuffer.isView(src)) this.a.set((src as unknown as T).subarray(lo, hi), this.n);
    else for (let i = lo; i < hi; i++) this.a[this.n + i - lo] = src[i];
    this.n += len;
  }

  reserve(min: number): void {
    if (min <= this.a.length) return;
    let cap = Math.max(16, this.a.length * 2);
    while (cap < min) cap *= 2;
    const b = this.make(cap);
    b.set(this.a.subarray(0, this.n) as never);
    this.a = b;
  }

  /**
   * The values, trimmed; the builder lets its array go (it is empty after: the pass's closure
   * keeps the builders as long as the build runs).
   */
  done(): T {
    const out = this.a.slice(0, this.n) as T;
    this.a = this.make(0);
    this.n = 0;
    return out;
  }
}
const ints = () => new Grow(new Int32Array(1024), (n) => new Int32Array(n));
const floats = () => new Grow(new Float64Array(1024), (n) => new Float64Array(n));
const bytes = () => new Grow(new Uint8Array(4096), (n) => new Uint8Array(n));

/** Lists appended one after another (a Ragged being made). */
class Rows {
  readonly items = ints();
  readonly start = ints();
  constructor() {
    this.start.push(0);
  }
  get rows(): number {
    return this.start.n - 1;
  }
  /** Ends the list being appended. */
  end(): void {
    this.start.push(this.items.n);
  }
  add(list: ArrayLike<number>, lo = 0, hi = list.length): void {
    this.items.pushAll(list, lo, hi);
    this.end();
  }
  lo(k: number): number {
    return this.start.a[k];
  }
  hi(k: number): number {
    return this.start.a[k + 1];
  }
  done(): { start: Int32Array; items: Int32Array } {
    return { start: this.start.done(), items: this.items.done() };
  }
}

/** Numbers words as they come, keeps each number's word; `finish` keeps the words in use, sorted. */
class WordNumbers {
  private readonly numbers = new Map<string, number>();
  readonly words: string[] = [];

  no(word: string): number {
    let no = this.numbers.get(word);
    if (no === undefined) {
      no = this.words.length;
      this.numbers.set(word, no);
      this.words.push(word);
    }
    return no;
  }

  find(word: string): number {
    return this.numbers.get(word) ?? -1;
  }

  list(words: readonly string[]): Int32Array {
    const out = new Int32Array(words.length);
    for (let i = 0; i < words.length; i++) out[i] = this.no(words[i]);
    return out;
  }

  /**
   * The words some kept list holds, sorted, and the renumbering of every number (-1: a word no
   * kept list holds, such as a word only of a snippet whose own words are dropped).
   */
  finish(kept: readonly Int32Array[]): { terms: string[]; renumber: Int32Array } {
    const used = new Uint8Array(this.words.length);
    for (const l of kept) for (let i = 0; i < l.length; i++) used[l[i]] = 1;
    const order: number[] = [];
    for (let t = 0; t < used.length; t++) if (used[t]) order.push(t);
    // The default sort of the words themselves (UTF-16 order), as Dictionary.finish.
    const words = this.words;
    order.sort((x, y) => (words[x] < words[y] ? -1 : words[x] > words[y] ? 1 : 0));
    const renumber = new Int32Array(this.words.length).fill(-1);
    const terms = order.map((t, i) => {
      renumber[t] = i;
      return words[t];
    });
    this.numbers.clear();
    return { terms, renumber };
  }
}

const EMPTY = new Int32Array(0);

/**
 * computeIndexData over a stream of the snippets: one pass (`eachSnippet` is called once) that
 * holds one section's snippets at a time and keeps every token list as term numbers in flat
 * typed arrays (no snippet object, no string per token), then the parts that need the whole
 * build (the word splitter's counts, parents, pages, links, the dictionary's order) from those.
 * The same IndexData to the bit as computeIndexData of the same snippets.
 */
export function computeIndexDataStreamed(eachSnippet: SnippetPass, params: Bm25Params): ComputedIndexData {
  const dict = new WordNumbers();
  const ids = floats();
  const secFirst = ints();
  const pageOf = ints();
  const pageIndex = new Map<string, number>();
  const pageTitles: string[] = [];
  const secTokens = floats();
  const hasCode = bytes();
  const crumbBytes = bytes();
  const crumbStart = ints();
  crumbStart.push(0);
  // Section fields in FIELD_ORDER but meta (a page's), heading, parents and code before the split.
  const raw = [new Rows(), new Rows(), new Rows()];
  const proseRows = new Rows();
  const pathRows = new Rows();
  const proseDf = ints();
  const own = new Rows();
  /** Per snippet: 1 when it is its section's only snippet (its own words are kept only with parents). */
  const alone = bytes();
  const META = FIELD_ORDER.indexOf('meta');
  const withMeta = params.fields.meta.weight > 0;
  const pageMeta: Array<Int32Array | undefined> = [];
  const pageSummary: Array<string[] | undefined> = [];
  const withLinks = params.linkWeight > 0 || params.inlinkPrior > 0;
  const anchors: Array<string | undefined> = [];
  const linkUrls = new Map<number, string[]>();
  // Parents (findParents, without its map of every key): the parent each key of the previous
  // section was added to.
  const withParents = params.parentWeight > 0;
  const parFirst = ints();
  const parLast = ints();
  const parDepth = ints();
  const parDeepest = ints();
  let prevOpen = new Map<string, number>();
  const encoder = new TextEncoder();

  let members: IndexedSnippet[] = [];
  let prevKey = '';
  let count = 0;
  const closeSection = () => {
    const k = secFirst.n;
    const first = members[0];
    secFirst.push(count - members.length);
    let pg = pageIndex.get(first.sourcePath);
    if (pg === undefined) {
      pg = pageIndex.size;
      pageIndex.set(first.sourcePath, pg);
      pageTitles.push(first.pageTitle || first.breadcrumb[0] || '');
      pageMeta.push(undefined);
      pageSummary.push(undefined);
    }
    pageOf.push(pg);
    secTokens.push(members.reduce((n, m) => n + (m.tokens ?? 0), 0));
    hasCode.push(members.some((m) => m.type === 'code') ? 1 : 0);
    const crumbs = encoder.encode(JSON.stringify(first.breadcrumb));
    crumbBytes.pushAll(crumbs);
    crumbStart.push(crumbBytes.n);
    const f = sectionFields(members);
    for (let i = 0; i < 3; i++) raw[i].add(dict.list(f[i]));
    const prose = dict.list(f[3]);
    proseRows.add(prose);
    pathRows.add(dict.list(f[4]));
    for (const t of new Set(prose)) {
      proseDf.reserve(t + 1);
      if (proseDf.n <= t) proseDf.n = t + 1;
      proseDf.a[t]++;
    }
    for (const m of members) {
      own.add(Int32Array.from(new Set(dict.list(memberWords(m)))));
      alone.push(members.length === 1 ? 1 : 0);
      if (withMeta && m.type === 'info' && m.description && pageMeta[pg] === undefined) {
        const { words, summary } = readPageWords(m.description);
        pageMeta[pg] = dict.list(tokenize(words));
        if (summary) pageSummary[pg] = tokenize(summary);
      }
    }
    if (withLinks) {
      anchors.push(first.anchor);
      const urls: string[] = [];
      for (const m of members) {
        if (m.type !== 'info' || !m.content.includes('](')) continue;
        for (const match of m.content.matchAll(INLINE_LINK)) if (!match[1]) urls.push(match[3]);
      }
      // A list of links keeps none (resolveSectionLinks clears them).
      if (urls.length > 0 && !isLinkList(members)) linkUrls.set(k, urls);
    }
    if (withParents) {
      const open = new Map<string, number>();
      const depth = first.breadcrumb.length;
      for (let d = Math.max(1, params.parentMinDepth); d <= depth; d++) {
        const key = parentKey(first.sourcePath, first.breadcrumb, d);
        const p = open.has(key) ? undefined : prevOpen.get(key);
        if (p !== undefined) {
          parLast.a[p] = k;
          parDeepest.a[p] = Math.max(parDeepest.a[p], depth);
          open.set(key, p);
        } else {
          open.set(key, parFirst.n);
          parFirst.push(k);
          parLast.push(k);
          parDepth.push(d);
          parDeepest.push(depth);
        }
      }
      prevOpen = open;
    }
    members = [];
  };
  eachSnippet((s) => {
    const key = sectionKey(s);
    if (count > 0 && key !== prevKey) closeSection();
    prevKey = key;
    members.push(s);
    ids.push(s.id);
    count++;
  });
  if (members.length > 0) closeSection();
  const sections = secFirst.n;
  const pagePaths = [...pageIndex.keys()];
  const crumbStarts = crumbStart.done();
  const crumbAll = crumbBytes.done();
  const decoder = new TextDecoder();
  const breadcrumbOf = (k: number): string[] => JSON.parse(decoder.decode(crumbAll.subarray(crumbStarts[k], crumbStarts[k + 1])));

  // The word splitter, from each plain prose word's count of sections.
  let split: ((t: string) => readonly string[]) | undefined;
  if (params.splitWords) {
    const df = new Map<string, number>();
    for (let t = 0; t < proseDf.n; t++) if (proseDf.a[t] > 0 && /^[a-z]+$/.test(dict.words[t])) df.set(dict.words[t], proseDf.a[t]);
    split = splitterOfCounts(df);
  }
  const words = (text: string) => (split ? withHalves(tokenize(text), split) : tokenize(text));
  // Headings, parents and code with the halves of split words (withHalves over term numbers).
  const fieldRows: Rows[] = [...raw, proseRows, pathRows];
  if (split) {
    const halves: Array<Int32Array | undefined> = [];
    const stems: Array<Int32Array | undefined> = [];
    const halvesOf = (t: number) => {
      let h = halves[t];
      if (h === undefined) {
        const parts = split(dict.words[t]);
        h = parts.length === 0 ? EMPTY : Int32Array.from(parts, (w) => dict.no(w));
        halves[t] = h;
        stems[t] = Int32Array.from(parts, (w) => dict.find(stem(w)));
      }
      return h;
    };
    for (let f = 0; f < 3; f++) {
      const from = raw[f];
      const to = new Rows();
      const items = from.items.a;
      for (let k = 0; k < from.rows; k++) {
        const lo = from.lo(k);
        const hi = from.hi(k);
        for (let i = lo; i < hi; i++) {
          const t = items[i];
          to.items.push(t);
          const h = halvesOf(t);
          if (h.length === 0) continue;
          const st = stems[t]!;
          let follow = true;
          for (let j = 0; j < h.length && follow; j++) {
            const at = i + 1 + j;
            follow = at < hi && (items[at] === h[j] || items[at] === st[j]);
          }
          if (!follow) to.items.pushAll(h);
        }
        to.end();
      }
      fieldRows[f] = to;
    }
  }
  raw.length = 0;
  const secFields = fieldRows.map((r) => r.done());
  fieldRows.length = 0;
  // The meta field of each section: its page's search words.
  const metaRows = new Rows();
  const pageOfs = pageOf.done();
  for (let k = 0; k < sections; k++) metaRows.add((withMeta && pageMeta[pageOfs[k]]) || EMPTY);
  secFields.splice(META, 0, metaRows.done());
  const row = (r: { start: Int32Array; items: Int32Array }, k: number) => r.items.subarray(r.start[k], r.start[k + 1]);

  // Links between sections (resolveSectionLinks over one stand-in snippet a section, and one
  // holding its links' targets when it has any).
  let links: Int32Array[] = [];
  let prior = new Float64Array(0);
  if (withLinks && linkUrls.size > 0) {
    const heads: LinkSource[] = [];
    const groups: number[][] = [];
    for (let k = 0; k < sections; k++) {
      const sourcePath = pagePaths[pageOfs[k]];
      let crumbs: string[] | undefined;
      const head: LinkSource = {
        type: 'code',
        content: '',
        sourcePath,
        anchor: anchors[k],
        get breadcrumb() {
          return (crumbs ??= breadcrumbOf(k));
        },
      };
      groups.push([heads.length]);
      heads.push(head);
      const urls = linkUrls.get(k);
      if (urls) {
        groups[k].push(heads.length);
        heads.push({ type: 'info', content: urls.map((u) => `[](<${u}>)`).join(' '), sourcePath, breadcrumb: [] });
      }
    }
    const resolved = resolveSectionLinks(groups, heads).targets;
    const hasLinks = resolved.some((t) => t.length > 0);
    if (hasLinks && params.linkWeight > 0) links = resolved;
    if (hasLinks && params.inlinkPrior > 0) prior = Float64Array.from(inlinkCounts(groups, heads, resolved), (n) => 1 + params.inlinkPrior * Math.log1p(n));
  }
  linkUrls.clear();
  anchors.length = 0;

  // Parent units, with their fields.
  const tokens = secTokens.done();
  const parents: Array<{ first: number; last: number; depth: number }> = [];
  for (let p = 0; p < parFirst.n; p++) {
    const first = parFirst.a[p];
    const last = parLast.a[p];
    const depth = parDepth.a[p];
    if (!(last > first || parDeepest.a[p] > depth)) continue;
    let sum = 0;
    for (let k = first; k <= last; k++) sum += tokens[k];
    if (sum <= params.parentMaxTokens) parents.push({ first, last, depth });
  }
  const parentRows = FIELD_ORDER.map(() => new Rows());
  for (const p of parents) {
    const crumbs = breadcrumbOf(p.first).slice(0, p.depth);
    parentRows[0].add(dict.list(words(crumbs[p.depth - 1])));
    parentRows[1].add(dict.list(words(crumbs.slice(0, -1).join(' \n '))));
    for (let k = p.first; k <= p.last; k++) {
      const c = row(secFields[2], k);
      parentRows[2].items.pushAll(c);
      const below = breadcrumbOf(k);
      if (below.length > p.depth) parentRows[3].items.pushAll(dict.list(words(below.slice(p.depth).join(' \n '))));
      parentRows[3].items.pushAll(row(secFields[3], k));
    }
    parentRows[2].end();
    parentRows[3].end();
    parentRows[4].add(row(secFields[4], p.first));
    parentRows[META].add(row(secFields[META], p.first));
  }
  const parentFields = parentRows.map((r) => r.done());
  parentRows.length = 0;

  // Each snippet's own words (kept for sections of several snippets, or for all when there are parents).
  const ownData = own.done();
  const aloneFlags = alone.done();
  const ownStart = new Int32Array(count + 1);
  for (let i = 0; i < count; i++) ownStart[i + 1] = ownStart[i] + (parents.length > 0 || !aloneFlags[i] ? ownData.start[i + 1] - ownData.start[i] : 0);
  const ownItems = new Int32Array(ownStart[count]);
  for (let i = 0; i < count; i++) if (ownStart[i + 1] > ownStart[i]) ownItems.set(row(ownData, i), ownStart[i]);
  const ownRows = { start: ownStart, items: ownItems };

  // The page-level fields (pageFusion).
  const pages = pagePaths.length;
  const pageFields: Array<{ start: Int32Array; items: Int32Array }> = FIELD_ORDER.map(() => ({ start: new Int32Array(1), items: EMPTY }));
  if (params.pageFusion > 0) {
    const belowFirst = new Rows();
    for (let k = 0; k < sections; k++) {
      const crumbs = breadcrumbOf(k);
      belowFirst.add(crumbs.length > 1 ? dict.list(words(crumbs.slice(1).join(' \n '))) : EMPTY);
    }
    const below = belowFirst.done();
    const one = [new Rows(), undefined, undefined, undefined, new Rows(), new Rows()];
    let seenPages = 0;
    for (let k = 0; k < sections; k++) {
      if (pageOfs[k] < seenPages) continue;
      const pg = seenPages++;
      one[0]!.add(dict.list(words(pageTitles[pg])));
      one[4]!.add(row(secFields[4], k));
      one[5]!.items.pushAll(row(secFields[META], k));
      const summary = pageSummary[pg];
      if (summary) one[5]!.items.pushAll(dict.list(summary));
      one[5]!.end();
    }
    for (const f of [0, 4, 5]) pageFields[f] = one[f]!.done();
    // Fields 1 - 3: each section's list appended to its page's, in section order.
    const sources = [below, secFields[2], secFields[3]];
    for (let s = 0; s < 3; s++) {
      const src = sources[s];
      const start = new Int32Array(pages + 1);
      for (let k = 0; k < sections; k++) start[pageOfs[k] + 1] += src.start[k + 1] - src.start[k];
      for (let pg = 0; pg < pages; pg++) start[pg + 1] += start[pg];
      const items = new Int32Array(start[pages]);
      const at = start.slice(0, pages);
      for (let k = 0; k < sections; k++) {
        const list = row(src, k);
        items.set(list, at[pageOfs[k]]);
        at[pageOfs[k]] += list.length;
      }
      pageFields[s + 1] = { start, items };
    }
  }

  // Every word is numbered: keep the words in use, sorted, and renumber every kept list.
  let kept = [...secFields, ...parentFields, ...(params.pageFusion > 0 ? pageFields : []), ownRows].map((r) => r.items);
  const { terms, renumber } = dict.finish(kept);
  dict.words.length = 0;
  for (const l of kept) for (let i = 0; i < l.length; i++) l[i] = renumber[l[i]];
  kept = [];
  // The pages' view first, then the parents', each view's fields let go once it is made (all
  // but the parents' headings): the postings of the next view take their place.
  const weights = FIELD_ORDER.map((f) => params.fields[f]);
  const pageBm25 = buildBm25fDataFlat(params.pageFusion > 0 ? pageFields : FIELD_ORDER.map(() => ({ start: new Int32Array(1), items: EMPTY })), weights, params.k1, terms.length);
  pageFields.length = 0;
  const parentBm25 = buildBm25fDataFlat(parentFields, weights, params.k1, terms.length);
  const parHead = parentFields[0];
  parentFields.length = 0;
  const bm25 = buildBm25fDataFlat(secFields, weights, params.k1, terms.length);
  for (let i = 0; i < count; i++) ownItems.subarray(ownStart[i], ownStart[i + 1]).sort();

  const vocab: number[] = [];
  if (params.prefixWeight > 0) {
    const inFields = new Uint8Array(terms.length);
    for (const r of secFields) for (let i = 0; i < r.items.length; i++) inFields[r.items[i]] = 1;
    terms.forEach((w, t) => {
      if (inFields[t] && /^[a-z]+$/.test(w)) vocab.push(t);
    });
  }
  const secStart = new Int32Array(sections + 1);
  secStart.set(secFirst.a.subarray(0, sections));
  secStart[sections] = count;
  return {
    terms,
    ids: ids.done(),
    secStart,
    pageOf: pageOfs,
    pagePaths,
    secTokens: tokens,
    hasCode: params.codePrior > 0 ? hasCode.done() : new Uint8Array(0),
    prior,
    links: links.length > 0 ? flatLists(links) : { start: new Int32Array(0), items: new Int32Array(0) },
    head: secFields[0],
    code: secFields[2],
    prose: secFields[3],
    crumbs: { start: crumbStarts, bytes: crumbAll },
    parFirst: Int32Array.from(parents, (p) => p.first),
    parLast: Int32Array.from(parents, (p) => p.last),
    parDepth: Int32Array.from(parents, (p) => p.depth),
    parHead,
    own: ownRows,
    bm25,
    parentBm25,
    pageBm25,
    vocab: Int32Array.from(vocab),
  };
}
