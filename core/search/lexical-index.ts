/**
 * Lexical index over snippets. PLACEHOLDER implementation (term overlap) with the final
 * interface; the BM25F ranking replaces the body.
 */
import type { Snippet } from '../contracts.ts';

export interface IndexedSnippet extends Pick<Snippet, 'type' | 'title' | 'description' | 'code' | 'content' | 'breadcrumb' | 'pageTitle' | 'sourcePath'> {
  id: number;
}

export interface LexicalIndex {
  readonly size: number;
  /** Best first; at most `limit` results; ids are the snippets' ids. */
  search(query: string, limit: number): Array<{ id: number; score: number }>;
}

export function buildLexicalIndex(snippets: IndexedSnippet[]): LexicalIndex {
  const docs = snippets.map((s) => ({
    id: s.id,
    terms: new Set(
      [s.title, s.description, s.code, s.content, s.breadcrumb.join(' '), s.pageTitle]
        .join(' ')
        .toLowerCase()
        .split(/[^a-z0-9_]+/)
        .filter(Boolean),
    ),
  }));
  return {
    size: docs.length,
    search(query, limit) {
      const q = query.toLowerCase().split(/[^a-z0-9_]+/).filter(Boolean);
      return docs
        .map((d) => ({ id: d.id, score: q.filter((t) => d.terms.has(t)).length }))
        .filter((r) => r.score > 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, limit);
    },
  };
}
