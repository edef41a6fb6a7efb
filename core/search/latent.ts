/**
 * A low-rank latent model of a library's sections (latent semantic indexing), learned from the
 * sections themselves with no outside model or data: the section x term matrix (log tf x idf,
 * rows of unit length) is reduced to its `rank` strongest directions by a randomized SVD (Halko,
 * Martinsson and Tropp 2011: a random +-1 sketch, `powerIterations` passes, an exact SVD of the
 * small projected matrix). Words that keep appearing in the same sections share directions, so a
 * question is near a section that speaks of its subject in other words too. Deterministic
 * (seeded). The build is a few passes over the matrix' non-zeros times (rank + 8) and a few dense
 * products of that width; the model keeps a rank-wide vector per section and per term.
 */

export interface LatentOptions {
  rank: number;
  powerIterations: number;
  /** Terms in fewer documents are left out (they shape no direction). */
  minDf: number;
  /** Terms in more than this share of documents are left out. */
  maxDfShare: number;
  seed: number;
}

export const DEFAULT_LATENT: LatentOptions = { rank: 48, powerIterations: 1, minDf: 2, maxDfShare: 0.5, seed: 1 };

export interface LatentModel {
  /** Directions kept (0: too few documents or terms to have any; every query is then undefined). */
  readonly rank: number;
  /** The weighted terms folded into the latent space, unit length (undefined when no term is known). */
  query(terms: readonly string[], weights: readonly number[]): Float64Array | undefined;
  /** Cosine of a folded query with document `doc` (0 for a document with no known term). */
  similarity(query: Float64Array, doc: number): number;
}

/** `fields[f][d]`: the tokens of field f of document d; a document is all its fields' tokens. */
export function buildLatentModel(fields: ReadonlyArray<ReadonlyArray<readonly string[]>>, options: LatentOptions = DEFAULT_LATENT): LatentModel {
  const fit = fitLatent(fields, options);
  if (!fit) return { rank: 0, query: () => undefined, similarity: () => 0 };
  const { k, l, termCol, idf, termRows, eInv, docVec } = fit;
  return {
    rank: k,
    query(terms, weights) {
      const q = new Float64Array(k);
      let any = false;
      terms.forEach((t, i) => {
        const c = termCol.get(t);
        if (c === undefined) return;
        any = true;
        // The term's direction: its row of W = B^T E S^-1.
        const w = weights[i] * idf[c];
        for (let j = 0; j < l; j++) {
          const b = w * termRows[c * l + j];
          if (b !== 0) for (let r = 0; r < k; r++) q[r] += b * eInv[j * k + r];
        }
      });
      let norm = 0;
      for (let r = 0; r < k; r++) norm += q[r] * q[r];
      norm = Math.sqrt(norm);
      if (!any || norm === 0) return undefined;
      for (let r = 0; r < k; r++) q[r] /= norm;
      return q;
    },
    similarity(q, doc) {
      let dot = 0;
      const o = doc * k;
      for (let r = 0; r < k; r++) dot += q[r] * docVec[o + r];
      return dot;
    },
  };
}

interface LatentFit {
  k: number;
  l: number;
  termCol: Map<string, number>;
  idf: Float64Array;
  /** B^T (v x l): row c belongs to term column c. */
  termRows: Float32Array;
  /** E S^-1 (l x k). */
  eInv: Float64Array;
  /** Row d: document d's coordinates (A W = Q E S), unit length. */
  docVec: Float32Array;
}

