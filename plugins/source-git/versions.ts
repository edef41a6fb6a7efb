/** Orders tag names newest first: by semantic version when both parse, else by name. */
import semver from 'semver';

export function compareVersionsDesc(a: string, b: string): number {
  const va = semver.coerce(a, { includePrerelease: true });
  const vb = semver.coerce(b, { includePrerelease: true });
  const sa = semver.valid(a.replace(/^v/, '')) ?? va?.version;
  const sb = semver.valid(b.replace(/^v/, '')) ?? vb?.version;
  if (sa && sb) {
    const c = semver.rcompare(sa, sb);
    if (c !== 0) return c;
  } else if (sa) return -1;
  else if (sb) return 1;
  return a < b ? 1 : a > b ? -1 : 0;
}
