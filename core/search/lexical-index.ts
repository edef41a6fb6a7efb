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
import { buildBm25f, type FieldWeight } from './bm25f.ts';
import { buildLatentModel, DEFAULT_LATENT } from './latent.ts';
import { inlinkCounts, resolveSectionLinks } from './links.ts';
import { PhraseMatcher, questionPhrases } from './phrases.ts';
import { groupSections } from './sections.ts';
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
};

/** A question asking how to do something. */
const HOW_TO = /\bhow\s+(?:do|can|could|should|would|may)\s+(?:i|we|you|one)\b|\bhow\s+to\b/i;

/**
 * Groups of words questions and documentation use for the same thing: plain English and the
 * general vocabulary of software (verbs of actions, kinds of values, spelling variants), the same
 * for every library, chosen from how developers ask rather than from any set of questions.
 */
const SYNONYM_GROUPS: readonly string[] = [
  // Actions.
  'delete remove erase',
  'create make',
  'add insert append',
  'change modify alter edit',
  'start begin launch',
  'stop halt terminate shutdown',
  'finish complete',
  'restart reload refresh',
  'run execute',
  'invoke call',
  'show display print',
  'retrieve fetch obtain read access',
  'find search lookup',
  'check verify validate',
  'enable activate',
  'disable deactivate',
  'install setup',
  'cancel abort',
  'copy duplicate clone',
  'merge combine',
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
  'import require',
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
  'configure configuration config settings setting',
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
  'version release',
  'tutorial guide walkthrough',
  'plugin extension addon',
  'library package',
  'component widget',
  'terminal shell console',
  'password credential',
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
  'endpoint route',
  'link hyperlink',
  'website site',
  'email mail',
  'image picture photo',
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

/** Each stemmed word of a synonym group -> the other words of its group. */
export const SYNONYMS: ReadonlyMap<string, readonly string[]> = (() => {
  const out = new Map<string, string[]>();
  for (const group of SYNONYM_GROUPS) {
    const words = [...new Set(tokenize(group))];
    for (const w of words) out.set(w, [...new Set([...(out.get(w) ?? []), ...words.filter((x) => x !== w)])]);
  }
  return out;
})();

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

const FIELD_ORDER: readonly FieldName[] = ['heading', 'parents', 'code', 'prose', 'path', 'meta'];

/** Whether a sorted array holds a value. */
function has(sorted: Int32Array, v: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] === v) return true;
    if (sorted[mid] < v) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
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

