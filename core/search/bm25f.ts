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
  /** Every term's postings, term after term (empty when `postings` reads them by term). */
  docs: Int32Array;
  tfw: Float64Array;
  /** Each term's upper bound (termUpperBounds), when stored with the index. */
  ub?: Float64Array;
  /**
   * Term t's postings read on demand (a segment read by pages: plugins/store-embedded/segment.ts),
   * `start[t+1] - start[t]` of them; `docs` and `tfw` are empty then.
   */
  postings?: (t: number) => PostingList;
}

/** One term's postings: documents ascending, their saturated weights. */
export interface PostingList {
  docs: Int32Array;
  tfw: Float64Array;
}

/** Term t's postings, from the arrays or read by term. */
export function postingList(index: Bm25fData, t: number): PostingList {
  if (index.postings) return index.postings(t);
  return { docs: index.docs.subarray(index.start[t], index.start[t + 1]), tfw: index.tfw.subarray(index.start[t], index.start[t + 1]) };
}

/** The index with every term's postings in its arrays (reads each term of a paged index once). */
export function wholePostings(index: Bm25fData): Bm25fData {
  if (!index.postings) return index;
  const terms = index.start.length - 1;
  const docs = new Int32Array(index.start[terms]);
  const tfw = new Float64Array(index.start[terms]);
  for (let t = 0; t < terms; t++) {
    if (index.start[t] === index.start[t + 1]) continue;
    const list = index.postings(t);
    docs.set(list.docs, index.start[t]);
    tfw.set(list.tfw, index.start[t]);
  }
  return { n: index.n, idf: index.idf, start: index.start, docs, tfw, ub: index.ub };
}

/** Lists of numbers as one flat list: list i is `items[start[i]..start[i+1]]`. */
export function flatLists(lists: readonly ArrayLike<number>[]): { start: Int32Array; items: Int32Array } {
  const start = new Int32Array(lists.length + 1);
  for (let i = 0; i < lists.length; i++) start[i + 1] = start[i] + lists[i].length;
  const items = new Int32Array(start[lists.length]);
  for (let i = 0; i < lists.length; i++) items.set(lists[i], start[i]);
  return { start, items };
}

/** `fields[f][d]`: the term numbers (below `terms`) of field f of document d, in token order. */
export function buildBm25fData(
  fields: ReadonlyArray<ReadonlyArray<ArrayLike<number>>>,
  weights: readonly FieldWeight[],
  k1: number,
  terms: number,
): Bm25fData {
  return buildBm25fDataFlat(fields.map(flatLists), weights, k1, terms);
}

/**
 * The BM25F data of fields held as flat lists: document d's field f is
 * `fields[f].items[fields[f].start[d]..fields[f].start[d+1]]` (no array per document: a streamed
 * index build, core/search/index-data.ts; buildBm25fData flattens its lists into this). Two
 * passes, one document at a time: count each term's documents, then fill its postings in
 * document order.
 */