function fitLatent(fields: ReadonlyArray<ReadonlyArray<readonly string[]>>, options: LatentOptions): LatentFit | undefined {
  const n = fields.length > 0 ? fields[0].length : 0;
  // Term numbers, each document as its term numbers, and document frequencies.
  const termId = new Map<string, number>();
  const docTerms: Int32Array[] = [];
  let dfs = new Int32Array(1024);
  let stamp = new Int32Array(1024).fill(-1);
  let total = 0;
  for (let d = 0; d < n; d++) {
    const ids = new Int32Array(fields.reduce((s, f) => s + f[d].length, 0));
    let i = 0;
    for (const f of fields) {
      for (const t of f[d]) {
        let id = termId.get(t);
        if (id === undefined) {
          termId.set(t, (id = termId.size));
          if (id >= dfs.length) {
            dfs = grow(dfs, 0);
            stamp = grow(stamp, -1);
          }
        }
        ids[i++] = id;
        if (stamp[id] !== d) {
          stamp[id] = d;
          dfs[id]++;
        }
      }
    }
    total += ids.length;
    docTerms.push(ids);
  }
  // Columns: the terms in at least minDf and at most maxDfShare of the documents.
  const colOf = new Int32Array(termId.size).fill(-1);
  const termCol = new Map<string, number>();
  const idfs: number[] = [];
  for (const [t, id] of termId) {
    if (dfs[id] < options.minDf || dfs[id] > options.maxDfShare * n) continue;
    colOf[id] = idfs.length;
    termCol.set(t, idfs.length);
    idfs.push(Math.log(n / dfs[id]));
  }
  const idf = Float64Array.from(idfs);
  const v = idf.length;
  const k = Math.max(0, Math.min(options.rank, n - 1, v - 1));
  const l = Math.min(k + 8, n, v);
  if (k <= 0) return undefined;
  // CSR rows: log tf x idf, unit length.
  const rowStart = new Int32Array(n + 1);
  const cI = new Int32Array(total);
  const cV = new Float64Array(total);
  const tf = new Int32Array(v);
  let nnz = 0;
  for (let d = 0; d < n; d++) {
    const start = nnz;
    for (const id of docTerms[d]) {
      const c = colOf[id];
      if (c >= 0 && tf[c]++ === 0) cI[nnz++] = c;
    }
    let norm = 0;
    for (let i = start; i < nnz; i++) {
      const c = cI[i];
      const w = (1 + Math.log(tf[c])) * idf[c];
      tf[c] = 0;
      cV[i] = w;
      norm += w * w;
    }
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = start; i < nnz; i++) cV[i] /= norm;
    rowStart[d + 1] = nnz;
  }

  /** Y (n x l) = A X (X: v x l), row-major. */
  const mulA = (x: Float64Array): Float64Array => {
    const y = new Float64Array(n * l);
    for (let d = 0; d < n; d++) {
      const yo = d * l;
      for (let i = rowStart[d]; i < rowStart[d + 1]; i++) {
        const w = cV[i];
        const xo = cI[i] * l;
        for (let j = 0; j < l; j++) y[yo + j] += w * x[xo + j];
      }
    }
    return y;
  };
  /** Z (v x l) = A^T Y (Y: n x l). */
  const mulAt = (y: Float64Array): Float64Array => {
    const z = new Float64Array(v * l);
    for (let d = 0; d < n; d++) {
      const yo = d * l;
      for (let i = rowStart[d]; i < rowStart[d + 1]; i++) {
        const w = cV[i];
        const zo = cI[i] * l;
        for (let j = 0; j < l; j++) z[zo + j] += w * y[yo + j];
      }
    }
    return z;
  };

  // The range of A: a random sketch sharpened by power iterations (no orthonormalization between
  // the few passes: double precision keeps the weaker directions apart), then orthonormal: Q (n x l).
  let y = mulA(rademacher(v * l, options.seed));
  for (let p = 0; p < options.powerIterations; p++) y = mulA(mulAt(y));
  orthonormalize(y, n, l);
  // B^T = A^T Q (v x l); B B^T = (B^T)^T B^T (l x l) = E S^2 E^T.
  const bt = mulAt(y);
  const c = new Float64Array(l * l);
  for (let t = 0; t < v; t++) {
    const o = t * l;
    for (let i = 0; i < l; i++) {
      const bi = bt[o + i];
      if (bi === 0) continue;
      for (let j = i; j < l; j++) c[i * l + j] += bi * bt[o + j];
    }
  }
  for (let i = 0; i < l; i++) for (let j = 0; j < i; j++) c[i * l + j] = c[j * l + i];
  const { values, vectors } = jacobiEigen(c, l);
  const order = [...values.keys()].sort((a, b) => values[b] - values[a]).slice(0, k);
  const sv = order.map((e) => Math.sqrt(Math.max(values[e], 0)));
  // E S^-1 and E S (l x k), over the kept directions (a null one gets 0).
  const eInv = new Float64Array(l * k);
  const eS = new Float64Array(l * k);
  for (let r = 0; r < k; r++) {
    for (let i = 0; i < l; i++) {
      const e = vectors[i * l + order[r]];
      eInv[i * k + r] = sv[r] > 1e-9 ? e / sv[r] : 0;
      eS[i * k + r] = e * sv[r];
    }
  }
  return { k, l, termCol, idf, termRows: Float32Array.from(bt), eInv, docVec: project(y, n, l, eS, k) };
}

/** Rows of M (rows x l) times P (l x k), as float32, each of unit length (a null row stays 0). */
function project(m: Float64Array, rows: number, l: number, p: Float64Array, k: number): Float32Array {
  const out = new Float32Array(rows * k);
  const row = new Float64Array(k);
  for (let d = 0; d < rows; d++) {
    row.fill(0);
    for (let i = 0; i < l; i++) {
      const x = m[d * l + i];
      if (x === 0) continue;
      for (let r = 0; r < k; r++) row[r] += x * p[i * k + r];
    }
    let norm = 0;
    for (let r = 0; r < k; r++) norm += row[r] * row[r];
    norm = Math.sqrt(norm) || 1;
    for (let r = 0; r < k; r++) out[d * k + r] = row[r] / norm;
  }
  return out;
}

