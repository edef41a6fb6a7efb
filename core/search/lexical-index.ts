/**
 * The lexical index of a build: BM25F over documentation sections.
 *
 * The unit ranked is the section (the snippets a chunker made of one heading: its prose and its
 * code together), seen through weighted fields: the section's own heading, the headings above
 * it (page title, parents), the identifiers of its code, its prose, and its file path. A
 * question usually names what a whole section is about, and a section answers it whole.
 * Search returns the snippets of the best sections, every snippet of a section with the
 * section's score, sections best first and, inside a section, the snippets that hold more of the
 * question's words first.
 */
import type { Snippet } from '../contracts.ts';
import { DEFAULT_BRIDGE, HeadingBridge, type BridgeOptions } from './bridge.ts';
import { accumulateBm25f, scoreDocsBm25f, topBm25f, TopKScratch, wholePostings, type Bm25fData, type FieldWeight } from './bm25f.ts';
import { computeIndexData, parentKey, positionFinder, wordArray, type IndexData, type Ragged, type Words } from './index-data.ts';
import { expandQuery, HOW_TO, questionWords, SYNONYMS, type ExpansionContext, type WeightedTerm } from './query-terms.ts';
import { boostPhrases, coverHeadings, headNorms, liftLinked, liftNeighbours, run, sortedHas } from './section-scores.ts';
import { sectionKey } from './sections.ts';
import { fuseWithPages, growRun, runPath, UnitBuffer, type RunContext } from './units.ts';

export interface IndexedSnippet
  extends Pick<Snippet, 'type' | 'title' | 'description' | 'code' | 'content' | 'breadcrumb' | 'pageTitle' | 'sourcePath' | 'anchor'> {
  id: number;
  /** Size estimate; parent sections larger than `parentMaxTokens` are not made units. */
  tokens?: number;
}

/** A parent section returned as one unit: the key that groups its snippets and its heading path. */
export interface UnitRef {
  key: string;
  breadcrumb: readonly string[];
}

export interface LexicalIndex {
  readonly size: number;
  /**
   * Best first; at most `limit` results; ids are the snippets' ids. A result with `unit` belongs
   * to a parent section (a heading with all its subsections) answered as one unit.
   */
  search(query: string, limit: number): Array<{ id: number; score: number; unit?: UnitRef }>;
  /**
   * The section key (core/search/sections.ts sectionKey: file and heading path) of the snippet
   * with this id, from the index alone (no snippet read); undefined for an id it does not hold.
   */
  sectionKeyOf(id: number): string | undefined;
  /** What the last search did (operation counts). */
  lastSearch?(): SearchStats;
  /** The last search's parents' and pages' BM25F scores (opened with `record`; for tests). */
  lastScores?(): LastScores | undefined;
}

/** The sections a search scored, and the BM25F score of each parent and page it scored (by number). */
export interface LastScores {
  sections: number[];
  parents: Map<number, number>;
  pages: Map<number, number>;
}

export type FieldName = 'heading' | 'parents' | 'code' | 'prose' | 'path' | 'meta';