export function buildBm25fDataFlat(
  fields: ReadonlyArray<{ readonly start: Int32Array; readonly items: Int32Array }>,
  weights: readonly FieldWeight[],
  k1: number,
  terms: number,
): Bm25fData {
  const n = fields.length > 0 ? fields[0].start.length - 1 : 0;
  const avg = fields.map(({ start }) => {
    let sum = 0;
    for (let d = 0; d < n; d++) sum += start[d + 1] - start[d];
    return Math.max(1, sum / Math.max(1, n));
  });
  const combined = new Float64Array(terms);
  const mark = new Uint8Array(terms);
  const seen: number[] = [];
  const df = new Int32Array(terms);
  for (let d = 0; d < n; d++) {
    for (let f = 0; f < fields.length; f++) {
      const { start, items } = fields[f];
      for (let i = start[d], end = start[d + 1]; i < end; i++) {
        const t = items[i];
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
      const { start: fs, items } = fields[f];
      const lo = fs[d];
      const hi = fs[d + 1];
      if (hi === lo) continue;
      const { weight, b } = weights[f];
      const norm = 1 - b + (b * (hi - lo)) / avg[f];
      for (let i = lo; i < hi; i++) {
        const t = items[i];
        if (mark[t] === 0) {
          mark[t] = 1;
          seen.push(t);
        }
        combined[t] += weight / norm;
      }
    }
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
  const { idf, start } = index;
  if (index.postings) {
    for (let k = 0; k < terms.length; k++) {
      const no = terms[k];
      if (no < 0 || start[no] === start[no + 1]) continue;
      const w = idf[no] * (termWeights ? termWeights[k] : 1);
      const { docs, tfw } = index.postings(no);
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i];
        if (scores[d] === 0) touched.push(d);
        scores[d] += w * tfw[i];
      }
    }
    return;
  }
  const { docs, tfw } = index;
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

/**
 * The BM25F scores of the given documents only (`docs[0..count)`, ascending, each once), added
 * to `scores`: for each query term in query order, each of those documents found in its list
 * gains idf x weight x its saturated weight, as accumulateBm25f adds them, so a document's score
 * is the exhaustive one to the last bit. Each list is merged with the documents (galloping
 * search in the longer of the two), so the cost is per document asked and per term, not per
 * posting. Terms outside the dictionary (-1) or of weight 0 add nothing.
 */
export function scoreDocsBm25f(
  index: Bm25fData,
  terms: ArrayLike<number>,
  docs: Int32Array,
  count: number,
  scores: Float64Array,
  termWeights?: ArrayLike<number>,
): void {
  const { idf, start } = index;
  if (count <= 0) return;
  for (let k = 0; k < terms.length; k++) {
    const no = terms[k];
    const tw = termWeights ? termWeights[k] : 1;
    if (no < 0 || start[no] === start[no + 1] || tw === 0) continue;
    const w = idf[no] * tw;
    const list = postingList(index, no);
    const ld = list.docs;
    const lt = list.tfw;
    const end = ld.length;
    if (end >= count) {
      // More postings than documents asked: seek each document in the list.
      let i = 0;
      for (let j = 0; j < count && i < end; j++) {
        const d = docs[j];
        i = seek(ld, i, end, d);
        if (i < end && ld[i] === d) scores[d] += w * lt[i++];
      }
    } else {
      // A short list: seek each posting among the documents asked.
      let j = 0;
      for (let i = 0; i < end && j < count; i++) {
        const d = ld[i];
        j = seek(docs, j, count, d);
        if (j < count && docs[j] === d) scores[d] += w * lt[i];
      }
    }
  }
}

/**
 * The largest saturated weight (tfw) of each term's postings: times the term's idf and query
 * weight, an upper bound of what the term adds to any document's score (the same scoring
 * function, so the bound is tight). Computed once per index on first use (one pass over the
 * postings) and kept beside it.
 */
export function termUpperBounds(index: Bm25fData): Float64Array {
  if (index.ub) return index.ub;
  if (index.postings) throw new Error('termUpperBounds: a paged index stores its bounds (ub)');
  let bounds = UPPER_BOUNDS.get(index);
  if (!bounds) {
    const { start, tfw } = index;
    const terms = start.length - 1;
    bounds = new Float64Array(Math.max(0, terms));
    for (let t = 0; t < terms; t++) {
      let max = 0;
      for (let i = start[t], end = start[t + 1]; i < end; i++) if (tfw[i] > max) max = tfw[i];
      bounds[t] = max;
    }
    UPPER_BOUNDS.set(index, bounds);
  }
  return bounds;
}

const UPPER_BOUNDS = new WeakMap<Bm25fData, Float64Array>();
const EMPTY_DOCS = new Int32Array(0);
const EMPTY_TFW = new Float64Array(0);

/** What a top-k search did: postings read and documents fully scored (operation counts, not time). */
export interface TopKStats {
  postings: number;
  scored: number;
}

/**
 * The `k` documents with the highest BM25F score for the terms, best first (ties: lower document
 * first), exactly as accumulateBm25f over every posting followed by a sort would rank them, with
 * the same scores to the last bit: MaxScore (Turtle and Flood) document at a time. The query's
 * lists are ordered by their upper bound (termUpperBounds x idf x weight); once k documents are
 * held, the lists whose bounds sum to less than the k-th score are "non-essential": a document
 * found only in them cannot enter, so only the other lists are walked, the non-essential ones are
 * only probed (galloping search) for the documents the essential lists name, and a document is
 * dropped as soon as its partial score plus the bounds of the lists not yet probed falls below
 * the k-th score. A document that is kept is scored in the query's term order, as
 * accumulateBm25f adds, so its score is bit-identical.
 *
 * `termWeights` must not be negative (a bound would not bound); terms of weight 0 or outside the
 * dictionary (-1) add nothing. `scratch` may be reused between calls of one thread (no
 * allocation proportional to the corpus: everything is per query term or per k).
 */
export function topBm25f(
  index: Bm25fData,
  terms: ArrayLike<number>,
  k: number,
  termWeights?: ArrayLike<number>,
  scratch: TopKScratch = new TopKScratch(),
  stats?: TopKStats,
): Array<{ doc: number; score: number }> {
  const { idf, start } = index;
  k = Math.min(Math.floor(k), index.n);
  if (!(k > 0)) return [];
  const bounds = termUpperBounds(index);
  const s = scratch.reserve(terms.length, k);
  // The query's lists (one per query term, in query order), with a posting in them.
  let m = 0;
  for (let q = 0; q < terms.length; q++) {
    const no = terms[q];
    const tw = termWeights ? termWeights[q] : 1;
    if (!(tw >= 0)) throw new RangeError(`topBm25f: term weight ${tw} is negative or not a number`);
    if (no < 0 || start[no] === start[no + 1] || tw === 0) continue;
    const w = idf[no] * tw;
    s.query[m] = q;
    s.weight[m] = w;
    s.bound[m] = w * bounds[no];
    const list = postingList(index, no);
    s.docs[m] = list.docs;
    s.tfw[m] = list.tfw;
    s.cur[m] = 0;
    s.end[m] = list.docs.length;
    s.order[m] = m;
    m++;
  }
  if (m === 0) return [];
  // Lists by ascending bound; prefix[j] = the bounds of the j weakest lists summed.
  const order = s.order.subarray(0, m).sort((a, b) => s.bound[a] - s.bound[b] || a - b);
  s.prefix[0] = 0;
  for (let j = 0; j < m; j++) s.prefix[j + 1] = s.prefix[j] + s.bound[order[j]];
  const heap = s.heap;
  let size = 0;
  /** The k-th best score once k documents are held (a document must beat it to enter). */
  let threshold = -Infinity;
  /** Lists order[0..ne) are non-essential. */
  let ne = 0;
  let postings = 0;
  let scored = 0;
  const { contrib, hit } = s;
  const docsOf = s.docs;
  const tfwOf = s.tfw;
  for (;;) {
    // The next document: the smallest current document of the essential lists.
    let d = 0x7fffffff;
    for (let j = ne; j < m; j++) {
      const l = order[j];
      if (s.cur[l] < s.end[l] && docsOf[l][s.cur[l]] < d) d = docsOf[l][s.cur[l]];
    }
    if (d === 0x7fffffff) break;
    let partial = 0;
    for (let j = ne; j < m; j++) {
      const l = order[j];
      const i = s.cur[l];
      if (i < s.end[l] && docsOf[l][i] === d) {
        const c = s.weight[l] * tfwOf[l][i];
        contrib[l] = c;
        hit[l] = 1;
        partial += c;
        s.cur[l] = i + 1;
        postings++;
      }
    }
    // The non-essential lists, strongest first, while the document can still enter.
    let dropped = false;
    for (let j = ne - 1; j >= 0; j--) {
      if (!mayEnter(partial + s.prefix[j + 1], threshold)) {
        dropped = true;
        break;
      }
      const l = order[j];
      const i = seek(docsOf[l], s.cur[l], s.end[l], d);
      s.cur[l] = i;
      postings++;
      if (i < s.end[l] && docsOf[l][i] === d) {
        const c = s.weight[l] * tfwOf[l][i];
        contrib[l] = c;
        hit[l] = 1;
        partial += c;
      }
    }
    if (!dropped && mayEnter(partial, threshold)) {
      // The score as accumulateBm25f adds it: in query order.
      let score = 0;
      for (let l = 0; l < m; l++) if (hit[l]) score += contrib[l];
      scored++;
      if (size < k) {
        heapPush(heap, size++, d, score);
        if (size === k) threshold = heap.score[0];
      } else if (score > threshold) {
        // Documents come in ascending order, so an equal score loses to the one held.
        heapReplaceTop(heap, size, d, score);
        threshold = heap.score[0];
      }
      if (size === k) while (ne < m && mayNotMatter(s.prefix[ne + 1], threshold)) ne++;
    }
    for (let l = 0; l < m; l++) hit[l] = 0;
  }
  // The lists are not kept past the query (a paged index's may be evicted from its cache).
  docsOf.fill(EMPTY_DOCS, 0, m);
  tfwOf.fill(EMPTY_TFW, 0, m);
  if (stats) {
    stats.postings += postings;
    stats.scored += scored;
  }
  const out: Array<{ doc: number; score: number }> = [];
  for (let i = 0; i < size; i++) out.push({ doc: heap.doc[i], score: heap.score[i] });
  return out.sort((a, b) => b.score - a.score || a.doc - b.doc);
}

/**
 * Bounds are sums in another order than the scores they bound, so they can be off by a few
 * units in the last place: a document is only dropped when its bound is clearly below the k-th
 * score (relative margin far above rounding, far below any real score difference).
 */
const MARGIN = 1e-9;
const mayEnter = (bound: number, threshold: number) => bound * (1 + MARGIN) >= threshold;
/** Whether lists whose bounds sum to `sum` cannot lift a document past the k-th score alone. */
const mayNotMatter = (sum: number, threshold: number) => sum * (1 + MARGIN) < threshold;

/** The first position in docs[from..end) holding a document >= d (galloping, then binary search). */
function seek(docs: Int32Array, from: number, end: number, d: number): number {
  if (from >= end || docs[from] >= d) return from;
  let step = 1;
  let lo = from;
  let hi = from + 1;
  while (hi < end && docs[hi] < d) {
    lo = hi;
    step *= 2;
    hi = Math.min(end, hi + step);
  }
  // docs[lo] < d; the answer is in (lo, hi].
  let a = lo + 1;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >> 1;
    if (docs[mid] < d) a = mid + 1;
    else b = mid;
  }
  return a;
}

