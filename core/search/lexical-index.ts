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
import { groupSections } from './sections.ts';
import { codeIdentifiers, tokenize } from './tokenize.ts';

export interface IndexedSnippet
  extends Pick<Snippet, 'type' | 'title' | 'description' | 'code' | 'content' | 'breadcrumb' | 'pageTitle' | 'sourcePath'> {
  id: number;
}

export interface LexicalIndex {
  readonly size: number;
  /** Best first; at most `limit` results; ids are the snippets' ids. */
  search(query: string, limit: number): Array<{ id: number; score: number }>;
}

export type FieldName = 'heading' | 'parents' | 'code' | 'prose' | 'path';

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
}

export const DEFAULT_BM25: Bm25Params = {
  k1: 1.2,
  fields: {
    heading: { weight: 3, b: 0.4 },
    parents: { weight: 1.5, b: 0.4 },
    code: { weight: 1, b: 0.75 },
    prose: { weight: 1, b: 0.75 },
    path: { weight: 0.5, b: 0.3 },
  },
  neighbourWeight: 0.15,
  headingCoverage: 0.2,
  idfPower: 0.7,
  dropFillers: true,
  synonymWeight: 0.5,
};

/** Groups of plain-English words documentation and questions use for the same thing. */
const SYNONYM_GROUPS: readonly string[] = [
  'delete remove erase',
  'create make',
  'configure configuration config settings setting',
  'directory folder',
  'argument parameter param arg',
  'change modify alter',
  'start begin launch',
  'stop halt terminate',
  'show display print',
  'retrieve fetch obtain read access',
  'error failure exception',
  'limit maximum max',
  'quick fast speed performance',
];

/** Each stemmed word of a synonym group -> the other words of its group. */
export const SYNONYMS: ReadonlyMap<string, readonly string[]> = (() => {
  const out = new Map<string, string[]>();
  for (const group of SYNONYM_GROUPS) {
    const words = [...new Set(tokenize(group))];
    for (const w of words) out.set(w, [...(out.get(w) ?? []), ...words.filter((x) => x !== w)]);
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

const FIELD_ORDER: readonly FieldName[] = ['heading', 'parents', 'code', 'prose', 'path'];

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
  return [heading, parents, code, prose, path];
}

export function buildLexicalIndex(snippets: readonly IndexedSnippet[], params: Bm25Params = DEFAULT_BM25): LexicalIndex {
  const sections = groupSections(snippets);
  const fields: string[][][] = FIELD_ORDER.map(() => []);
  for (const members of sections) {
    const f = sectionFields(members.map((i) => snippets[i]));
    for (let k = 0; k < FIELD_ORDER.length; k++) fields[k].push(f[k]);
  }
  const bm25 = buildBm25f(
    fields,
    FIELD_ORDER.map((f) => params.fields[f]),
    params.k1,
  );
  const ids = snippets.map((s) => s.id);

  // Each snippet's own words, as sorted term numbers, to order the snippets inside a section.
  const termNo = new Map<string, number>();
  const own: Int32Array[] = [];
  for (const members of sections) {
    if (members.length === 1) {
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
        const asked = new Set(terms);
        for (const t of terms) for (const syn of SYNONYMS.get(t) ?? []) if (!asked.has(syn)) weighted.push({ t: syn, w: params.synonymWeight });
      }
      bm25.accumulate(
        weighted.map((q) => q.t),
        scores,
        touched,
        weighted.map((q) => q.w * Math.pow(bm25.idf(q.t), params.idfPower - 1)),
      );
      if (params.headingCoverage > 0) {
        const asked = new Set(terms);
        for (const sec of touched) {
          const head = fields[0][sec];
          if (head.length === 0) continue;
          let all = 0;
          let hit = 0;
          for (const t of new Set(head)) {
            const w = bm25.idf(t);
            all += w;
            if (asked.has(t)) hit += w;
          }
          if (hit > 0) scores[sec] += params.headingCoverage * hit * (hit / all);
        }
      }
      if (params.neighbourWeight > 0) {
        // A section next to one that matches well often holds the answer the question words
        // only circle around (the example after the explanation, the option after the intro).
        const own = Float64Array.from(scores);
        for (const sec of [...touched]) {
          for (const nb of [sec - 1, sec + 1]) {
            if (nb < 0 || nb >= sections.length || pageOf[nb] !== pageOf[sec]) continue;
            if (scores[nb] === 0) touched.push(nb);
            scores[nb] = Math.max(scores[nb], own[nb] + params.neighbourWeight * own[sec]);
          }
        }
      }
      touched.sort((a, b) => scores[b] - scores[a] || a - b);
      const asked = terms.flatMap((t) => (termNo.has(t) ? [{ no: termNo.get(t)!, idf: bm25.idf(t) }] : []));
      const ownScore = (i: number) => asked.reduce((sum, q) => sum + (has(own[i], q.no) ? q.idf : 0), 0);
      const out: Array<{ id: number; score: number }> = [];
      for (const sec of touched) {
        const members = sections[sec].length === 1 ? sections[sec] : sections[sec].map((i) => ({ i, s: ownScore(i) })).sort((a, b) => b.s - a.s || a.i - b.i).map((x) => x.i);
        for (const i of members) {
          out.push({ id: ids[i], score: scores[sec] });
          if (out.length >= limit) return out;
        }
      }
      return out;
    },
  };
}


