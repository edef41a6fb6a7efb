/**
 * Library search with vectors (issue 21): each library's vector (its title, description and top
 * headings, written with its default version's vectors: core/vectors.ts) is compared with the
 * asked name and question, embedded once; that ranking is fused by reciprocal rank with the
 * lexical name ranking. A library the vectors rank near the top joins the candidates even when its
 * name matches weakly. Without an embedder, or when the embedding fails (logged), the lexical
 * ranking is returned unchanged.
 */
import type { LibraryRecord } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { cosineRanking, embedQuestion } from './hybrid.ts';
import { currentEmbedder, readLibraryVectors } from './vectors.ts';

/** Libraries the vectors alone may add to the candidates. */
const VECTOR_ONLY = 3;
const K = 60;

export interface RankedLibrary {
  library: LibraryRecord;
  score: number;
  exactId: boolean;
}

/**
 * The lexical ranking (`lexical`, best first) fused with the vector ranking over `pool` (the
 * libraries the caller may return). Scores become (K + 1) x the summed reciprocal ranks (about
 * 1 for a first place in one list, 2 in both), so later stages adding small bonuses keep working.
 */
export async function fuseLibraryVectors(kernel: Kernel, asked: string, lexical: RankedLibrary[], pool: readonly LibraryRecord[]): Promise<RankedLibrary[]> {
  const embedder = await currentEmbedder(kernel);
  if (!embedder || pool.length === 0) return lexical;
  const vectors = await readLibraryVectors(kernel, pool.map((l) => l.id), embedder);
  if (vectors.length === 0) return lexical;
  const q = await embedQuestion(kernel, embedder, asked);
  if (!q) return lexical;
  const ranked = cosineRanking(q, vectors.map((v) => ({ key: v.libraryId, vector: v.vector })));
  const vectorRank = new Map(ranked.map((r, i) => [r.key, i]));
  const byId = new Map(pool.map((l) => [l.id, l]));
  const out = new Map<string, RankedLibrary>();
  lexical.forEach((c, i) => {
    const v = vectorRank.get(c.library.id);
    out.set(c.library.id, { ...c, score: (K + 1) * (1 / (K + i + 1) + (v === undefined ? 0 : 1 / (K + v + 1))) });
  });
  let added = 0;
  for (const [i, r] of ranked.entries()) {
    if (added >= VECTOR_ONLY) break;
    if (out.has(r.key) || r.score <= 0) continue;
    const library = byId.get(r.key);
    if (!library) continue;
    out.set(r.key, { library, score: (K + 1) / (K + i + 1), exactId: false });
    added++;
  }
  return [...out.values()];
}
