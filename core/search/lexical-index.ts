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
import { accumulateBm25f, type Bm25fData, type FieldWeight } from './bm25f.ts';
import { computeIndexData, parentKey, positionFinder, type IndexData, type Ragged } from './index-data.ts';
import { PhraseMatcher, questionPhrases } from './phrases.ts';
import { sectionKey } from './sections.ts';
import { codeIdentifiers, tokenize } from './tokenize.ts';

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
   * A latent model of the library's sections (core/search/latent.ts: LSI, `latentRank`
   * directions, learned from their headings and prose at build time): each section the question
   * touches gains its latent cosine with the question times the best section's score times this
   * weight, so of sections matching alike, the one about the question's subject as a whole comes
   * first. 0 = off (and not built).
   */
  latentWeight: number;
  latentRank: number;
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
  latentWeight: 0,
  latentRank: 48,
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
};

/** A question asking how to do something. */
const HOW_TO = /\bhow\s+(?:do|can|could|should|would|may)\s+(?:i|we|you|one)\b|\bhow\s+to\b/i;

/**
 * Groups of words questions and documentation use for the same thing: plain English and the
 * general vocabulary of software (verbs of actions, kinds of values, spelling variants), the same
 * for every library, chosen from how developers ask rather than from any set of questions.
 * Checked group by group on the two halves of the shared questions (scripts/bench/synonym-check.ts,
 * issue 22): nine groups that were no use on half A and did not help half B, or hurt half B, were
 * removed (start/begin/launch, check/verify/validate, merge/combine, import/require,
 * configure/configuration/config/settings/setting, version/release, password/credential,
 * endpoint/route, image/picture/photo).
 */
export const SYNONYM_GROUPS: readonly string[] = [
  // Actions.
  'delete remove erase',
  'create make',
  'add insert append',
  'change modify alter edit',
  'stop halt terminate shutdown',
  'finish complete',
  'restart reload refresh',
  'run execute',
  'invoke call',
  'show display print',
  'retrieve fetch obtain read access',
  'find search lookup',
  'enable activate',
  'disable deactivate',
  'install setup',
  'cancel abort',
  'copy duplicate clone',
  'split divide',
  'convert transform',
  'replace substitute swap',
  'skip ignore exclude omit',
  'select choose pick',
  'allow permit',
  'prevent avoid',
  'deny forbid reject',
  'iterate loop',
  'trigger fire',
  'throw raise',
  'send emit dispatch',
  'listen subscribe',
  'watch observe',
  'delay sleep wait pause',
  'store save persist',
  'share reuse',
  'wrap surround',
  'trim strip',
  'reverse invert',
  'order sort arrange',
  'override overwrite',
  'inherit extend subclass',
  'compile build',
  'deploy publish',
  'upgrade migrate',
  'fix solve',
  'debug troubleshoot',
  'serialize stringify',
  'silence suppress mute quiet',
  'assert expect',
  'mock stub fake spy',
  'login signin',
  'logout signout',
  'disconnect detach',
  'toggle switch',
  'schedule cron',
  'cache memoize',
  'compress gzip',
  // Things and qualities.
  'directory folder',
  'argument parameter param arg',
  'error failure exception',
  'issue problem bug',
  'crash panic',
  'limit maximum max',
  'quick fast speed performance',
  'timeout deadline',
  'concurrent parallel simultaneous',
  'periodic interval recurring',
  'default fallback',
  'required mandatory',
  'deprecated obsolete legacy',
  'many multiple several',
  'empty blank',
  'large big',
  'equal identical',
  'different distinct',
  'total sum',
  'size length',
  'tutorial guide walkthrough',
  'plugin extension addon',
  'library package',
  'component widget',
  'terminal shell console',
  'user account',
  'task job',
  'batch bulk',
  'row record entry',
  'property attribute',
  'method function',
  'array list',
  'dictionary map',
  'string text',
  'null nil none',
  'schema shape structure',
  'payload body',
  'response reply',
  'link hyperlink',
  'website site',
  'email mail',
  'theme skin',
  'locale language',
  'stylesheet css',
  'shortcut hotkey keybinding',
  'notification alert',
  'popup modal dialog',
  // Spelling variants.
  'color colour',
  'behavior behaviour',
  'canceled cancelled',
];

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
 * like..."): plain English, the same for every library.
 */
