/**
 * The trust score (an integer 0-10) of a library: how far a reader can trust that its
 * documentation is the project's own, used, current and complete. The `minTrustScore` policy
 * filter (server/access/policy.ts) and library search (core/library-search.ts) rely on it. One pure
 * function, computed by the kernel when a build of the default version is finalized; the formula
 * is documented in docs/library-scores.md. Four parts, summed and rounded:
 *
 * - provenance, 0-3: 1 for documentation sent as files (an upload: a source whose `addPayload` is `files`), 2 for any other source (a repository, a registry, a
 *   site, a space), +1 when the source reports the documentation as the owner's own (`official`);
 * - popularity, 0-3: stars on a log scale, 3 x log10(1 + stars) / 5 (10 -> 0.6, 1k -> 1.8,
 *   100k -> 3); sources without stars get 0;
 * - freshness, 0-2: the upstream's last change (commit, release) 180 days old or less: 2, two
 *   years or less: 1, older: 0; unknown (the source does not say): 1;
 * - completeness, 0-2: 2 x (documents kept / documents seen) x min(1, log10(1 + snippets) / 2),
 *   so a build needs about 100 snippets and no skipped documents for the full 2; none: 0.
 */

export interface TrustInputs {
  /** The documentation came as files sent to this server (a source whose `addPayload` is `files`, e.g. `upload`), not from where the project publishes it. */
  localFiles: boolean;
  /** The source reported the documentation as published by the project's owner. */
  official?: boolean;
  stars?: number;
  /** ISO 8601 date of the upstream's last change, when the source knows it. */
  updatedAt?: string;
  /** When the score is computed (the build's end). */
  now: Date;
  /** Documents that made it into the build. */
  documents: number;
  /** Documents the source or the kernel skipped (unreadable, chunker failure, over a limit...). */
  skippedDocuments: number;
  /** Snippets in the build. */
  snippets: number;
}

/** The four parts of the score, before rounding (for docs and tests). */
export interface TrustParts {
  provenance: number;
  popularity: number;
  freshness: number;
  completeness: number;
}

const DAY_MS = 86_400_000;
const clamp = (x: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, x));
const nonNegative = (x: number | undefined) => (typeof x === 'number' && Number.isFinite(x) && x > 0 ? x : 0);

export function trustParts(input: TrustInputs): TrustParts {
  const provenance = (input.localFiles ? 1 : 2) + (input.official ? 1 : 0);
  const popularity = clamp((3 * Math.log10(1 + nonNegative(input.stars))) / 5, 0, 3);
  let freshness = 1;
  const updated = input.updatedAt ? Date.parse(input.updatedAt) : NaN;
  if (Number.isFinite(updated)) {
    const ageDays = (input.now.getTime() - updated) / DAY_MS;
    freshness = ageDays <= 180 ? 2 : ageDays <= 730 ? 1 : 0;
  }
  const documents = nonNegative(input.documents);
  const seen = documents + nonNegative(input.skippedDocuments);
  const snippets = nonNegative(input.snippets);
  const completeness = seen === 0 || snippets === 0 ? 0 : 2 * (documents / seen) * Math.min(1, Math.log10(1 + snippets) / 2);
  return { provenance, popularity, freshness, completeness };
}

/** The trust score, an integer from 0 to 10. */
export function trustScore(input: TrustInputs): number {
  const p = trustParts(input);
  return clamp(Math.round(p.provenance + p.popularity + p.freshness + p.completeness), 0, 10);
}
