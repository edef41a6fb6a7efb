/**
 * The benchmark's baseline: MiniSearch (default settings: BM25 k 1.2, b 0.7, d 0.5; its own
 * tokenizer, no stemming, no prefix or fuzzy search) over exactly the snippets Refdesk stored.
 * One document per snippet with two fields: its title (heading breadcrumb and snippet title) and
 * its text (description, prose and code).
 */
import MiniSearch from 'minisearch';
import type { StoredSnippet } from '../../core/contracts.ts';

interface Doc {
  id: number;
  title: string;
  text: string;
}

export interface BaselineIndex {
  /** The best `limit` snippets for a question, best first. */
  search(question: string, limit: number): StoredSnippet[];
}

export function buildBaseline(snippets: readonly StoredSnippet[]): BaselineIndex {
  const ms = new MiniSearch<Doc>({ fields: ['title', 'text'], storeFields: [] });
  const byId = new Map<number, StoredSnippet>();
  ms.addAll(
    snippets.map((s) => {
      byId.set(s.id, s);
      return { id: s.id, title: [...s.breadcrumb, s.title].join(' '), text: [s.description, s.content, s.code].filter(Boolean).join('\n') };
    }),
  );
  return {
    search(question, limit) {
      return ms
        .search(question)
        .slice(0, limit)
        .map((r) => byId.get(r.id as number)!)
        .filter(Boolean);
    },
  };
}