export const QUESTION_FILLERS: ReadonlySet<string> = new Set(
  tokenize(
    'like possible possibly correct correctly able trying try tried instead example examples simply actually really already still ' +
      'every any each all whole certain specific kind sort thing things anything everything what else even rather right proper properly ' +
      'best better good wrong work works working happen happens happening go goes going know tell say see seem seems',
  ),
);

/** Sections searched for a question's verbatim phrases (the best by score so far). */
const PHRASE_CANDIDATES = 200;

/** Whether the sorted run items[lo..hi) holds a value. */
function has(items: Int32Array, lo: number, hi: number, v: number): boolean {
  hi--;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid] === v) return true;
    if (items[mid] < v) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** The number of a word in a sorted dictionary, or -1. */
export function termNumber(terms: readonly string[], word: string): number {
  let lo = 0;
  let hi = terms.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const t = terms[mid];
    if (t === word) return mid;
    if (t < word) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export function buildLexicalIndex(snippets: readonly IndexedSnippet[], params: Bm25Params = DEFAULT_BM25): LexicalIndex {
  return openLexicalIndex(computeIndexData(snippets, params), params);
}

/**
 * Searches an index's data (computeIndexData, or read back from a segment file) with the
 * params it was computed with. Builds nothing but the dictionary's plain-word list. `synonyms`
 * is for measuring other synonym lists (scripts/bench/synonym-check.ts).
 */
export function openLexicalIndex(data: IndexData, params: Bm25Params = DEFAULT_BM25, synonyms: ReadonlyMap<string, readonly string[]> = SYNONYMS): LexicalIndex {
  const { terms, ids, secStart, pageOf, pagePaths, secTokens, bm25, parentBm25, latent } = data;
  const nsec = pageOf.length;
  const nsnip = ids.length;
  const nparents = data.parFirst.length;
  const pageBm25 = params.pageFusion > 0 ? data.pageBm25 : undefined;
  const prior = data.prior.length > 0 ? data.prior : undefined;
  const hasCode = params.codePrior > 0 && data.hasCode.length > 0 ? data.hasCode : undefined;
  const links = data.links.start.length > 0 ? data.links : undefined;
  const vocabulary = params.prefixWeight > 0 ? Array.from(data.vocab, (t) => terms[t]) : undefined;
  const termNo = (w: string) => termNumber(terms, w);
  const idfOf = (index: Bm25fData, w: string) => {
    const no = termNo(w);
    return no < 0 ? 0 : index.idf[no];
  };
  const decoder = new TextDecoder();
  const crumbsOf = (sec: number): string[] =>
    JSON.parse(decoder.decode(data.crumbs.bytes.subarray(data.crumbs.start[sec], data.crumbs.start[sec + 1]))) as string[];
  const parentRef = (p: number): UnitRef => {
    const first = data.parFirst[p];
    const crumbs = crumbsOf(first);
    return { key: parentKey(pagePaths[pageOf[first]], crumbs, data.parDepth[p]), breadcrumb: crumbs.slice(0, data.parDepth[p]) };
  };
  const parentSections = (p: number): number[] => {
    const out: number[] = [];
    for (let k = data.parFirst[p]; k <= data.parLast[p]; k++) out.push(k);
    return out;
  };
  const sectionMembers = (k: number): number[] => {
    const out: number[] = [];
    for (let i = secStart[k]; i < secStart[k + 1]; i++) out.push(i);
    return out;
  };
  const run = (r: Ragged, k: number) => r.items.subarray(r.start[k], r.start[k + 1]);
  // Precomputed norms: the idf of each heading's distinct words summed (heading coverage's
  // denominator), in the order of their first occurrence.
  const headNorms = (heads: Ragged): Float64Array => {
    const out = new Float64Array(heads.start.length - 1);
    for (let d = 0; d < out.length; d++) {
      const lo = heads.start[d];
      for (let i = lo; i < heads.start[d + 1]; i++) if (!seenBefore(heads.items, lo, i)) out[d] += bm25.idf[heads.items[i]];
    }
    return out;
  };
  const headAll = params.headingCoverage > 0 ? headNorms(data.head) : new Float64Array(0);
  const parHeadAll = params.headingCoverage > 0 ? headNorms(data.parHead) : new Float64Array(0);
  // Buffers reused by every search (zero between searches: each search clears what it set).
  const scores = new Float64Array(nsec);
  const before = new Float64Array(nsec);
  const taken = new Uint8Array(nsec);
  const pscores = new Float64Array(nparents);
  const psc = new Float64Array(pageBm25?.n ?? 0);
  const touched: number[] = [];
  const ptouched: number[] = [];
  const pgtouched: number[] = [];
  const takenList: number[] = [];
  const units = new UnitBuffer();

  /** The position of a snippet id in `ids`. */
  const positionOf = positionFinder(ids);
  /** The section holding snippet position i (secStart is ascending). */
  const sectionAt = (i: number): number => {
    let lo = 0;
    let hi = nsec - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (secStart[mid] <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };

  return {
    size: nsnip,
    sectionKeyOf(id) {
      const i = positionOf(id);
      if (i < 0) return undefined;
      const sec = sectionAt(i);
      return sectionKey({ sourcePath: pagePaths[pageOf[sec]], breadcrumb: crumbsOf(sec) });
    },
    search(query, limit) {
      let words = [...new Set(tokenize(query))];
      if (params.dropFillers) {
        const kept = words.filter((t) => !QUESTION_FILLERS.has(t));
        if (kept.length > 0) words = kept;
      }
      if (words.length === 0 || nsec === 0 || !(limit > 0)) return [];
      try {
        return searchWith(query, words, limit);
      } finally {
        for (const k of touched) scores[k] = before[k] = 0;
        for (const p of ptouched) pscores[p] = 0;
        for (const p of pgtouched) psc[p] = 0;
        for (const k of takenList) taken[k] = 0;
        touched.length = ptouched.length = pgtouched.length = takenList.length = 0;
      }
    },
  };

  function searchWith(query: string, words: string[], limit: number): Array<{ id: number; score: number; unit?: UnitRef }> {
      const weighted = words.map((t) => ({ t, w: 1 }));
      if (params.synonymWeight > 0) {
        // Each synonym once, even when two asked words lead to it.
        const added = new Set(words);
        for (const t of words)
          for (const syn of synonyms.get(t) ?? [])
            if (!added.has(syn)) {
              added.add(syn);
              weighted.push({ t: syn, w: params.synonymWeight });
            }
      }
      if (vocabulary) {
        const added = new Set(weighted.map((q) => q.t));
        const plain = plainWords(query);
        for (const t of words) {
          if (idfOf(bm25, t) > 0 || !plain.has(t)) continue;
          for (const near of nearestByPrefix(vocabulary, t, params.prefixMinLength, PREFIX_MAX_WORDS, (w) => idfOf(bm25, w)))
            if (!added.has(near)) {
              added.add(near);
              weighted.push({ t: near, w: params.prefixWeight });
            }
        }
      }
      /** The words searched: the question's, then its synonyms and prefix matches. */
      const queryTerms = weighted.map((q) => q.t);
      const queryNos = Int32Array.from(queryTerms, termNo);
      accumulateBm25f(
        bm25,
        queryNos,
        scores,
        touched,
        weighted.map((q, k) => q.w * Math.pow(queryNos[k] < 0 ? 0 : bm25.idf[queryNos[k]], params.idfPower - 1)),
      );
      const askedNos: number[] = [];
      for (const t of words) {
        const no = termNo(t);
        if (no >= 0) askedNos.push(no);
      }
      const coverHeadings = (heads: Ragged, norms: Float64Array, docs: readonly number[], into: Float64Array) => {
        if (params.headingCoverage <= 0 || askedNos.length === 0) return;
        const { start, items } = heads;
        for (const d of docs) {
          const lo = start[d];
          const hi = start[d + 1];
          let hit = 0;
          for (let i = lo; i < hi; i++) {
            const t = items[i];
            if (askedNos.includes(t) && !seenBefore(items, lo, i)) hit += bm25.idf[t];
          }
          if (hit > 0) into[d] += params.headingCoverage * hit * (hit / norms[d]);
        }
      };
      coverHeadings(data.head, headAll, touched, scores);
      const folded = latent?.query(
        queryTerms,
        weighted.map((q) => q.w),
      );
      if (latent && folded) {
        let best = 0;
        for (const sec of touched) best = Math.max(best, scores[sec]);
        for (const sec of touched) {
          const sim = latent.similarity(folded, sec);
          if (sim > 0) scores[sec] += params.latentWeight * best * sim;
        }
      }
      if (params.phraseWeight > 0) {
        // Phrase words as term numbers; a word the index does not hold gets a number of its own
        // that no text holds (negative).
        let unknown = -1;
        const numbered = (list: string[]) => Int32Array.from(list, (w) => (termNo(w) >= 0 ? termNo(w) : unknown--));
        const phrases = questionPhrases(query, params.phraseMinTokens).flatMap((text) => {
          const phraseWords = tokenize(text);
          return phraseWords.length >= params.phraseMinTokens
            ? [{ words: new PhraseMatcher<number>(numbered(phraseWords)), names: new PhraseMatcher<number>(numbered(codeIdentifiers(text))) }]
            : [];
        });
        if (phrases.length > 0) {
          /** The share of the phrase a run covers, when the run counts (>= phraseMinTokens, >= half). */
          const shareOf = (len: number, of: number) => (len >= params.phraseMinTokens && 2 * len >= of ? len / of : 0);
          for (const sec of bestOf(touched, scores, PHRASE_CANDIDATES)) {
            let share = 0;
            for (const { words: ws, names } of phrases) {
              const len = Math.max(ws.longestRun(run(data.head, sec)), ws.longestRun(run(data.prose, sec)));
              share = Math.max(share, shareOf(len, ws.length), shareOf(names.longestRun(run(data.code, sec)), names.length));
            }
            if (share > 0) scores[sec] *= 1 + params.phraseWeight * share;
          }
        }
      }
      if (prior) for (const sec of touched) scores[sec] *= prior[sec];
      if (hasCode && (!params.codePriorHowTo || HOW_TO.test(query))) for (const sec of touched) if (hasCode[sec]) scores[sec] *= 1 + params.codePrior;
      // The sections' own scores, before the lifts below.
      for (const k of touched) before[k] = scores[k];
      if (params.neighbourWeight > 0) {
        // A section next to one that matches well often holds the answer the question words
        // only circle around (the example after the explanation, the option after the intro).
        for (let x = 0, n = touched.length; x < n; x++) {
          const sec = touched[x];
          for (let nb = sec - 1; nb <= sec + 1; nb += 2) {
            if (nb < 0 || nb >= nsec || pageOf[nb] !== pageOf[sec]) continue;
            if (scores[nb] === 0) touched.push(nb);
            scores[nb] = Math.max(scores[nb], before[nb] + params.neighbourWeight * before[sec]);
          }
        }
      }
      if (links) {
        // A section a well-matching section links to often holds the details the question asks
        // about: the guide matches the question's wording, the reference it links to answers it.
        // The lift is the linking section's score x linkWeight, up to that score, not above: a
        // link vouches for its target, it does not make it the better answer.
        const lift = new Map<number, number>();
        for (const sec of bestOf(touched, before, params.linkSources)) {
          for (const t of run(links, sec)) {
            const g = Math.min(params.linkWeight * before[sec], before[sec] - before[t]);
            if (g > (lift.get(t) ?? 0)) lift.set(t, g);
          }
        }
        for (const [t, g] of lift) {
          if (scores[t] === 0) touched.push(t);
          scores[t] = Math.max(scores[t], before[t] + g);
        }
      }
      // Units: every touched section, and every touched parent (length-normalised by its own
      // field averages, weighed by parentWeight). Best first; a unit overlapping one already
      // taken is skipped, so a parent that beats its children replaces them.
      if (nparents > 0) {
        accumulateBm25f(
          parentBm25,
          queryNos,
          pscores,
          ptouched,
          // The sections' idf, so a parent and its children weigh a word alike.
          weighted.map((q, k) => {
            const no = queryNos[k];
            const pidf = no < 0 ? 0 : parentBm25.idf[no];
            return pidf > 0 ? (q.w * Math.pow(bm25.idf[no], params.idfPower)) / pidf : 0;
          }),
        );
        coverHeadings(data.parHead, parHeadAll, ptouched, pscores);
      }
      units.fill(touched, scores, ptouched, pscores, params.parentWeight);
      // The first units in order: enough for the fusion and the answer (more are sorted only if
      // the answer needs them).
      const ord = units.top(Math.max(params.fusionDepth, 0) + 2 * limit + 32);
      const { score: uScore, sec: uSec, par: uPar } = units;
      const nunits = units.length;
      /** The score each unit reports, in order (the fused order keeps the unit ranking's values). */
      let shownHead: Float64Array | undefined;
      if (pageBm25 && nunits > 1) {
        accumulateBm25f(
          pageBm25,
          queryNos,
          psc,
          pgtouched,
          weighted.map((q, k) => q.w * Math.pow(queryNos[k] < 0 ? 0 : pageBm25.idf[queryNos[k]], params.idfPower - 1)),
        );
        const sorted = pgtouched.map((p) => psc[p]).sort((a, b) => b - a);
        /** 1 + the number of pages scoring more than `v`. */
        const pageRank = (v: number) => {
          let lo = 0;
          let hi = sorted.length;
          while (lo < hi) {
            const mid = (lo + hi) >> 1;
            if (sorted[mid] > v) lo = mid + 1;
            else hi = mid;
          }
          return lo + 1;
        };
        const k = params.fusionK;
        const depth = Math.min(nunits, Math.max(params.fusionDepth, 0));
        shownHead = new Float64Array(depth);
        const head = [];
        for (let r = 0; r < depth; r++) {
          const u = ord[r];
          shownHead[r] = uScore[u];
          const v = psc[pageOf[uSec[u] >= 0 ? uSec[u] : data.parFirst[uPar[u]]]];
          head.push({ u, r, fused: 1 / (k + r + 1) + (v > 0 ? params.pageFusion / (k + pageRank(v)) : 0) });
        }
        head.sort((a, b) => b.fused - a.fused || a.r - b.r);
        for (let r = 0; r < depth; r++) ord[r] = head[r].u;
      }
      const shown = (r: number) => (shownHead && r < shownHead.length ? shownHead[r] : uScore[ord[r]]);
      const asked = words.flatMap((t) => {
        const no = termNo(t);
        return no >= 0 ? [{ no, idf: bm25.idf[no] }] : [];
      });
      const own = data.own;
      const ownScore = (i: number) => asked.reduce((sum, q) => sum + (has(own.items, own.start[i], own.start[i + 1], q.no) ? q.idf : 0), 0);
      const out: Array<{ id: number; score: number; unit?: UnitRef }> = [];
      /** The run of sections grown from `secs` over well-scoring untaken neighbours of its file. */
      const grow = (secs: number[], score: number): number[] => {
        let lo = secs[0];
        let hi = secs[secs.length - 1];
        let size = secs.reduce((n, k) => n + secTokens[k], 0);
        for (;;) {
          let pick = -1;
          for (const k of [lo - 1, hi + 1]) {
            if (k < 0 || k >= nsec || pageOf[k] !== pageOf[lo] || taken[k]) continue;
            if (scores[k] < params.mergeRatio * score || size + secTokens[k] > params.mergeMaxTokens) continue;
            if (pick < 0 || scores[k] > scores[pick]) pick = k;
          }
          if (pick < 0) break;
          size += secTokens[pick];
          if (pick < lo) lo = pick;
          else hi = pick;
        }
        const out: number[] = [];
        for (let k = lo; k <= hi; k++) out.push(k);
        return out;
      };
      for (let r = 0; r < nunits; r++) {
        if (r === units.sortedLength) units.sortRest();
        const u = ord[r];
        const par = uPar[u];
        let secs = par >= 0 ? parentSections(par) : [uSec[u]];
        if (secs.some((k) => taken[k])) continue;
        let unit = par >= 0 ? parentRef(par) : undefined;
        if (params.mergeRatio > 0) {
          const grown = grow(secs, uScore[u]);
          if (grown.length > secs.length) {
            secs = grown;
            unit = { key: `${pagePaths[pageOf[secs[0]]]}\u0000${secs[0]}-${secs[secs.length - 1]}\u0002m`, breadcrumb: runPath(secs.map(crumbsOf)) };
          }
        }
        for (const k of secs) {
          taken[k] = 1;
          takenList.push(k);
        }
        const all = secs.length === 1 ? sectionMembers(secs[0]) : secs.flatMap(sectionMembers);
        const members = all.length === 1 ? all : all.map((i) => ({ i, s: ownScore(i) })).sort((a, b) => b.s - a.s || a.i - b.i).map((x) => x.i);
        for (const i of members) {
          out.push(unit ? { id: ids[i], score: shown(r), unit } : { id: ids[i], score: shown(r) });
          if (out.length >= limit) return out;
        }
      }
      return out;
  }
}

/** Whether items[i] occurs in items[lo..i). */
function seenBefore(items: Int32Array, lo: number, i: number): boolean {
  const t = items[i];
  for (let j = lo; j < i; j++) if (items[j] === t) return true;
  return false;
}

/**
 * The ranked units of one search (sections, then parents) in typed arrays reused from search to
 * search, and their order: best score first, then parents before sections... as the comparator
 * says (a total order, so a partial sort gives the same first units as a full one).
 */
class UnitBuffer {
  score = new Float64Array(256);
  sec = new Int32Array(256);
  par = new Int32Array(256);
  order = new Int32Array(256);
  private scratch = new Float64Array(256);
  length = 0;
  /** order[0..sortedLength) is the start of the full order. */
  sortedLength = 0;

  fill(touched: readonly number[], scores: Float64Array, ptouched: readonly number[], pscores: Float64Array, parentWeight: number): void {
    const n = touched.length + ptouched.length;
    if (n > this.score.length) {
      const cap = Math.max(n, 2 * this.score.length);
      this.score = new Float64Array(cap);
      this.sec = new Int32Array(cap);
      this.par = new Int32Array(cap);
      this.order = new Int32Array(cap);
      this.scratch = new Float64Array(cap);
    }
    let u = 0;
    for (const k of touched) {
      this.score[u] = scores[k];
      this.sec[u] = k;
      this.par[u] = -1;
      this.order[u] = u;
      u++;
    }
    for (const p of ptouched) {
      this.score[u] = pscores[p] * parentWeight;
      this.sec[u] = -1;
      this.par[u] = p;
      this.order[u] = u;
      u++;
    }
    this.length = n;
    this.sortedLength = 0;
  }

  private readonly compare = (i: number, j: number): number =>
    this.score[j] - this.score[i] || this.par[i] - this.par[j] || this.sec[i] - this.sec[j];

  /** Sorts at least the first `k` units into place; returns the order (valid up to `length`). */
  top(k: number): Int32Array {
    const n = this.length;
    const order = this.order;
    if (n <= 2 * k) {
      order.subarray(0, n).sort(this.compare);
      this.sortedLength = n;
      return order;
    }
    // The k-th best score; every unit scoring at least that comes first, in order.
    const kth = kthLargest(this.score, n, k, this.scratch);
    let m = 0;
    for (let u = 0; u < n; u++) if (this.score[u] >= kth) order[m++] = u;
    let rest = m;
    for (let u = 0; u < n; u++) if (this.score[u] < kth) order[rest++] = u;
    order.subarray(0, m).sort(this.compare);
    this.sortedLength = m;
    return order;
  }

  /** Sorts the units after the sorted start (all score less than it). */
  sortRest(): void {
    this.order.subarray(this.sortedLength, this.length).sort(this.compare);
    this.sortedLength = this.length;
  }
}

/** The k-th largest of values[0..n) (1-based k <= n), by quickselect on a copy in `tmp`. */
function kthLargest(values: Float64Array, n: number, k: number, tmp: Float64Array): number {
  tmp.set(values.subarray(0, n));
  const target = k - 1;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const pivot = tmp[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (tmp[i] > pivot) i++;
      while (tmp[j] < pivot) j--;
      if (i <= j) {
        const x = tmp[i];
        tmp[i] = tmp[j];
        tmp[j] = x;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return tmp[target];
}

/** The `n` sections of `among` with the highest (positive) score, best first (ties: lower index first). */
function bestOf(among: readonly number[], score: Float64Array, n: number): number[] {
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

/** Most index words one unknown question word is searched as (the most frequent of those tied). */
const PREFIX_MAX_WORDS = 3;

/** The question's plain words (no code names: not camelCase, dotted or snake_case), stemmed. */
function plainWords(query: string): Set<string> {
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
export function nearestByPrefix(vocabulary: readonly string[], word: string, minLength: number, max: number, idf: (w: string) => number): string[] {
  if (!/^[a-z]+$/.test(word) || word.length < 4) return [];
  let lo = 0;
  let hi = vocabulary.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (vocabulary[mid] < word) lo = mid + 1;
    else hi = mid;
  }
  // The words sharing the longest prefix with `word` are next to where it would be.
  const best = Math.max(lo > 0 ? commonPrefix(vocabulary[lo - 1], word) : 0, lo < vocabulary.length ? commonPrefix(vocabulary[lo], word) : 0);
  if (best < 4) return [];
  const out: string[] = [];
  for (let i = lo - 1; i >= 0 && commonPrefix(vocabulary[i], word) >= best; i--) out.push(vocabulary[i]);
  for (let i = lo; i < vocabulary.length && commonPrefix(vocabulary[i], word) >= best; i++) out.push(vocabulary[i]);
  const ok = out.filter((w) => best >= minLength || best === Math.min(w.length, word.length));
  return ok.sort((a, b) => idf(a) - idf(b) || a.localeCompare(b)).slice(0, max);
}

/**
 * The heading path of a run of sections: the headings they all sit under, then the headings
 * right below that (one per section or subtree, in order) joined by " · ", so the snippet's
 * title names what it holds ("Binders > Header · Query").
 */
function runPath(paths: ReadonlyArray<readonly string[]>): string[] {
  const prefix: string[] = [];
  for (let d = 0; paths.every((p) => d < p.length && p[d] === paths[0][d]); d++) prefix.push(paths[0][d]);
  const below = [...new Set(paths.filter((p) => p.length > prefix.length).map((p) => p[prefix.length]))];
  return below.length > 0 ? [...prefix, below.join(' · ')] : prefix;
}