export interface Bm25Params {
  k1: number;
  fields: Record<FieldName, FieldWeight>;
  /** Share of the better adjacent section's score (same file) added to a section's score. */
  neighbourWeight: number;
  /** Bonus for a section whose own heading the question covers (share of its heading words, idf-weighted). */
  headingCoverage: number;
  /** Each question term weighs idf^idfPower (1 = plain BM25); above 1 rare words count more. */
  idfPower: number;
  /** Drop the question's filler words (QUESTION_FILLERS) before searching. */
  dropFillers: boolean;
  /** Weight (relative to the asked word) of the general synonyms added to a question. 0 = off. */
  synonymWeight: number;
  /**
   * Parent sections (a heading with the text of all its subsections) are ranked too, their score
   * times this weight, and answered as one unit in place of their children. 0 = off.
   */
  parentWeight: number;
  /** Shallowest heading-path depth made a parent unit (1 = the whole page, 2 = its H2s). */
  parentMinDepth: number;
  /**
   * Largest parent unit (sum of its snippets' tokens): a bigger one would be cut down in the
   * answer to parts spread over its span, so its children are answered instead.
   */
  parentMaxTokens: number;
  /**
   * A unit taken into the answer grows over the adjacent sections of its file that score at
   * least this share of its score (whole sections, while the run stays within
   * `mergeMaxTokens`), so the explanation, its example and the option next to it come as one
   * contiguous snippet. 0 = off.
   */
  mergeRatio: number;
  mergeMaxTokens: number;
  /**
   * A question word the index does not hold (a spelling or derivation the docs never use:
   * "configurable" where they say "configure") is searched as the index's words sharing its
   * longest prefix (at least `prefixMinLength` letters, or all of the shorter word), at this
   * weight. 0 = off.
   */
  prefixWeight: number;
  prefixMinLength: number;
  /**
   * Rank fusion with a page-level ranking (BM25F over whole pages: the page title as heading,
   * its other headings, all its code and prose, its path; the pages' own field averages and
   * idf): the best `fusionDepth` units are re-ordered by 1 / (fusionK + unit rank) +
   * pageFusion / (fusionK + the rank of the unit's page among pages), ranks from 1. A section of
   * the page about the question's subject as a whole overtakes a slightly better lone match on
   * a page about something else. The units keep their own scores for growing; the answer's
   * scores keep the unit ranking's values in order (the r-th unit gets the r-th best score), so
   * its cut-off works as before. 0 = off (and the page index not built).
   */
  pageFusion: number;
  fusionK: number;
  fusionDepth: number;
  /**
   * Hyperlinks (core/search/links.ts): a section that a link of one of the `linkSources` best
   * sections points at (a section of another page, by path and anchor; a page link reaches the
   * page's first section) gains this share of the linking section's score, up to that score and
   * not above it; of several linking sections, the best lift counts. 0 = off (links not read).
   */
  linkWeight: number;
  linkSources: number;
  /**
   * A static prior from the same links: a section's score is multiplied by
   * 1 + inlinkPrior x ln(1 + the number of other files linking to it), so of sections matching
   * alike, the one the library's own pages send readers to comes first (in-degree as authority,
   * as in web search; link lists are not counted). 0 = off.
   */
  inlinkPrior: number;
  /**
   * Verbatim phrases (core/search/phrases.ts: the question's quoted text and error messages):
   * of the `PHRASE_CANDIDATES` best sections, one holding a run of at least `phraseMinTokens`
   * consecutive words of such a phrase, and at least half of it, in its heading, prose or code
   * has its score multiplied by 1 + phraseWeight x (the run's share of the phrase). A pasted
   * error message found word for word names the section about it. 0 = off.
   */
  phraseWeight: number;
  phraseMinTokens: number;
  /**
   * A section holding a code snippet scores x (1 + codePrior) (before the neighbour and link
   * lifts, like the in-link prior): of sections matching alike, the one with an example comes
   * first. 0 = off.
   */
  codePrior: number;
  /** Apply codePrior only when the question asks how to do something ("how do I", "how to"). */
  codePriorHowTo: boolean;
  /**
   * Words written as one (`urlretrieve`, `filename`) are indexed with their halves too, cut
   * where both are words of the library's own prose (core/search/word-split.ts). false = off.
   */
  splitWords: boolean;
  /**
   * Vocabulary bridging from the library's own text (core/search/bridge.ts): each asked word
   * adds the heading words of the sections that use it (a reference entry's name from the words
   * of its description) at this weight times their association strength. 0 = off.
   */
  bridgeWeight: number;
  bridge: BridgeOptions;
}

