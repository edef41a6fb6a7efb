/**
 * Hybrid search (issue 21): a version with vectors of the configured embedder is searched
 * lexically (the search workers, or the store) and by vector (its index, core/vector-index.ts),
 * and the two rankings are fused by reciprocal rank. The question is embedded once, in this
 * thread, while the lexical search runs, under a time limit; any provider failure (refused key,
 * timeout, bad reply) leaves the answer lexical and is logged without the key. Without an
 * embedder, or for a version whose vectors are missing or of another model or dimension, none
 * of this runs: the answer is the lexical one, unchanged.
 */
import type { Embedder, SearchHit, StoredSnippet } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { ProviderError } from './providers.ts';
import { normalise, openVectorIndex, type VectorHit, type VectorIndex } from './vector-index.ts';
import { buildVectorsMeta, buildVectorsPath, currentEmbedder, providerKeyScrubber, vectorsMatch, type BuildVectorsMeta } from './vectors.ts';

/** The RRF constant: a hit at rank r of one list adds 1 / (RRF_K + r). */
export const RRF_K = 60;
/** Vector hits fused with the lexical candidates. */
export const VECTOR_CANDIDATES = 50;
/** How long a question's embedding may take before the answer goes lexical. */
export const QUERY_EMBED_TIMEOUT_MS = 3000;

class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}
  get(k: K): V | undefined {
    const v = this.map.get(k);
    if (v !== undefined) {
      this.map.delete(k);
      this.map.set(k, v);
    }
    return v;
  }
  set(k: K, v: V): void {
    this.map.delete(k);
    this.map.set(k, v);
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }
  delete(k: K): void {
    this.map.delete(k);
  }
}

interface OpenedVersion {
  meta: BuildVectorsMeta;
  index: Promise<VectorIndex>;
  snippets: Promise<StoredSnippet[]>;
}

/** Opened vector indexes and their builds' snippets, per kernel (a few builds at a time). */
const opened = new WeakMap<Kernel, Lru<string, OpenedVersion>>();
const queryVectors = new WeakMap<Kernel, Lru<string, Float32Array>>();

function lru<V>(map: WeakMap<Kernel, Lru<string, V>>, kernel: Kernel, max: number): Lru<string, V> {
  let l = map.get(kernel);
  if (!l) map.set(kernel, (l = new Lru<string, V>(max)));
  return l;
}

