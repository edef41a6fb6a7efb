/**
 * Term proximity (after BM25TP, Büttcher, Clarke and Lushman 2006): a section whose text holds
 * two different words of the question close together is more likely about the question than one
 * that holds them far apart. Each section keeps its token order (term numbers, its fields one
 * after another with a gap between them); at query time, for each pair of question words from
 * different asked words, every occurrence of one within `window` tokens after an occurrence of
 * the other adds 1 / distance^2 to the pair's accumulator; the pair then adds
 * min(weight of either word) x acc / (acc + 1), so a pair counts at most its lighter word's
 * weight, however often it recurs. Only a few best sections are scored, so a query stays cheap.
 */

/** Token order of every section, as term numbers in one flat array. */
export interface PositionIndex {
  /** Per question: a scorer of sections (one or a run of several, as for a parent section). */
  prepare(terms: readonly QueryTerm[], window: number): ProximityScorer | undefined;
  /** Tokens of a section (its fields together). */
  length(section: number): number;
  /** Average tokens of a section. */
  readonly avgLength: number;
  /** Bytes the positions hold (for reports). */
  readonly bytes: number;
}

export interface QueryTerm {
  term: string;
  /** The term's weight in the score (idf-based, synonyms lower). */
  weight: number;
  /**
   * The asked word the term comes from: terms of one word (the parts of `ctx.throw`, a word and
   * its synonyms) are never paired with each other.
   */
  group: number;
}

/**
 * The proximity bonus of a section or a run of sections (summed accumulators, then saturated
 * against the run's length relative to `avgLength`, the average of its kind).
 */
export type ProximityScorer = (sections: readonly number[], avgLength: number) => number;

/** The gap (in term numbers) between fields and sections: no window reaches across it. */
const GAP = -1;

/**
 * Builds the positions. `fields[f][s]` is the token list of field f of section s, in text order;
 * the fields of a section are laid one after another, with a gap between them.
 */
export function buildPositions(fields: ReadonlyArray<ReadonlyArray<readonly string[]>>, b = 0.75): PositionIndex {
  const n = fields.length > 0 ? fields[0].length : 0;
  const termNo = new Map<string, number>();
  let total = 0;
  for (let s = 0; s < n; s++) for (const f of fields) total += f[s].length + 1;
  const seq = new Int32Array(total);
  const start = new Int32Array(n + 1);
  let at = 0;
  for (let s = 0; s < n; s++) {
    start[s] = at;
    for (const f of fields) {
      for (const t of f[s]) {
        let no = termNo.get(t);
        if (no === undefined) termNo.set(t, (no = termNo.size));
        seq[at++] = no;
      }
      seq[at++] = GAP;
    }
  }
  start[n] = at;
  // The question's slot of each term number, valid when its stamp is the current question's.
  const slotOf = new Int32Array(termNo.size);
  const stampOf = new Int32Array(termNo.size);
  let stamp = 0;
  return {
    length: (s) => start[s + 1] - start[s] - fields.length,
    avgLength: n > 0 ? Math.max(1, (total - n * fields.length) / n) : 1,
    bytes: seq.byteLength + start.byteLength + slotOf.byteLength + stampOf.byteLength,
    prepare(terms, window) {
      const slots = terms.filter((q) => termNo.has(q.term) && q.weight > 0);
      if (new Set(slots.map((q) => q.group)).size < 2 || !(window > 0)) return undefined;
      stamp++;
      slots.forEach((q, k) => {
        const no = termNo.get(q.term)!;
        slotOf[no] = k;
        stampOf[no] = stamp;
      });
      const m = slots.length;
      const myStamp = stamp;
      const acc = new Float64Array(m * m);
      const last = new Float64Array(m);
      return (sections, avgLength) => {
        if (stampOf.length === 0 || stamp !== myStamp) return 0;
        acc.fill(0);
        let len = 0;
        for (const s of sections) {
          len += start[s + 1] - start[s] - fields.length;
          last.fill(-Infinity);
          let pos = 0;
          for (let i = start[s]; i < start[s + 1]; i++, pos++) {
            const no = seq[i];
            if (no === GAP) {
              pos += window;
              continue;
            }
            if (stampOf[no] !== myStamp) continue;
            const a = slotOf[no];
            for (let b = 0; b < m; b++) {
              const d = pos - last[b];
              if (d > window || slots[b].group === slots[a].group) continue;
              acc[a < b ? a * m + b : b * m + a] += 1 / (d * d);
            }
            last[a] = pos;
          }
        }
        const norm = 1 - b + (b * len) / Math.max(1, avgLength);
        let bonus = 0;
        for (let a = 0; a < m; a++)
          for (let b = a + 1; b < m; b++) {
            const x = acc[a * m + b];
            if (x > 0) bonus += Math.min(slots[a].weight, slots[b].weight) * (x / (x + norm));
          }
        return bonus;
      };
    },
  };
}
