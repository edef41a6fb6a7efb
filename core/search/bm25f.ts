/**
 * BM25F over documents seen through weighted fields. For a term t and document d,
 *   tf'(t,d) = sum_f w_f * tf_f(t,d) / (1 - b_f + b_f * len_f(d) / avglen_f)
 *   score(q,d) = sum_{t in q} idf(t) * tf'(t,d) / (k1 + tf'(t,d))
 * tf' depends only on the document, so postings hold the saturated weight and a query is a sum
 * over the postings of its terms.
 */

export interface FieldWeight {
  weight: number;
  b: number;
}

export interface Bm25fIndex {
  readonly size: number;
  /** idf of a term (0 when no document has it). */
  idf(term: string): number;
  /** Adds each document's score for the terms to `scores` (indexed by document). */
  accumulate(terms: readonly string[], scores: Float64Array, touched: number[], termWeights?: readonly number[]): void;
}

/**
 * Builds the index. `fields[f][d]` is the token list of field f of document d; `weights[f]` its
 * weight and length normalization.
 */
export function buildBm25f(fields: ReadonlyArray<ReadonlyArray<readonly string[]>>, weights: readonly FieldWeight[], k1: number): Bm25fIndex {
  const n = fields.length > 0 ? fields[0].length : 0;
  const avg = fields.map((docs) => Math.max(1, docs.reduce((s, t) => s + t.length, 0) / Math.max(1, n)));
  const postings = new Map<string, { docs: number[]; weights: number[] }>();
  const combined = new Map<string, number>();
  for (let d = 0; d < n; d++) {
    combined.clear();
    for (let f = 0; f < fields.length; f++) {
      const toks = fields[f][d];
      if (toks.length === 0) continue;
      const { weight, b } = weights[f];
      const norm = 1 - b + (b * toks.length) / avg[f];
      for (const t of toks) combined.set(t, (combined.get(t) ?? 0) + weight / norm);
    }
    for (const [t, tfw] of combined) {
      let p = postings.get(t);
      if (!p) postings.set(t, (p = { docs: [], weights: [] }));
      p.docs.push(d);
      p.weights.push(tfw / (k1 + tfw));
    }
  }
  // Kept flat (one array of all postings, term by term) rather than two arrays per term: far
  // less memory for the many rare terms of a large library; same values, same order.
  const termNo = new Map<string, number>();
  const idfs = new Float64Array(postings.size);
  const start = new Int32Array(postings.size + 1);
  let total = 0;
  for (const p of postings.values()) total += p.docs.length;
  const docs = new Int32Array(total);
  const tfw = new Float64Array(total);
  let at = 0;
  for (const [t, p] of postings) {
    const no = termNo.size;
    termNo.set(t, no);
    idfs[no] = Math.log(1 + (n - p.docs.length + 0.5) / (p.docs.length + 0.5));
    start[no] = at;
    docs.set(p.docs, at);
    tfw.set(p.weights, at);
    at += p.docs.length;
  }
  start[termNo.size] = at;
  postings.clear();
  return {
    size: n,
    idf: (t) => {
      const no = termNo.get(t);
      return no === undefined ? 0 : idfs[no];
    },
    accumulate(terms, scores, touched, termWeights) {
      for (let k = 0; k < terms.length; k++) {
        const no = termNo.get(terms[k]);
        if (no === undefined) continue;
        const w = idfs[no] * (termWeights ? termWeights[k] : 1);
        for (let i = start[no], end = start[no + 1]; i < end; i++) {
          const d = docs[i];
          if (scores[d] === 0) touched.push(d);
          scores[d] += w * tfw[i];
        }
      }
    },
  };
}

/**
 * The same index as buildBm25f, as plain typed arrays over numbered terms (term numbers index a
 * dictionary shared by several indexes), so it can be written to a file and read back as is.
 * `start[t]..start[t+1]` are term t's postings (empty when no document has it); `idf[t]` is 0
 * then. Same values, same posting order as buildBm25f.
 */
export interface Bm25fData {
  /** Documents. */
  n: number;
  idf: Float64Array;
  start: Int32Array;
  docs: Int32Array;
  tfw: Float64Array;
}

/** `fields[f][d]`: the term numbers (below `terms`) of field f of document d, in token order. */
export function buildBm25fData(
  fields: ReadonlyArray<ReadonlyArray<ArrayLike<number>>>,
  weights: readonly FieldWeight[],
  k1: number,
  terms: number,
): Bm25fData {
  const n = fields.length > 0 ? fields[0].length : 0;
  const avg = fields.map((docs) => Math.max(1, docs.reduce((s, t) => s + t.length, 0) / Math.max(1, n)));
  const combined = new Float64Array(terms);
  const mark = new Uint8Array(terms);
  const seen: number[] = [];
  // Two passes, one document at a time as buildBm25f: count each term's documents, then fill.
  const df = new Int32Array(terms);
  for (let d = 0; d < n; d++) {
    for (let f = 0; f < fields.length; f++) {
      const toks = fields[f][d];
      for (let i = 0; i < toks.length; i++) {
        const t = toks[i];
        if (mark[t] === 0) {
          mark[t] = 1;
          seen.push(t);
        }
      }
    }
    for (const t of seen) {
      df[t]++;
      mark[t] = 0;
    }
    seen.length = 0;
  }
  const start = new Int32Array(terms + 1);
  for (let t = 0; t < terms; t++) start[t + 1] = start[t] + df[t];
  const docs = new Int32Array(start[terms]);
  const tfw = new Float64Array(start[terms]);
  const at = start.slice(0, terms);
  const idf = new Float64Array(terms);
  for (let t = 0; t < terms; t++) if (df[t] > 0) idf[t] = Math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5));
  for (let d = 0; d < n; d++) {
    for (let f = 0; f < fields.length; f++) {
      const toks = fields[f][d];
      if (toks.length === 0) continue;
      const { weight, b } = weights[f];
      const norm = 1 - b + (b * toks.length) / avg[f];
      for (let i = 0; i < toks.length; i++) {
        const t = toks[i];
        if (mark[t] === 0) {
          mark[t] = 1;
          seen.push(t);
        }
        combined[t] += weight / norm;
      }
    }
    // Postings of a term in document order, as buildBm25f (the order of `seen` does not matter).
    for (const t of seen) {
      const w = combined[t];
      docs[at[t]] = d;
      tfw[at[t]++] = w / (k1 + w);
      combined[t] = 0;
      mark[t] = 0;
    }
    seen.length = 0;
  }
  return { n, idf, start, docs, tfw };
}

/** Adds each document's score for the terms (term numbers; -1 = not in the dictionary) to `scores`. */
export function accumulateBm25f(
  index: Bm25fData,
  terms: ArrayLike<number>,
  scores: Float64Array,
  touched: number[],
  termWeights?: ArrayLike<number>,
): void {
  const { idf, start, docs, tfw } = index;
  for (let k = 0; k < terms.length; k++) {
    const no = terms[k];
    if (no < 0 || start[no] === start[no + 1]) continue;
    const w = idf[no] * (termWeights ? termWeights[k] : 1);
    for (let i = start[no], end = start[no + 1]; i < end; i++) {
      const d = docs[i];
      if (scores[d] === 0) touched.push(d);
      scores[d] += w * tfw[i];
    }
  }
}
