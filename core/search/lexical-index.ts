/**
 * BM25F lexical index over snippets.
 *
 * Each snippet is seen through fields, weighted separately: the heading path (page title,
 * breadcrumb, snippet title), the identifiers of its code, its prose (description and content)
 * and its file path. For a term t and snippet d,
 *   tf'(t,d) = sum_f w_f * tf_f(t,d) / (1 - b_f + b_f * len_f(d) / avglen_f)
 *   score(q,d) = sum_{t in q} idf(t) * tf'(t,d) / (k1 + tf'(t,d))
 * tf' depends only on the snippet, so postings store the saturated weight and a query is a sum
 * over the postings of its terms.
 */
import type { Snippet } from '../contracts.ts';
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

interface FieldSpec {
  weight: number;
  b: number;
  text(s: IndexedSnippet): string[];
}

export interface Bm25Params {
  k1: number;
  fields: Record<'heading' | 'code' | 'prose' | 'path', { weight: number; b: number }>;
}

export const DEFAULT_BM25: Bm25Params = {
  k1: 1.2,
  fields: {
    heading: { weight: 3, b: 0.4 },
    code: { weight: 1, b: 0.75 },
    prose: { weight: 1, b: 0.75 },
    path: { weight: 0.5, b: 0.3 },
  },
};

function fieldSpecs(p: Bm25Params): FieldSpec[] {
  return [
    { ...p.fields.heading, text: (s) => tokenize([s.pageTitle, ...s.breadcrumb, s.title].join(' \n ')) },
    { ...p.fields.code, text: (s) => (s.code ? codeIdentifiers(s.code) : []) },
    { ...p.fields.prose, text: (s) => tokenize(s.description + '\n' + s.content) },
    { ...p.fields.path, text: (s) => tokenize(s.sourcePath.replace(/\.[a-z]+$/i, '').replace(/[/_-]/g, ' ')) },
  ];
}

interface Postings {
  docs: number[];
  weights: number[];
}

export function buildLexicalIndex(snippets: IndexedSnippet[], params: Bm25Params = DEFAULT_BM25): LexicalIndex {
  const specs = fieldSpecs(params);
  const n = snippets.length;
  // Per field, per snippet: term -> tf, and the field length.
  const fieldTf: Array<Array<Map<string, number>>> = specs.map(() => new Array(n));
  const fieldLen: Float64Array[] = specs.map(() => new Float64Array(n));
  const avg = new Float64Array(specs.length);
  for (let d = 0; d < n; d++) {
    for (let f = 0; f < specs.length; f++) {
      const toks = specs[f].text(snippets[d]);
      const tf = new Map<string, number>();
      for (const t of toks) tf.set(t, (tf.get(t) ?? 0) + 1);
      fieldTf[f][d] = tf;
      fieldLen[f][d] = toks.length;
      avg[f] += toks.length;
    }
  }
  for (let f = 0; f < specs.length; f++) avg[f] = n > 0 ? Math.max(1, avg[f] / n) : 1;

  // Combine fields into one saturated weight per (term, snippet).
  const postings = new Map<string, Postings>();
  const combined = new Map<string, number>();
  for (let d = 0; d < n; d++) {
    combined.clear();
    for (let f = 0; f < specs.length; f++) {
      const { weight, b } = specs[f];
      const norm = 1 - b + (b * fieldLen[f][d]) / avg[f];
      for (const [t, tf] of fieldTf[f][d]) combined.set(t, (combined.get(t) ?? 0) + (weight * tf) / norm);
    }
    for (const [t, tfw] of combined) {
      let p = postings.get(t);
      if (!p) postings.set(t, (p = { docs: [], weights: [] }));
      p.docs.push(d);
      p.weights.push(tfw / (params.k1 + tfw));
    }
  }
  const idf = new Map<string, number>();
  for (const [t, p] of postings) idf.set(t, Math.log(1 + (n - p.docs.length + 0.5) / (p.docs.length + 0.5)));
  const ids = snippets.map((s) => s.id);

  return {
    size: n,
    search(query, limit) {
      const terms = [...new Set(tokenize(query))];
      if (terms.length === 0 || n === 0) return [];
      const scores = new Float64Array(n);
      const touched: number[] = [];
      for (const t of terms) {
        const p = postings.get(t);
        if (!p) continue;
        const w = idf.get(t)!;
        for (let i = 0; i < p.docs.length; i++) {
          const d = p.docs[i];
          if (scores[d] === 0) touched.push(d);
          scores[d] += w * p.weights[i];
        }
      }
      touched.sort((a, b) => scores[b] - scores[a] || a - b);
      return touched.slice(0, limit).map((d) => ({ id: ids[d], score: scores[d] }));
    },
  };
}
