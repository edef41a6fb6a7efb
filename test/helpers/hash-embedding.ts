/**
 * A deterministic embedding for tests and the benchmark's plumbing runs: NOT a model. Each text
 * becomes the normalised sum of hashed features (lower-cased word tokens, and character 3-grams
 * of each word at half weight) in `dimensions` buckets with a hashed sign. Texts sharing words
 * get similar vectors, which is enough to check that hybrid search is wired end to end.
 */
import { createHash } from 'node:crypto';

export const HASH_EMBEDDING_DIMENSIONS = 256;

function bucket(feature: string, dimensions: number): { at: number; sign: number } {
  const h = createHash('md5').update(feature).digest();
  return { at: h.readUInt32LE(0) % dimensions, sign: h[4] & 1 ? 1 : -1 };
}

export function hashEmbedding(text: string, dimensions = HASH_EMBEDDING_DIMENSIONS): Float32Array {
  const v = new Float32Array(dimensions);
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  for (const w of words) {
    const b = bucket(`w:${w}`, dimensions);
    v[b.at] += b.sign;
    const padded = `<${w}>`;
    for (let i = 0; i + 3 <= padded.length; i++) {
      const g = bucket(`g:${padded.slice(i, i + 3)}`, dimensions);
      v[g.at] += 0.5 * g.sign;
    }
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}