interface Heap {
  doc: Int32Array;
  score: Float64Array;
}

/** Whether heap entry a ranks below entry b (lower score; on a tie, the later document). */
const below = (h: Heap, a: number, b: number) => h.score[a] < h.score[b] || (h.score[a] === h.score[b] && h.doc[a] > h.doc[b]);

function swap(h: Heap, a: number, b: number): void {
  const d = h.doc[a];
  h.doc[a] = h.doc[b];
  h.doc[b] = d;
  const s = h.score[a];
  h.score[a] = h.score[b];
  h.score[b] = s;
}

/** Adds to a min-heap (the worst held document on top) of `size` entries. */
function heapPush(h: Heap, size: number, doc: number, score: number): void {
  let i = size;
  h.doc[i] = doc;
  h.score[i] = score;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!below(h, i, p)) break;
    swap(h, i, p);
    i = p;
  }
}

function heapReplaceTop(h: Heap, size: number, doc: number, score: number): void {
  h.doc[0] = doc;
  h.score[0] = score;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let least = i;
    if (l < size && below(h, l, least)) least = l;
    if (r < size && below(h, r, least)) least = r;
    if (least === i) return;
    swap(h, i, least);
    i = least;
  }
}

/** Per-query buffers of topBm25f, grown as needed and reused (one per thread). */
export class TopKScratch {
  query = new Int32Array(0);
  weight = new Float64Array(0);
  bound = new Float64Array(0);
  cur = new Int32Array(0);
  end = new Int32Array(0);
  order = new Int32Array(0);
  prefix = new Float64Array(1);
  contrib = new Float64Array(0);
  hit = new Uint8Array(0);
  docs: Int32Array[] = [];
  tfw: Float64Array[] = [];
  heap: Heap = { doc: new Int32Array(0), score: new Float64Array(0) };

  reserve(terms: number, k: number): this {
    if (this.query.length < terms) {
      this.query = new Int32Array(terms);
      this.weight = new Float64Array(terms);
      this.bound = new Float64Array(terms);
      this.cur = new Int32Array(terms);
      this.end = new Int32Array(terms);
      this.order = new Int32Array(terms);
      this.prefix = new Float64Array(terms + 1);
      this.contrib = new Float64Array(terms);
      this.hit = new Uint8Array(terms);
    }
    while (this.docs.length < terms) {
      this.docs.push(EMPTY_DOCS);
      this.tfw.push(EMPTY_TFW);
    }
    if (this.heap.doc.length < k) this.heap = { doc: new Int32Array(k), score: new Float64Array(k) };
    return this;
  }
}