/** The question's vector (cached per model and question), or null after a failure or the time limit (logged). */
export async function embedQuestion(kernel: Kernel, embedder: Embedder, query: string): Promise<Float32Array | null> {
  const cache = lru(queryVectors, kernel, 512);
  const key = `${embedder.model}\u0000${query}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ProviderError('timeout', `the question was not embedded within ${QUERY_EMBED_TIMEOUT_MS} ms`)), QUERY_EMBED_TIMEOUT_MS);
      timer.unref?.();
    });
    const [v] = await Promise.race([embedder.embed([query], 'query'), timeout]);
    if (!(v instanceof Float32Array) || v.length === 0) throw new ProviderError('bad_response', 'the embedder returned no vector for the question');
    cache.set(key, v);
    return v;
  } catch (e) {
    const scrub = await providerKeyScrubber(kernel);
    kernel.logger.warn('the question could not be embedded: this answer is lexical', {
      model: embedder.model,
      kind: e instanceof ProviderError ? e.kind : 'error',
      error: scrub((e as Error).message),
    });
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** A build's vectors in the store's own vector index (BuildStore.buildVectors: pgvector), queried there. */
async function storeVectorIndex(kernel: Kernel, buildId: string, meta: BuildVectorsMeta): Promise<VectorIndex> {
  const stored = await kernel.store.buildVectors?.();
  if (!stored) throw new Error('the store no longer has its vector index');
  return { kind: 'store', dimensions: meta.dimensions, size: meta.count, query: (vector, k) => stored.query(buildId, vector, k) };
}

/** A version's vectors, opened once (the index read and checked, the snippets loaded). */
function openVersion(kernel: Kernel, libraryId: string, version: string, buildId: string, meta: BuildVectorsMeta): OpenedVersion {
  const cache = lru(opened, kernel, 8);
  const key = `${buildId}\u0000${meta.model}\u0000${meta.checksum}`;
  let entry = cache.get(key);
  if (!entry) {
    entry = {
      meta,
      index: meta.index === 'store' ? storeVectorIndex(kernel, buildId, meta) : openVectorIndex(meta.index, buildVectorsPath(kernel.env.dataDir, buildId), meta.dimensions, meta.count, meta.checksum),
      snippets: kernel.store.getSnippets(libraryId, version),
    };
    entry.index.catch(() => cache.delete(key));
    entry.snippets.catch(() => cache.delete(key));
    cache.set(key, entry);
  }
  return entry;
}

/** A hybrid search under way: the question being embedded while the lexical search runs. */
export interface HybridSearch {
  /** The lexical hits fused with the vector hits; the lexical hits unchanged when the vector side failed. */
  fuse(lexical: SearchHit[], limit: number): Promise<SearchHit[]>;
}

/**
 * Starts the vector side of a search when the configured embedder made this version's vectors;
 * null otherwise (no embedder, no vectors yet, another model or dimension): the search is lexical.
 */
export async function startHybrid(kernel: Kernel, libraryId: string, version: string, query: string): Promise<HybridSearch | null> {
  const embedder = await currentEmbedder(kernel);
  if (!embedder) return null;
  const buildId = (await kernel.store.getVersion(libraryId, version))?.activeBuildId;
  if (!buildId) return null;
  const meta = await buildVectorsMeta(kernel, buildId);
  if (!meta || !vectorsMatch(meta, embedder)) return null;
  const queryVector = embedQuestion(kernel, embedder, query);
  const entry = openVersion(kernel, libraryId, version, buildId, meta);
  return {
    async fuse(lexical, limit) {
      const q = await queryVector;
      if (!q || q.length !== meta.dimensions) return lexical;
      let vectorHits: VectorHit[];
      let snippets: StoredSnippet[];
      try {
        [vectorHits, snippets] = await Promise.all([entry.index.then((i) => i.query(q, VECTOR_CANDIDATES)), entry.snippets]);
      } catch (e) {
        kernel.logger.warn('the vectors of a version cannot be used: this answer is lexical', { library: libraryId, version, error: (e as Error).message });
        return lexical;
      }
      if (snippets.length !== meta.count) return lexical; // rebuilt meanwhile: its own vectors come with it
      return fuseRrf(lexical, vectorHits.map((h) => snippets[h.position]).filter((s): s is StoredSnippet => s !== undefined), limit);
    },
  };
}

/** Items by cosine similarity to `q`, best first (vectors of another dimension are left out). */
export function cosineRanking<K>(q: Float32Array, items: ReadonlyArray<{ key: K; vector: Float32Array }>): Array<{ key: K; score: number }> {
  const unit = normalise(q);
  return items
    .filter((i) => i.vector.length === unit.length)
    .map((i) => {
      const v = normalise(i.vector);
      let dot = 0;
      for (let j = 0; j < v.length; j++) dot += v[j] * unit[j];
      return { key: i.key, score: dot };
    })
    .sort((a, b) => b.score - a.score);
}

/**
 * Reciprocal rank fusion of the lexical hits and the vector ranking (best first): each snippet
 * scores the sum of 1 / (RRF_K + rank) over the lists it is in. Lexical hits keep their unit.
 */
export function fuseRrf(lexical: readonly SearchHit[], vector: readonly StoredSnippet[], limit: number): SearchHit[] {
  const byId = new Map<number, SearchHit>();
  lexical.forEach((h, i) => {
    const prior = byId.get(h.snippet.id);
    if (prior) return;
    byId.set(h.snippet.id, { ...h, score: 1 / (RRF_K + i + 1) });
  });
  vector.forEach((s, i) => {
    const add = 1 / (RRF_K + i + 1);
    const prior = byId.get(s.id);
    if (prior) prior.score += add;
    else byId.set(s.id, { snippet: s, score: add });
  });
  return [...byId.values()].sort((a, b) => b.score - a.score).slice(0, limit);
}