export function buildLexicalIndex(snippets: readonly IndexedSnippet[], params: Bm25Params = DEFAULT_BM25): LexicalIndex {
  const sections = groupSections(snippets);
  const fields: string[][][] = FIELD_ORDER.map(() => []);
  for (const members of sections) {
    const f = sectionFields(members.map((i) => snippets[i]));
    for (let k = 0; k < FIELD_ORDER.length; k++) fields[k].push(f[k]);
  }
  // A page's search words (front-matter keywords, tags, aliases: the description of an info
  // snippet, where the markdown chunker puts them) are a field of every section of the page.
  const META = FIELD_ORDER.indexOf('meta');
  if (params.fields.meta.weight > 0) {
    const pageWords = new Map<string, string[]>();
    for (const s of snippets) if (s.type === 'info' && s.description && !pageWords.has(s.sourcePath)) pageWords.set(s.sourcePath, tokenize(s.description));
    sections.forEach((members, k) => {
      const words = pageWords.get(snippets[members[0]].sourcePath);
      if (words) fields[META][k] = words;
    });
  }
  const bm25 = buildBm25f(
    fields,
    FIELD_ORDER.map((f) => params.fields[f]),
    params.k1,
  );
  const ids = snippets.map((s) => s.id);
  const vocabulary = params.prefixWeight > 0 ? wordVocabulary(fields) : undefined;
  // Headings and prose (with the code's names too, sections sharing boilerplate code came near:
  // bench:quick mrr@10 0.663 against 0.666).
  const latent =
    params.latentWeight > 0 ? buildLatentModel([fields[0], fields[1], fields[3]], { ...DEFAULT_LATENT, rank: params.latentRank }) : undefined;
  const resolved = params.linkWeight > 0 || params.inlinkPrior > 0 ? resolveSectionLinks(sections, snippets).targets : undefined;
  const hasLinks = resolved?.some((t) => t.length > 0) ?? false;
  const links = hasLinks && params.linkWeight > 0 ? resolved : undefined;
  // Each section's prior factor from its in-links (absent: all 1).
  const prior =
    hasLinks && params.inlinkPrior > 0 ? Float64Array.from(inlinkCounts(sections, snippets, resolved!), (n) => 1 + params.inlinkPrior * Math.log1p(n)) : undefined;
  const secTokens = sections.map((m) => m.reduce((n, i) => n + (snippets[i].tokens ?? 0), 0));
  const parents =
    params.parentWeight > 0
      ? findParents(sections, snippets, params.parentMinDepth).filter(
          (p) => p.sections.reduce((n, k) => n + secTokens[k], 0) <= params.parentMaxTokens,
        )
      : [];
  const parentFields: string[][][] = FIELD_ORDER.map(() => []);
  for (const p of parents) {
    const depth = p.ref.breadcrumb.length;
    parentFields[0].push(tokenize(p.ref.breadcrumb[depth - 1]));
    parentFields[1].push(tokenize(p.ref.breadcrumb.slice(0, -1).join(' \n ')));
    const code: string[] = [];
    const prose: string[] = [];
    for (const sec of p.sections) {
      const crumbs = snippets[sections[sec][0]].breadcrumb;
      if (crumbs.length > depth) prose.push(...tokenize(crumbs.slice(depth).join(' \n ')));
      code.push(...fields[2][sec]);
      prose.push(...fields[3][sec]);
    }
    parentFields[2].push(code);
    parentFields[3].push(prose);
    parentFields[4].push(fields[4][p.sections[0]]);
    parentFields[META].push(fields[META][p.sections[0]]);
  }
  const parentBm25 = buildBm25f(
    parentFields,
    FIELD_ORDER.map((f) => params.fields[f]),
    params.k1,
  );
  // The sections holding a code snippet (codePrior; absent when off).
  const hasCode = params.codePrior > 0 ? Uint8Array.from(sections, (m) => (m.some((i) => snippets[i].type === 'code') ? 1 : 0)) : undefined;

  // Each snippet's own words, as sorted term numbers, to order the snippets inside a section.
  const termNo = new Map<string, number>();
  const own: Int32Array[] = [];
  for (const members of sections) {
    if (members.length === 1 && parents.length === 0) {
      own[members[0]] = new Int32Array(0);
      continue;
    }
    for (const i of members) {
      const nos = new Set<number>();
      for (const t of memberWords(snippets[i])) {
        let no = termNo.get(t);
        if (no === undefined) termNo.set(t, (no = termNo.size));
        nos.add(no);
      }
      own[i] = Int32Array.from(nos).sort();
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
  let pageBm25: ReturnType<typeof buildBm25f> | undefined;
  if (params.pageFusion > 0) {
    const pf: string[][][] = FIELD_ORDER.map(() => []);
    sections.forEach((members, k) => {
      const pg = pageOf[k];
      const first = snippets[members[0]];
      if (pf[0].length <= pg) {
        pf[0].push(tokenize(first.pageTitle || first.breadcrumb[0] || ''));
        for (let f = 1; f < FIELD_ORDER.length; f++) pf[f].push([]);
        pf[4][pg] = fields[4][k];
        // The page's search words (front matter) are the same for each of its sections.
        pf[META][pg] = fields[META][k];
      }
      // (Loops, not push(...words): a long page would pass too many arguments.)
      if (first.breadcrumb.length > 1) for (const t of tokenize(first.breadcrumb.slice(1).join(' \n '))) pf[1][pg].push(t);
      for (const t of fields[2][k]) pf[2][pg].push(t);
      for (const t of fields[3][k]) pf[3][pg].push(t);
    });
    pageBm25 = buildBm25f(
      pf,
      FIELD_ORDER.map((f) => params.fields[f]),
      params.k1,
    );
  }

  return {
    size: snippets.length,
    search(query, limit) {
      let terms = [...new Set(tokenize(query))];
      if (params.dropFillers) {
        const kept = terms.filter((t) => !QUESTION_FILLERS.has(t));
        if (kept.length > 0) terms = kept;
      }
      if (terms.length === 0 || sections.length === 0 || !(limit > 0)) return [];
      const scores = new Float64Array(sections.length);
      const touched: number[] = [];
      const weighted = terms.map((t) => ({ t, w: 1 }));
      if (params.synonymWeight > 0) {
        // Each synonym once, even when two asked words lead to it.
        const added = new Set(terms);
        for (const t of terms)
          for (const syn of SYNONYMS.get(t) ?? [])
            if (!added.has(syn)) {
              added.add(syn);
              weighted.push({ t: syn, w: params.synonymWeight });
            }
      }
      if (vocabulary) {
        const added = new Set(weighted.map((q) => q.t));
        const plain = plainWords(query);
        for (const t of terms) {
          if (bm25.idf(t) > 0 || !plain.has(t)) continue;
          for (const near of nearestByPrefix(vocabulary, t, params.prefixMinLength, PREFIX_MAX_WORDS, (w) => bm25.idf(w)))
            if (!added.has(near)) {
              added.add(near);
              weighted.push({ t: near, w: params.prefixWeight });
            }
        }
      }
      /** The words searched: the question's, then its synonyms and prefix matches. */
      const queryTerms = weighted.map((q) => q.t);
      bm25.accumulate(
        queryTerms,
        scores,
        touched,
        weighted.map((q) => q.w * Math.pow(bm25.idf(q.t), params.idfPower - 1)),
      );
      const coverHeadings = (heads: string[][], docs: readonly number[], into: Float64Array) => {
        if (params.headingCoverage <= 0) return;
        const asked = new Set(terms);
        for (const d of docs) {
          const head = heads[d];
          if (head.length === 0) continue;
          let all = 0;
          let hit = 0;
          for (const t of new Set(head)) {
            const w = bm25.idf(t);
            all += w;
            if (asked.has(t)) hit += w;
          }
          if (hit > 0) into[d] += params.headingCoverage * hit * (hit / all);
        }
      };
      coverHeadings(fields[0], touched, scores);
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
        const phrases = questionPhrases(query, params.phraseMinTokens).flatMap((text) => {
          const words = tokenize(text);
          return words.length >= params.phraseMinTokens ? [{ words: new PhraseMatcher(words), names: new PhraseMatcher(codeIdentifiers(text)) }] : [];
        });
        if (phrases.length > 0) {
          /** The share of the phrase a run covers, when the run counts (>= phraseMinTokens, >= half). */
          const shareOf = (run: number, of: number) => (run >= params.phraseMinTokens && 2 * run >= of ? run / of : 0);
          for (const sec of bestOf(touched, scores, PHRASE_CANDIDATES)) {
            let share = 0;
            for (const { words, names } of phrases) {
              const run = Math.max(words.longestRun(fields[0][sec]), words.longestRun(fields[3][sec]));
              share = Math.max(share, shareOf(run, words.length), shareOf(names.longestRun(fields[2][sec]), names.length));
            }
            if (share > 0) scores[sec] *= 1 + params.phraseWeight * share;
          }
        }
      }
      if (prior) for (const sec of touched) scores[sec] *= prior[sec];
      if (hasCode && (!params.codePriorHowTo || HOW_TO.test(query))) for (const sec of touched) if (hasCode[sec]) scores[sec] *= 1 + params.codePrior;
      // The sections' own scores, before the lifts below.
      const before = params.neighbourWeight > 0 || links ? Float64Array.from(scores) : scores;
      if (params.neighbourWeight > 0) {
        // A section next to one that matches well often holds the answer the question words
        // only circle around (the example after the explanation, the option after the intro).
        for (const sec of [...touched]) {
          for (const nb of [sec - 1, sec + 1]) {
            if (nb < 0 || nb >= sections.length || pageOf[nb] !== pageOf[sec]) continue;
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
          for (const t of links[sec]) {
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
      const order: Array<{ score: number; sec: number; par: number }> = touched.map((sec) => ({ score: scores[sec], sec, par: -1 }));
      if (parents.length > 0) {
        const pscores = new Float64Array(parents.length);
        const ptouched: number[] = [];
        parentBm25.accumulate(
          queryTerms,
          pscores,
          ptouched,
          // The sections' idf, so a parent and its children weigh a word alike.
          weighted.map((q) => {
            const pidf = parentBm25.idf(q.t);
            return pidf > 0 ? (q.w * Math.pow(bm25.idf(q.t), params.idfPower)) / pidf : 0;
          }),
        );
        coverHeadings(parentFields[0], ptouched, pscores);
        for (const p of ptouched) order.push({ score: pscores[p] * params.parentWeight, sec: -1, par: p });
      }
      order.sort((a, b) => b.score - a.score || a.par - b.par || a.sec - b.sec);
      /** The score each unit reports, in order (the fused order keeps the unit ranking's values). */
      const shown = order.map((u) => u.score);
      if (pageBm25 && order.length > 1) {
        const psc = new Float64Array(pageBm25.size);
        const ptouched: number[] = [];
        pageBm25.accumulate(
          queryTerms,
          psc,
          ptouched,
          weighted.map((q) => q.w * Math.pow(pageBm25.idf(q.t), params.idfPower - 1)),
        );
        const sorted = ptouched.map((p) => psc[p]).sort((a, b) => b - a);
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
        const head = order.slice(0, params.fusionDepth).map((u, r) => {
          const v = psc[pageOf[u.sec >= 0 ? u.sec : parents[u.par].sections[0]]];
          return { u, r, fused: 1 / (k + r + 1) + (v > 0 ? params.pageFusion / (k + pageRank(v)) : 0) };
        });
        head.sort((a, b) => b.fused - a.fused || a.r - b.r);
        order.splice(0, head.length, ...head.map((h) => h.u));
      }
      const asked = terms.flatMap((t) => (termNo.has(t) ? [{ no: termNo.get(t)!, idf: bm25.idf(t) }] : []));
      const ownScore = (i: number) => asked.reduce((sum, q) => sum + (has(own[i], q.no) ? q.idf : 0), 0);
      const out: Array<{ id: number; score: number; unit?: UnitRef }> = [];
      const taken = new Uint8Array(sections.length);
      /** The run of sections grown from `secs` over well-scoring untaken neighbours of its file. */
      const grow = (secs: number[], score: number): number[] => {
        let lo = secs[0];
        let hi = secs[secs.length - 1];
        let size = secs.reduce((n, k) => n + secTokens[k], 0);
        for (;;) {
          let pick = -1;
          for (const k of [lo - 1, hi + 1]) {
            if (k < 0 || k >= sections.length || pageOf[k] !== pageOf[lo] || taken[k]) continue;
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
      for (let r = 0; r < order.length; r++) {
        const u = order[r];
        let secs = u.par >= 0 ? parents[u.par].sections : [u.sec];
        if (secs.some((k) => taken[k])) continue;
        let unit = u.par >= 0 ? parents[u.par].ref : undefined;
        if (params.mergeRatio > 0) {
          const grown = grow(secs, u.score);
          if (grown.length > secs.length) {
            secs = grown;
            unit = { key: `${snippets[sections[secs[0]][0]].sourcePath}\u0000${secs[0]}-${secs[secs.length - 1]}\u0002m`, breadcrumb: runPath(secs.map((k) => snippets[sections[k][0]].breadcrumb)) };
          }
        }
        for (const k of secs) taken[k] = 1;
        const all = secs.length === 1 ? sections[secs[0]] : secs.flatMap((k) => sections[k]);
        const members = all.length === 1 ? all : all.map((i) => ({ i, s: ownScore(i) })).sort((a, b) => b.s - a.s || a.i - b.i).map((x) => x.i);
        for (const i of members) {
          out.push(unit ? { id: ids[i], score: shown[r], unit } : { id: ids[i], score: shown[r] });
          if (out.length >= limit) return out;
        }
      }
      return out;
    },
  };
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

/** The plain words (letters only) of the index's fields, sorted. */
function wordVocabulary(fields: ReadonlyArray<ReadonlyArray<readonly string[]>>): string[] {
  const words = new Set<string>();
  for (const docs of fields) for (const toks of docs) for (const t of toks) if (/^[a-z]+$/.test(t)) words.add(t);
  return [...words].sort();
}

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

interface Parent {
  /** Indexes of its sections (consecutive). */
  sections: number[];
  ref: UnitRef;
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
      const key = first.sourcePath + '\u0000' + crumbs.slice(0, d).join('\u0001') + '\u0002p';
      const p = open.get(key);
      if (p && p.sections[p.sections.length - 1] === k - 1) {
        p.sections.push(k);
        deepest.set(p, Math.max(deepest.get(p)!, crumbs.length));
      } else {
        const np: Parent = { sections: [k], ref: { key, breadcrumb: crumbs.slice(0, d) } };
        open.set(key, np);
        deepest.set(np, crumbs.length);
        out.push(np);
      }
    }
  }
  return out.filter((p) => p.sections.length > 1 || deepest.get(p)! > p.ref.breadcrumb.length);
}