function grow(a: Int32Array<ArrayBuffer>, fill: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(a.length * 2).fill(fill);
  out.set(a);
  return out;
}

/**
 * Makes the l columns of a row-major rows x l matrix orthonormal in place (Cholesky QR: Q = Y R^-1
 * with R^T R = Y^T Y); a column dependent on the ones before it (its pivot lost to rounding)
 * becomes 0.
 */
function orthonormalize(m: Float64Array, rows: number, l: number): void {
  const g = new Float64Array(l * l);
  for (let r = 0; r < rows; r++) {
    const o = r * l;
    for (let i = 0; i < l; i++) {
      const yi = m[o + i];
      if (yi === 0) continue;
      for (let j = i; j < l; j++) g[i * l + j] += yi * m[o + j];
    }
  }
  // Upper R, row-major.
  const rr = new Float64Array(l * l);
  let maxDiag = 0;
  for (let i = 0; i < l; i++) maxDiag = Math.max(maxDiag, g[i * l + i]);
  for (let i = 0; i < l; i++) {
    let d = g[i * l + i];
    for (let p = 0; p < i; p++) d -= rr[p * l + i] ** 2;
    if (!(d > 1e-12 * maxDiag)) continue;
    const rii = Math.sqrt(d);
    rr[i * l + i] = rii;
    for (let j = i + 1; j < l; j++) {
      let x = g[i * l + j];
      for (let p = 0; p < i; p++) x -= rr[p * l + i] * rr[p * l + j];
      rr[i * l + j] = x / rii;
    }
  }
  // Each row x of Q solves x R = y (forward substitution over the columns).
  for (let r = 0; r < rows; r++) {
    const o = r * l;
    for (let j = 0; j < l; j++) {
      const rjj = rr[j * l + j];
      if (rjj === 0) {
        m[o + j] = 0;
        continue;
      }
      let x = m[o + j];
      for (let p = 0; p < j; p++) x -= m[o + p] * rr[p * l + j];
      m[o + j] = x / rjj;
    }
  }
}

/** Eigenvalues and eigenvectors (columns of `vectors`, row-major l x l) of a symmetric matrix, by cyclic Jacobi. */
function jacobiEigen(input: Float64Array, l: number): { values: number[]; vectors: Float64Array } {
  const a = Float64Array.from(input);
  const vec = new Float64Array(l * l);
  for (let i = 0; i < l; i++) vec[i * l + i] = 1;
  for (let sweep = 0; sweep < 50; sweep++) {
    let off = 0;
    for (let i = 0; i < l; i++) for (let j = i + 1; j < l; j++) off += a[i * l + j] ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < l; p++) {
      for (let q = p + 1; q < l; q++) {
        const apq = a[p * l + q];
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (a[q * l + q] - a[p * l + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const cs = 1 / Math.sqrt(t * t + 1);
        const sn = t * cs;
        for (let r = 0; r < l; r++) {
          const arp = a[r * l + p];
          const arq = a[r * l + q];
          a[r * l + p] = cs * arp - sn * arq;
          a[r * l + q] = sn * arp + cs * arq;
        }
        for (let r = 0; r < l; r++) {
          const apr = a[p * l + r];
          const aqr = a[q * l + r];
          a[p * l + r] = cs * apr - sn * aqr;
          a[q * l + r] = sn * apr + cs * aqr;
        }
        for (let r = 0; r < l; r++) {
          const vrp = vec[r * l + p];
          const vrq = vec[r * l + q];
          vec[r * l + p] = cs * vrp - sn * vrq;
          vec[r * l + q] = sn * vrp + cs * vrq;
        }
      }
    }
  }
  const values: number[] = [];
  for (let i = 0; i < l; i++) values.push(a[i * l + i]);
  return { values, vectors: vec };
}

/** A seeded random matrix of +1 and -1 (mulberry32), as good a sketch as a Gaussian one. */
function rademacher(size: number, seed: number): Float64Array {
  const out = new Float64Array(size);
  let s = seed >>> 0;
  for (let i = 0; i < size; i += 32) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const bits = (t ^ (t >>> 14)) >>> 0;
    for (let b = 0; b < 32 && i + b < size; b++) out[i + b] = (bits >>> b) & 1 ? 1 : -1;
  }
  return out;
}
