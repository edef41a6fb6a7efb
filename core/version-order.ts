/** Ordering of pinned versions: newest first. */

const VERSION_LIKE = /^v?(\d+(?:\.(?:\d+|x))*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/i;

interface ParsedVersion {
  parts: number[];
  prerelease: string | null;
}

function parseVersion(v: string): ParsedVersion | null {
  const m = VERSION_LIKE.exec(v);
  if (!m) return null;
  return {
    parts: m[1].split('.').map((p) => (p.toLowerCase() === 'x' ? Number.MAX_SAFE_INTEGER : Number(p))),
    prerelease: m[2] ?? null,
  };
}

const collator = new Intl.Collator('en', { numeric: true });

/** Ascending comparison of two version-like strings by numeric segments; releases after prereleases. */
function compareParsed(a: ParsedVersion, b: ParsedVersion): number {
  const n = Math.max(a.parts.length, b.parts.length);
  for (let i = 0; i < n; i++) {
    const d = (a.parts[i] ?? 0) - (b.parts[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  if (a.prerelease === b.prerelease) return 0;
  if (a.prerelease === null) return 1;
  if (b.prerelease === null) return -1;
  return collator.compare(a.prerelease, b.prerelease);
}

/**
 * Sorts versions newest first: by version number when every version looks like one
 * (`1.2.3`, `v2`, `3.x`, `2.0.0-beta.1`), otherwise by last update date (newest first).
 */
export function sortVersionsNewestFirst<T extends { version: string; lastUpdateDate: string | null }>(items: T[]): T[] {
  const parsed = new Map(items.map((it) => [it, parseVersion(it.version)]));
  const allVersionLike = [...parsed.values()].every((p) => p !== null);
  return [...items].sort((a, b) => {
    if (allVersionLike) {
      const d = compareParsed(parsed.get(b)!, parsed.get(a)!);
      if (d !== 0) return d;
    } else {
      const da = a.lastUpdateDate ?? '';
      const db = b.lastUpdateDate ?? '';
      if (da !== db) return da < db ? 1 : -1;
    }
    return collator.compare(b.version, a.version);
  });
}