export const DEFAULT_BM25: Bm25Params = {
  k1: 1.2,
  fields: {
    heading: { weight: 3, b: 0.4 },
    parents: { weight: 1.5, b: 0.4 },
    code: { weight: 1, b: 0.75 },
    prose: { weight: 1, b: 0.75 },
    path: { weight: 0.5, b: 0.3 },
    meta: { weight: 1, b: 0 },
  },
  neighbourWeight: 0.15,
  headingCoverage: 0.2,
  idfPower: 0.7,
  dropFillers: true,
  synonymWeight: 0.5,
  parentWeight: 0.9,
  parentMinDepth: 1,
  parentMaxTokens: 800,
  mergeRatio: 0.35,
  mergeMaxTokens: 800,
  prefixWeight: 0.7,
  prefixMinLength: 5,
  pageFusion: 0.5,
  fusionK: 5,
  fusionDepth: 150,
  linkWeight: 0.7,
  linkSources: 10,
  inlinkPrior: 0.03,
  phraseWeight: 1,
  phraseMinTokens: 3,
  codePrior: 0.03,
  codePriorHowTo: true,
  splitWords: true,
  bridgeWeight: 0,
  bridge: DEFAULT_BRIDGE,
};

/** The number of a word in a sorted dictionary, or -1. */
export function termNumber(terms: Words, word: string): number {
  let lo = 0;
  let hi = terms.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const t = terms.at(mid)!;
    if (t === word) return mid;
    if (t < word) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export function buildLexicalIndex(snippets: readonly IndexedSnippet[], params: Bm25Params = DEFAULT_BM25): LexicalIndex {
  return openLexicalIndex(computeIndexData(snippets, params), params);
}

type Hit = { id: number; score: number; unit?: UnitRef };

/**
 * Candidate generation for very large indexes. Below `minSections` sections every section,
 * parent and page a question's words touch is scored (the full pipeline: heading coverage,
 * phrases, priors, neighbour and link lifts, page fusion see every touched score). At or above
 * it, the sections' BM25F keeps only the `sections` best sections, found by MaxScore
 * (core/search/bm25f.ts topBm25f: the same scores to the bit as the exhaustive sum, without
 * walking every posting), and the rest of the pipeline runs over those candidates only: heading
 * coverage, phrases, priors and the lifts over the candidate sections, then the parents' and
 * the pages' BM25F only for the parents and pages of the sections scored so far (the candidates
 * and the sections the lifts touched; bm25f.ts scoreDocsBm25f: each one's exhaustive score to the
 * bit, looked up in the term lists instead of walking them). The answers of indexes below the
 * threshold are unchanged; above it, a section outside the candidates that a later step would
 * have lifted into the answer (a neighbour or link lift, heading coverage, a phrase) is missed,
 * and so is a parent none of whose sections is a candidate; the page fusion ranks a unit's page
 * among the candidates' pages only.
 */
export interface CandidateLimits {
  minSections: number;
  sections: number;
}

/** Far above every shared corpus (python, the largest, has 11,788 snippets, so fewer sections). */
export const DEFAULT_CANDIDATES: CandidateLimits = { minSections: 100_000, sections: 2_000 };

/**
 * Searches an index's data (computeIndexData, or read back from a segment file) with the
 * params it was computed with. Builds nothing but the dictionary's plain-word list. `synonyms`
 * is for measuring other synonym lists (scripts/bench/synonym-check.ts); `record` keeps each
 * search's parents' and pages' BM25F scores (lastScores, for tests).
 */
export function openLexicalIndex(
  data: IndexData,
  params: Bm25Params = DEFAULT_BM25,
  synonyms: ReadonlyMap<string, readonly string[]> = SYNONYMS,
  candidates: CandidateLimits = DEFAULT_CANDIDATES,
  options: { record?: boolean } = {},
): LexicalIndex {
  const view = new IndexView(data);
  const searcher = new Searcher(view, params, synonyms, candidates);
  if (options.record) searcher.recorded = { sections: [], parents: new Map(), pages: new Map() };
  return {
    size: data.ids.length,
    sectionKeyOf: (id) => view.sectionKeyOf(id),
    search: (query, limit) => searcher.search(query, limit),
    lastSearch: () => ({ ...searcher.stats }),
    lastScores: () => searcher.recorded,
  };
}

/** What the last search of an index did (operation counts, for tests and benches). */
export interface SearchStats {
  /** Whether it scored candidates only (CandidateLimits). */
  candidates: boolean;
  /** Sections, parents and pages given a BM25F score. */
  sections: number;
  parents: number;
  pages: number;
}

/** Read access to an index's data: term numbers, sections, parents, breadcrumbs. */
class IndexView {
  readonly nsec: number;
  private readonly decoder = new TextDecoder();
  /** The position of a snippet id in `ids`. */
  private readonly positionOf: (id: number) => number;
  /** sectionKeyOf's answers by section, made when first asked. */
  private readonly sectionKeys: Array<string | undefined> = [];

  constructor(readonly data: IndexData) {
    this.nsec = data.pageOf.length;
    this.positionOf = positionFinder(data.ids);
  }

  termNo(w: string): number {
    return termNumber(this.data.terms, w);
  }

  /** The idf of a word in one of the index's BM25F views (0: not in the index). */
  idf(index: Bm25fData, w: string): number {
    const no = this.termNo(w);
    return no < 0 ? 0 : index.idf[no];
  }

  crumbsOf(sec: number): string[] {
    const { start, bytes, row } = this.data.crumbs;
    return JSON.parse(this.decoder.decode(row ? row(sec) : bytes.subarray(start[sec], start[sec + 1]))) as string[];
  }

  parentRef(p: number): UnitRef {
    const { parFirst, parDepth, pagePaths, pageOf } = this.data;
    const first = parFirst[p];
    const crumbs = this.crumbsOf(first);
    return { key: parentKey(pagePaths.at(pageOf[first])!, crumbs, parDepth[p]), breadcrumb: crumbs.slice(0, parDepth[p]) };
  }

  parentSections(p: number): number[] {
    const out: number[] = [];
    for (let k = this.data.parFirst[p]; k <= this.data.parLast[p]; k++) out.push(k);
    return out;
  }

  /** The snippet positions of a section. */
  sectionMembers(k: number): number[] {
    const out: number[] = [];
    for (let i = this.data.secStart[k]; i < this.data.secStart[k + 1]; i++) out.push(i);
    return out;
  }

  /** The key of a run of sections grown into one unit. */
  runRef(secs: readonly number[]): UnitRef {
    const { pagePaths, pageOf } = this.data;
    return {
      key: `${pagePaths.at(pageOf[secs[0]])}\u0000${secs[0]}-${secs[secs.length - 1]}\u0002m`,
      breadcrumb: runPath(secs.map((k) => this.crumbsOf(k))),
    };
  }

  sectionKeyOf(id: number): string | undefined {
    const i = this.positionOf(id);
    if (i < 0) return undefined;
    const sec = this.sectionAt(i);
    // Asked for each of a question's 200 candidates: each section's key is made once (its
    // breadcrumb parsed from JSON), then kept with the index.
    return (this.sectionKeys[sec] ??= sectionKey({ sourcePath: this.data.pagePaths.at(this.data.pageOf[sec])!, breadcrumb: this.crumbsOf(sec) }));
  }

  /** The section holding snippet position i (secStart is ascending). */
  private sectionAt(i: number): number {
    const { secStart } = this.data;
    let lo = 0;
    let hi = this.nsec - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (secStart[mid] <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/**
 * One index's search, step by step: the question's terms (query-terms.ts), the sections' BM25F
 * and the adjustments of section-scores.ts, the parents' BM25F, the units' order fused with the
 * pages' (units.ts), then the units taken best first and grown into runs. The buffers are
 * reused by every search and cleared after each.
 */
class Searcher {
  private readonly data: IndexData;
  private readonly nsec: number;
  private readonly pageBm25: Bm25fData | undefined;
  private readonly prior: Float64Array | undefined;
  private readonly hasCode: Uint8Array | undefined;
  private readonly links: Ragged | undefined;
  private readonly expansion: ExpansionContext;
  private readonly headAll: Float64Array;
  private readonly parHeadAll: Float64Array;
  // Buffers reused by every search (zero between searches: each search clears what it set).
  private readonly scores: Float64Array;
  private readonly before: Float64Array;
  private readonly taken: Uint8Array;
  private readonly pscores: Float64Array;
  private readonly psc: Float64Array;
  private readonly touched: number[] = [];
  private readonly ptouched: number[] = [];
  private readonly pgtouched: number[] = [];
  private readonly takenList: number[] = [];
  private readonly units = new UnitBuffer();
  /** Candidates only (CandidateLimits), when the index is that large. */
  private readonly large: CandidateLimits | undefined;
  private readonly topScratch = new TopKScratch();
  /** A large index's parents and pages to score (ascending), and marks of those listed (cleared after). */
  private cand = new Int32Array(0);
  private secs = new Int32Array(0);
  private readonly pageMark: Uint8Array;
  /** The last search's parents' and pages' BM25F scores, when asked for (`record`). */
  recorded: LastScores | undefined;
  readonly stats: SearchStats = { candidates: false, sections: 0, parents: 0, pages: 0 };

  constructor(
    private readonly view: IndexView,
    private readonly params: Bm25Params,
    synonyms: ReadonlyMap<string, readonly string[]>,
    candidates: CandidateLimits,
  ) {
    const data = (this.data = view.data);
    this.nsec = view.nsec;
    this.large = this.nsec >= candidates.minSections ? candidates : undefined;
    this.pageBm25 = params.pageFusion > 0 ? data.pageBm25 : undefined;
    this.prior = data.prior.length > 0 ? data.prior : undefined;
    this.hasCode = params.codePrior > 0 && data.hasCode.length > 0 ? data.hasCode : undefined;
    this.links = data.links.start.length > 0 ? data.links : undefined;
    this.expansion = {
      synonyms,
      synonymWeight: params.synonymWeight,
      // Read through the dictionary when a word is looked up (a segment's opens with no strings made).
      vocabulary: params.prefixWeight > 0 ? { length: data.vocab.length, at: (i: number) => data.terms.at(data.vocab[i]) } : undefined,
      prefixWeight: params.prefixWeight,
      prefixMinLength: params.prefixMinLength,
      idf: (w) => view.idf(data.bm25, w),
    };
    if (params.bridgeWeight > 0) {
      const bridge = new HeadingBridge({ postings: wholePostings(data.bm25), head: data.head }, wordArray(data.terms), params.bridge);
      this.expansion.associates = (w) => {
        const no = view.termNo(w);
        return no < 0 ? [] : bridge.associates(no).map((a) => ({ t: data.terms.at(a.no)!, s: a.s }));
      };
      this.expansion.bridgeWeight = params.bridgeWeight;
    }
    // Heading coverage's denominators.
    this.headAll = params.headingCoverage > 0 ? headNorms(data.head, data.bm25.idf) : new Float64Array(0);
    this.parHeadAll = params.headingCoverage > 0 ? headNorms(data.parHead, data.bm25.idf) : new Float64Array(0);
    this.scores = new Float64Array(this.nsec);
    this.before = new Float64Array(this.nsec);
    this.taken = new Uint8Array(this.nsec);
    this.pscores = new Float64Array(data.parFirst.length);
    this.psc = new Float64Array(this.pageBm25?.n ?? 0);
    this.pageMark = new Uint8Array(this.large ? this.psc.length : 0);
  }

  search(query: string, limit: number): Hit[] {
    const words = questionWords(query, this.params.dropFillers);
    if (this.recorded) this.recorded = { sections: [], parents: new Map(), pages: new Map() };
    if (words.length === 0 || this.nsec === 0 || !(limit > 0)) return [];
    try {
      return this.searchWith(query, words, limit);
    } finally {
      this.stats.candidates = this.large !== undefined;
      this.stats.sections = this.touched.length;
      this.stats.parents = this.ptouched.length;
      this.stats.pages = this.pgtouched.length;
      const { scores, before, pscores, psc, taken } = this;
      for (const k of this.touched) scores[k] = before[k] = 0;
      for (const p of this.ptouched) pscores[p] = 0;
      for (const p of this.pgtouched) psc[p] = 0;
      for (const k of this.takenList) taken[k] = 0;
      this.touched.length = this.ptouched.length = this.pgtouched.length = this.takenList.length = 0;
    }
  }

  private searchWith(query: string, words: string[], limit: number): Hit[] {
    const weighted = expandQuery(query, words, this.expansion);
    const queryNos = Int32Array.from(weighted, (q) => this.view.termNo(q.t));
    const askedNos: number[] = [];
    for (const t of words) {
      const no = this.view.termNo(t);
      if (no >= 0) askedNos.push(no);
    }
    this.scoreSections(query, weighted, queryNos, askedNos);
    this.scoreParents(weighted, queryNos, askedNos);
    this.units.fill(this.touched, this.scores, this.ptouched, this.pscores, this.params.parentWeight);
    // The first units in order: enough for the fusion and the answer (more are sorted only if
    // the answer needs them).
    const ord = this.units.top(Math.max(this.params.fusionDepth, 0) + 2 * limit + 32);
    const shownHead = this.fuse(ord, weighted, queryNos);
    const shown = (r: number) => (shownHead && r < shownHead.length ? shownHead[r] : this.units.score[ord[r]]);
    return this.take(ord, shown, words, limit);
  }

  /** The sections' scores: BM25F, heading coverage, phrases, priors, then the lifts. */
  private scoreSections(query: string, weighted: readonly WeightedTerm[], queryNos: Int32Array, askedNos: readonly number[]): void {
    const { data, params, scores, before, touched } = this;
    const { bm25 } = data;
    this.bm25f(
      bm25,
      queryNos,
      scores,
      touched,
      weighted.map((q, k) => q.w * Math.pow(queryNos[k] < 0 ? 0 : bm25.idf[queryNos[k]], params.idfPower - 1)),
      this.large?.sections,
    );
    coverHeadings(data.head, this.headAll, touched, scores, askedNos, bm25.idf, params.headingCoverage);
    boostPhrases(query, data, (w) => this.view.termNo(w), touched, scores, params.phraseWeight, params.phraseMinTokens);
    if (this.prior) for (const sec of touched) scores[sec] *= this.prior[sec];
    if (this.hasCode && (!params.codePriorHowTo || HOW_TO.test(query))) for (const sec of touched) if (this.hasCode[sec]) scores[sec] *= 1 + params.codePrior;
    // The sections' own scores, before the lifts below.
    for (const k of touched) before[k] = scores[k];
    liftNeighbours(touched, scores, before, data.pageOf, params.neighbourWeight);
    if (this.links) liftLinked(touched, scores, before, this.links, params.linkWeight, params.linkSources);
  }

  /**
   * BM25F scores of one view into `scores` (the documents given one appended to `touched`):
   * every document the terms touch, or, with `keep` (a large index, CandidateLimits), only the
   * `keep` best by MaxScore, with the same scores.
   */
  private bm25f(index: Bm25fData, queryNos: Int32Array, scores: Float64Array, touched: number[], weights: number[], keep: number | undefined): void {
    if (keep === undefined || weights.some((w) => !(w >= 0))) {
      accumulateBm25f(index, queryNos, scores, touched, weights);
      return;
    }
    for (const { doc, score } of topBm25f(index, queryNos, keep, weights, this.topScratch)) {
      if (score > 0 && scores[doc] === 0) touched.push(doc);
      scores[doc] = score;
    }
  }

  /**
   * A large index's parents or pages: the BM25F scores of `this.cand[0..count)` only (each its
   * exhaustive score), those scored appended to `touched`.
   */
  private scoreListed(index: Bm25fData, queryNos: Int32Array, weights: number[], count: number, scores: Float64Array, touched: number[]): void {
    const cand = this.cand;
    scoreDocsBm25f(index, queryNos, cand, count, scores, weights);
    for (let j = 0; j < count; j++) if (scores[cand[j]] !== 0) touched.push(cand[j]);
  }

  /** Room for `n` candidates in `this.cand`. */
  private candRoom(n: number): Int32Array {
    if (this.cand.length < n) {
      const grown = new Int32Array(Math.max(n, 64, 2 * this.cand.length));
      grown.set(this.cand);
      this.cand = grown;
    }
    return this.cand;
  }

  /**
   * The parents holding a section scored so far (`touched`: the candidates and the sections the
   * lifts touched), ascending in `this.cand`; returns their number. Parents are runs of
   * consecutive sections of one file, listed by first section (parFirst ascending). The sections
   * are taken in ascending order: a parent holding section s and starting at or before the
   * previous section taken holds that one too (it is a run), so it is listed already; only the
   * parents starting after the previous section, up to s and in s's file, are looked at, each
   * parent at most once a search.
   */
  private parentsOfTouched(): number {
    const { parFirst, parLast, pageOf } = this.data;
    const secs = this.secRoom(this.touched.length);
    const m = this.touched.length;
    for (let j = 0; j < m; j++) secs[j] = this.touched[j];
    secs.subarray(0, m).sort();
    const npar = parFirst.length;
    let n = 0;
    let prev = -1;
    /** The first parent starting after the section (moves forward only: the sections ascend). */
    let lo = 0;
    for (let j = 0; j < m; j++) {
      const sec = secs[j];
      if (sec === prev) continue;
      if (lo < npar && parFirst[lo] <= sec) {
        // Galloping, then binary search: the sections may be far apart.
        let step = 1;
        let hi = lo + 1;
        while (hi < npar && parFirst[hi] <= sec) {
          lo = hi;
          step *= 2;
          hi = Math.min(npar, hi + step);
        }
        // parFirst[lo] <= sec; the answer is in (lo, hi].
        lo++;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (parFirst[mid] <= sec) lo = mid + 1;
          else hi = mid;
        }
      }
      const page = pageOf[sec];
      // Parents found here start after `prev`, so none is listed yet; they are added in
      // descending order, then this section's run of them is reversed into place.
      const from = n;
      for (let p = lo - 1; p >= 0 && parFirst[p] > prev && pageOf[parFirst[p]] === page; p--) {
        if (parLast[p] >= sec) this.candRoom(n + 1)[n++] = p;
      }
      const cand = this.cand;
      for (let x = from, y = n - 1; x < y; x++, y--) {
        const t = cand[x];
        cand[x] = cand[y];
        cand[y] = t;
      }
      prev = sec;
    }
    return n;
  }

  /** Room for `n` sections in `this.secs`. */
  private secRoom(n: number): Int32Array {
    if (this.secs.length < n) this.secs = new Int32Array(Math.max(n, 64, 2 * this.secs.length));
    return this.secs;
  }

  /** The pages of the sections scored so far, ascending in `this.cand`; returns their number. */
  private pagesOfTouched(): number {
    const { pageOf } = this.data;
    const mark = this.pageMark;
    let n = 0;
    for (const sec of this.touched) {
      const page = pageOf[sec];
      if (mark[page]) continue;
      mark[page] = 1;
      this.candRoom(n + 1)[n++] = page;
    }
    const cand = this.cand;
    for (let j = 0; j < n; j++) mark[cand[j]] = 0;
    cand.subarray(0, n).sort();
    return n;
  }

  /**
   * The parents' scores: BM25F over their own field averages with the sections' idf (so a parent
   * and its children weigh a word alike), and heading coverage.
   */
  private scoreParents(weighted: readonly WeightedTerm[], queryNos: Int32Array, askedNos: readonly number[]): void {
    const { data, params } = this;
    if (data.parFirst.length === 0) return;
    const { bm25, parentBm25 } = data;
    const weights = weighted.map((q, k) => {
      const no = queryNos[k];
      const pidf = no < 0 ? 0 : parentBm25.idf[no];
      return pidf > 0 ? (q.w * Math.pow(bm25.idf[no], params.idfPower)) / pidf : 0;
    });
    if (this.large) this.scoreListed(parentBm25, queryNos, weights, this.parentsOfTouched(), this.pscores, this.ptouched);
    else accumulateBm25f(parentBm25, queryNos, this.pscores, this.ptouched, weights);
    if (this.recorded) {
      this.recorded.sections = [...this.touched];
      this.recorded.parents = new Map(this.ptouched.map((p) => [p, this.pscores[p]]));
    }
    coverHeadings(data.parHead, this.parHeadAll, this.ptouched, this.pscores, askedNos, bm25.idf, params.headingCoverage);
  }

  /**
   * The page-level ranking fused into the first units' order (pageFusion); returns the scores
   * the fused units report, or undefined when there is no fusion.
   */
  private fuse(ord: Int32Array, weighted: readonly WeightedTerm[], queryNos: Int32Array): Float64Array | undefined {
    const { pageBm25, params, units, psc, pgtouched, data } = this;
    if (!pageBm25 || units.length <= 1) return undefined;
    const weights = weighted.map((q, k) => q.w * Math.pow(queryNos[k] < 0 ? 0 : pageBm25.idf[queryNos[k]], params.idfPower - 1));
    if (this.large) this.scoreListed(pageBm25, queryNos, weights, this.pagesOfTouched(), psc, pgtouched);
    else accumulateBm25f(pageBm25, queryNos, psc, pgtouched, weights);
    if (this.recorded) this.recorded.pages = new Map(pgtouched.map((p) => [p, psc[p]]));
    const pageScoreOf = (u: number) => psc[data.pageOf[units.sec[u] >= 0 ? units.sec[u] : data.parFirst[units.par[u]]]];
    return fuseWithPages(
      ord,
      units,
      pageScoreOf,
      pgtouched.map((p) => psc[p]),
      params.fusionK,
      params.pageFusion,
      params.fusionDepth,
    );
  }

  /**
   * The answer's snippets: units in order, each skipped when it overlaps one taken, grown over
   * well-scoring neighbours (mergeRatio), its snippets holding more of the question's words first.
   */
  private take(ord: Int32Array, shown: (r: number) => number, words: readonly string[], limit: number): Hit[] {
    const { data, params, units, view, taken } = this;
    const asked = words.flatMap((t) => {
      const no = view.termNo(t);
      return no >= 0 ? [{ no, idf: data.bm25.idf[no] }] : [];
    });
    const own = data.own;
    const ownScore = (i: number) => {
      const words = run(own, i);
      return asked.reduce((sum, q) => sum + (sortedHas(words, 0, words.length, q.no) ? q.idf : 0), 0);
    };
    const runContext: RunContext = {
      pageOf: data.pageOf,
      secTokens: data.secTokens,
      scores: this.scores,
      taken,
      ratio: params.mergeRatio,
      maxTokens: params.mergeMaxTokens,
    };
    const out: Hit[] = [];
    for (let r = 0; r < units.length; r++) {
      if (r === units.sortedLength) units.sortRest();
      const u = ord[r];
      const par = units.par[u];
      let secs = par >= 0 ? view.parentSections(par) : [units.sec[u]];
      if (secs.some((k) => taken[k])) continue;
      let unit = par >= 0 ? view.parentRef(par) : undefined;
      if (params.mergeRatio > 0) {
        const grown = growRun(secs, units.score[u], runContext);
        if (grown.length > secs.length) {
          secs = grown;
          unit = view.runRef(secs);
        }
      }
      for (const k of secs) {
        taken[k] = 1;
        this.takenList.push(k);
      }
      const all = secs.length === 1 ? view.sectionMembers(secs[0]) : secs.flatMap((k) => view.sectionMembers(k));
      const members = all.length === 1 ? all : all.map((i) => ({ i, s: ownScore(i) })).sort((a, b) => b.s - a.s || a.i - b.i).map((x) => x.i);
      for (const i of members) {
        out.push(unit ? { id: data.ids[i], score: shown(r), unit } : { id: data.ids[i], score: shown(r) });
        if (out.length >= limit) return out;
      }
    }
    return out;
  }
}
