/**
 * The units of one search (sections and parent sections, core/search/lexical-index.ts) and how
 * they become the answer's order: the ranked units in reusable typed arrays, their order fused
 * with a page-level ranking, and the run of adjacent sections a taken unit grows over.
 */

/**
 * The ranked units of one search (sections, then parents) in typed arrays reused from search to
 * search, and their order: best score first, then parents before sections... as the comparator
 * says (a total order, so a partial sort gives the same first units as a full one).
 */
export class UnitBuffer {
  score = new Float64Array(256);
  sec = new Int32Array(256);
  par = new Int32Array(256);
  order = new Int32Array(256);
  private scratch = new Float64Array(256);
  length = 0;
  /** order[0..sortedLength) is the start of the full order. */
  sortedLength = 0;

  fill(touched: readonly number[], scores: Float64Array, ptouched: readonly number[], pscores: Float64Array, parentWeight: number): void {
    const n = touched.length + ptouched.length;
    if (n > this.score.length) {
      const cap = Math.max(n, 2 * this.score.length);
      this.score = new Float64Array(cap);
      this.sec = new Int32Array(cap);
      this.par = new Int32Array(cap);
      this.order = new Int32Array(cap);
      this.scratch = new Float64Array(cap);
    }
    let u = 0;
    for (const k of touched) {
      this.score[u] = scores[k];
      this.sec[u] = k;
      this.par[u] = -1;
      this.order[u] = u;
      u++;
    }
    for (const p of ptouched) {
      this.score[u] = pscores[p] * parentWeight;
      this.sec[u] = -1;
      this.par[u] = p;
      this.order[u] = u;
      u++;
    }
    this.length = n;
    this.sortedLength = 0;
  }

  private readonly compare = (i: number, j: number): number =>
    this.score[j] - this.score[i] || this.par[i] - this.par[j] || this.sec[i] - this.sec[j];

  /** Sorts at least the first `k` units into place; returns the order (valid up to `length`). */
  top(k: number): Int32Array {
    const n = this.length;
    const order = this.order;
    if (n <= 2 * k) {
      order.subarray(0, n).sort(this.compare);
      this.sortedLength = n;
      return order;
    }
    // The k-th best score; every unit scoring at least that comes first, in order.
    const kth = kthLargest(this.score, n, k, this.scratch);
    let m = 0;
    for (let u = 0; u < n; u++) if (this.score[u] >= kth) order[m++] = u;
    let rest = m;
    for (let u = 0; u < n; u++) if (this.score[u] < kth) order[rest++] = u;
    order.subarray(0, m).sort(this.compare);
    this.sortedLength = m;
    return order;
  }

  /** Sorts the units after the sorted start (all score less than it). */
  sortRest(): void {
    this.order.subarray(this.sortedLength, this.length).sort(this.compare);
    this.sortedLength = this.length;
  }
}

/** The k-th largest of values[0..n) (1-based k <= n), by quickselect on a copy in `tmp`. */
function kthLargest(values: Float64Array, n: number, k: number, tmp: Float64Array): number {
  tmp.set(values.subarray(0, n));
  const target = k - 1;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const pivot = tmp[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (tmp[i] > pivot) i++;
      while (tmp[j] < pivot) j--;
      if (i <= j) {
        const x = tmp[i];
        tmp[i] = tmp[j];
        tmp[j] = x;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return tmp[target];
}

/**
 * Reciprocal rank fusion of the first `depth` units of `ord` with the ranking of their pages:
 * each is re-ordered by 1 / (k + its rank) + weight / (k + its page's rank among `pageScores`,
 * the page-level BM25F scores of the pages the question touched). `pageScoreOf(u)` is the score
 * of unit u's page (0: untouched). Reorders `ord` in place and returns the scores the first
 * `depth` units report: the unit ranking's values in order (the r-th unit gets the r-th best
 * score), so the answer's cut-off works as before.
 */
export function fuseWithPages(
  ord: Int32Array,
  units: UnitBuffer,
  pageScoreOf: (u: number) => number,
  pageScores: readonly number[],
  k: number,
  weight: number,
  depth: number,
): Float64Array {
  const sorted = [...pageScores].sort((a, b) => b - a);
  /** 1 + the number of pages scoring more than `v`. */
  const pageRank = (v: number) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] > v) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
  const n = Math.min(units.length, Math.max(depth, 0));
  const shown = new Float64Array(n);
  const head = [];
  for (let r = 0; r < n; r++) {
    const u = ord[r];
    shown[r] = units.score[u];
    const v = pageScoreOf(u);
    head.push({ u, r, fused: 1 / (k + r + 1) + (v > 0 ? weight / (k + pageRank(v)) : 0) });
  }
  head.sort((a, b) => b.fused - a.fused || a.r - b.r);
  for (let r = 0; r < n; r++) ord[r] = head[r].u;
  return shown;
}

/** What growRun needs to know of the sections. */
export interface RunContext {
  pageOf: Int32Array;
  secTokens: Float64Array;
  /** The sections' scores after every lift. */
  scores: Float64Array;
  /** 1 for a section already in the answer. */
  taken: Uint8Array;
  ratio: number;
  maxTokens: number;
}

/**
 * The run of sections grown from `secs` (consecutive, one file) over the adjacent untaken
 * sections of its file that score at least `ratio` x `score`, best neighbour first, while the run
 * stays within `maxTokens`.
 */
export function growRun(secs: readonly number[], score: number, c: RunContext): number[] {
  let lo = secs[0];
  let hi = secs[secs.length - 1];
  let size = secs.reduce((n, k) => n + c.secTokens[k], 0);
  const nsec = c.pageOf.length;
  for (;;) {
    let pick = -1;
    for (const k of [lo - 1, hi + 1]) {
      if (k < 0 || k >= nsec || c.pageOf[k] !== c.pageOf[lo] || c.taken[k]) continue;
      if (c.scores[k] < c.ratio * score || size + c.secTokens[k] > c.maxTokens) continue;
      if (pick < 0 || c.scores[k] > c.scores[pick]) pick = k;
    }
    if (pick < 0) break;
    size += c.secTokens[pick];
    if (pick < lo) lo = pick;
    else hi = pick;
  }
  const out: number[] = [];
  for (let k = lo; k <= hi; k++) out.push(k);
  return out;
}

/**
 * The heading path of a run of sections: the headings they all sit under, then the headings
 * right below that (one per section or subtree, in order) joined by " · ", so the snippet's
 * title names what it holds ("Binders > Header · Query").
 */
export function runPath(paths: ReadonlyArray<readonly string[]>): string[] {
  const prefix: string[] = [];
  for (let d = 0; paths.every((p) => d < p.length && p[d] === paths[0][d]); d++) prefix.push(paths[0][d]);
  const below = [...new Set(paths.filter((p) => p.length > prefix.length).map((p) => p[prefix.length]))];
  return below.length > 0 ? [...prefix, below.join(' · ')] : prefix;
}
