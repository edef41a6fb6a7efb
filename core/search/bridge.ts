/**
 * Vocabulary bridging mined from the library's own text (issue 22 item 2): a question word is
 * associated with the words of the headings of the sections that use it. A reference entry's
 * heading is its qualified name (`subprocess.check_output`, with its parts), and its body the
 * words that describe it ("run command with arguments and return its output"), so a question in
 * the description's words reaches the name; a guide's heading ("Graceful shutdown") is reached
 * from the words of its body the same way.
 *
 * For a word q held by n_q sections, a heading word h held by the headings of c of them and of
 * n_h sections in all (N sections) is an associate when c >= minCount and its lift
 * c x N / (n_q x n_h) >= minLift; its strength is the normalised pointwise mutual information
 * ln(lift) / ln(N / c), in (0, 1]: 1 when h heads exactly q's sections, near 0 when it heads them
 * no more often than chance. The `maxAssociates` with the most evidence are kept: the highest
 * c x ln(lift) (a pair seen in two sections by chance is not preferred to one seen in ten).
 *
 * Nothing is stored: associates are counted from the index's postings (the sections holding q)
 * and its heading lists when a question asks for a word, and remembered for the next question
 * (a bounded cache). The cost of one word is the number of sections holding it times their
 * heading length.
 */
import type { Ragged } from './index-data.ts';

export interface BridgeOptions {
  /** Associates kept per word (the strongest). */
  maxAssociates: number;
  /** Fewest sections that must hold q in their text and h in their heading. */
  minCount: number;
  /** Smallest lift (how many times more often h heads q's sections than sections at large). */
  minLift: number;
  /** A word held by more than this share of the sections gets no associates (it says nothing). */
  maxShare: number;
  /**
   * Only code names are associates (a heading word holding `.`, `_`, `::`, `#`, `$` or `-`:
   * `check_output`, `subprocess.check_output`, `ctx.throw`): the name of a reference entry from
   * the words of its description, not one plain word from another.
   */
  namesOnly: boolean;
}

export const DEFAULT_BRIDGE: BridgeOptions = { maxAssociates: 3, minCount: 2, minLift: 4, maxShare: 0.05, namesOnly: false };

const CODE_NAME = /[a-z_$][\w$]*(?:\.|_|::|#|-)/i;

/** What the miner reads of an index: postings (term -> sections) and each section's heading words. */
export interface BridgeSource {
  /** Sections holding term t (any field): docs[start[t]..start[t+1]). */
  postings: { start: Int32Array; docs: Int32Array };
  /** Each section's own heading, as term numbers. */
  head: Ragged;
}

export interface Associate {
  /** Term number. */
  no: number;
  /** Strength in (0, 1]. */
  s: number;
}

/** Words remembered (their associates) from question to question. */
const CACHE_SIZE = 2048;

export class HeadingBridge {
  private readonly nsec: number;
  /** Sections whose own heading holds each term. */
  private readonly headDf: Int32Array;
  private readonly cache = new Map<number, readonly Associate[]>();
  private readonly counts: Int32Array;
  private readonly seen: number[] = [];

  /** 1 for a term that may be an associate. */
  private readonly eligible: Uint8Array | undefined;

  /** `terms`: the index's words by term number. */
  constructor(
    private readonly source: BridgeSource,
    terms: readonly string[],
    private readonly options: BridgeOptions = DEFAULT_BRIDGE,
  ) {
    const nterms = terms.length;
    this.eligible = options.namesOnly ? Uint8Array.from(terms, (t) => (CODE_NAME.test(t) ? 1 : 0)) : undefined;
    const { head } = source;
    this.nsec = head.start.length - 1;
    this.headDf = new Int32Array(nterms);
    this.counts = new Int32Array(nterms);
    for (let d = 0; d < this.nsec; d++) this.forHeading(d, (t) => this.headDf[t]++);
  }

  /** Calls `f` once for each distinct term of section d's heading. */
  private forHeading(d: number, f: (t: number) => void): void {
    const { start, items } = this.source.head;
    const lo = start[d];
    const hi = start[d + 1];
    outer: for (let i = lo; i < hi; i++) {
      for (let j = lo; j < i; j++) if (items[j] === items[i]) continue outer;
      f(items[i]);
    }
  }

  /** The associates of term q, most evidence first (ties: lower term number first). */
  associates(q: number): readonly Associate[] {
    const hit = this.cache.get(q);
    if (hit) return hit;
    const out = this.mine(q);
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(q, out);
    return out;
  }

  private mine(q: number): readonly Associate[] {
    const { start, docs } = this.source.postings;
    const N = this.nsec;
    const nq = start[q + 1] - start[q];
    const { minCount, minLift, maxShare, maxAssociates } = this.options;
    if (nq < minCount || nq > maxShare * N || N < 2) return [];
    const { counts, seen } = this;
    for (let i = start[q]; i < start[q + 1]; i++)
      this.forHeading(docs[i], (t) => {
        if (counts[t]++ === 0) seen.push(t);
      });
    const out: Array<Associate & { rank: number }> = [];
    for (const h of seen) {
      const c = counts[h];
      counts[h] = 0;
      if (h === q || c < minCount || (this.eligible && !this.eligible[h])) continue;
      const lift = (c * N) / (nq * this.headDf[h]);
      if (lift < minLift) continue;
      out.push({ no: h, s: Math.min(1, Math.log(lift) / Math.log(N / c)), rank: c * Math.log(lift) });
    }
    seen.length = 0;
    out.sort((a, b) => b.rank - a.rank || a.no - b.no);
    return out.slice(0, maxAssociates).map(({ no, s }) => ({ no, s }));
  }
}
