/**
 * The benchmark's baselines: MiniSearch (default settings: BM25 k 1.2, b 0.7, d 0.5; its own
 * tokenizer, no stemming, no prefix or fuzzy search) over one corpus's units, each a document with
 * two fields: its title and its text. buildBaseline indexes exactly the snippets Refdesk stored
 * (title: heading breadcrumb and snippet title; text: description, prose and code);
 * section-baseline.ts indexes the pages' heading sections.
 */
import MiniSearch from 'minisearch';
import type { StoredSnippet } from '../../core/contracts.ts';

interface Doc {
  id: number;
  title: string;
  text: string;
}

export interface Bm25Index<T> {
  /** The best `limit` units for a question, best first. */
  search(question: string, limit: number): T[];
}

export type BaselineIndex = Bm25Index<StoredSnippet>;

/** Plain BM25 over the units, as MiniSearch does it by default. */
export function bm25Index<T>(units: readonly T[], fields: (unit: T) => { title: string; text: string }): Bm25Index<T> {
  const ms = new MiniSearch<Doc>({ fields: ['title', 'text'], storeFields: [] });
  ms.addAll(units.map((u, id) => ({ id, ...fields(u) })));
  return {
    search(question, limit) {
      return ms
        .search(question)
        .slice(0, limit)
        .map((r) => units[r.id as number]);
    },
  };
}

export function buildBaseline(snippets: readonly StoredSnippet[]): BaselineIndex {
  return bm25Index(snippets, (s) => ({ title: [...s.breadcrumb, s.title].join(' '), text: [s.description, s.content, s.code].filter(Boolean).join('\n') }));
}
