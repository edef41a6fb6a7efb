/**
 * The lexical index of a build: BM25F over documentation sections.
 *
 * The unit ranked is the section (the snippets a chunker made of one heading: its prose and its
 * code together), seen through weighted fields: the section's own heading, the headings above
 * it (page title, parents), the identifiers of its code, its prose, and its file path. A
 * question usually names what a whole section is about, and a section answers it whole.
 * Search returns the snippets of the best sections, every snippet of a section with the
 * section's score, sections best first and their snippets in document order.
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
  /** Page-level fields: the page title, its introduction (first section's prose) and all its headings. */
  page: Record<'title' | 'intro' | 'headings', FieldWeight>;
  /** Weight of the page's score added to each of its sections' scores. */
  pageWeight: number;
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
  page: { title: { weight: 3, b: 0.3 }, intro: { weight: 1, b: 0.75 }, headings: { weight: 1, b: 0.5 } },
  pageWeight: Number(process.env.PW ?? 0.5),
};

const FIELD_ORDER: readonly FieldName[] = ['heading', 'parents', 'code', 'prose', 'path'];

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

  // Pages: a section also scores by what its whole page is about.
  const pageOf = new Int32Array(sections.length);
  const pageIndex = new Map<string, number>();
  const pageFields: string[][][] = [[], [], []];
  sections.forEach((members, k) => {
    const first = snippets[members[0]];
    let p = pageIndex.get(first.sourcePath);
    if (p === undefined) {
      p = pageIndex.size;
      pageIndex.set(first.sourcePath, p);
      pageFields[0].push(tokenize(first.pageTitle));
      pageFields[1].push(fields[FIELD_ORDER.indexOf('prose')][k]);
      pageFields[2].push([]);
    }
    if (first.breadcrumb.length > 1) pageFields[2][p].push(...fields[0][k]);
    pageOf[k] = p;
  });
  const pages = buildBm25f(pageFields, [params.page.title, params.page.intro, params.page.headings], params.k1);

  return {
    size: snippets.length,
    search(query, limit) {
      const terms = [...new Set(tokenize(query))];
      if (terms.length === 0 || sections.length === 0 || !(limit > 0)) return [];
      const scores = new Float64Array(sections.length);
      const touched: number[] = [];
      bm25.accumulate(terms, scores, touched);
      if (params.pageWeight > 0) {
        const pageScores = new Float64Array(pages.size);
        const pageTouched: number[] = [];
        pages.accumulate(terms, pageScores, pageTouched);
        for (const sec of touched) scores[sec] += params.pageWeight * pageScores[pageOf[sec]];
      }
      touched.sort((a, b) => scores[b] - scores[a] || a - b);
      const out: Array<{ id: number; score: number }> = [];
      for (const sec of touched) {
        for (const i of sections[sec]) {
          out.push({ id: ids[i], score: scores[sec] });
          if (out.length >= limit) return out;
        }
      }
      return out;
    },
  };
}
