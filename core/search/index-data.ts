/**
 * The lexical index of a build as data: plain typed arrays over numbered terms and a few string
 * lists, everything core/search/lexical-index.ts searches with, computed once from the snippets
 * (at the end of a build) and written to a file as is (plugins/store-embedded/segment.ts).
 * openLexicalIndex (lexical-index.ts) searches it without rebuilding anything.
 */
import { buildBm25fData, type Bm25fData } from './bm25f.ts';
import type { Bm25Params, FieldName, IndexedSnippet } from './lexical-index.ts';
import { inlinkCounts, resolveSectionLinks } from './links.ts';
import { groupSections } from './sections.ts';
import { codeIdentifiers, stem, tokenize } from './tokenize.ts';
import { readPageWords } from './page-words.ts';
import { corpusSplitter } from './word-split.ts';

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

function ragged(lists: readonly ArrayLike<number>[]): Ragged {
  const start = new Int32Array(lists.length + 1);
  for (let i = 0; i < lists.length; i++) start[i + 1] = start[i] + lists[i].length;
  const items = new Int32Array(start[lists.length]);
  for (let i = 0; i < lists.length; i++) items.set(lists[i], start[i]);
  return { start, items };
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
    links: links.length > 0 ? ragged(links) : { start: new Int32Array(0), items: new Int32Array(0) },
    head: ragged(fieldNos[0]),
    code: ragged(fieldNos[2]),
    prose: ragged(fieldNos[3]),
    crumbs: { start: crumbStart, bytes: crumbBytes },
    parFirst: Int32Array.from(parents, (p) => p.sections[0]),
    parLast: Int32Array.from(parents, (p) => p.sections[p.sections.length - 1]),
    parDepth: Int32Array.from(parents, (p) => p.depth),
    parHead: ragged(parentFields[0]),
    own: ragged(own),
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
