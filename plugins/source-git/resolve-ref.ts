/**
 * Which ref a read uses: the default version ('') is `spec.branch` or the remote's default
 * branch; a pinned version is a tag of that name (also tried with or without a leading `v`),
 * else a branch of that name.
 */
import { RefdeskError } from '../../core/errors.ts';
import { compareVersionsDesc } from './versions.ts';
import type { RemoteRefs } from './git-repo.ts';

export interface ResolvedRef {
  /** The name handed to `git clone --branch` ('' for the remote's default). */
  name: string;
  kind: 'tag' | 'branch' | 'default';
  commit: string;
}

export function resolveRef(refs: RemoteRefs, version: string, branch: string | undefined, display: string): ResolvedRef {
  if (refs.heads.size === 0 && refs.tags.size === 0) {
    throw new RefdeskError('no_documentation', `No documentation found: the repository ${display} is empty (it has no branches).`);
  }
  if (version === '') {
    const name = branch ?? refs.defaultBranch;
    const commit = name ? refs.heads.get(name) : undefined;
    if (!commit) {
      if (branch) {
        const known = [...refs.heads.keys()].slice(0, 20).join(', ');
        throw new RefdeskError('invalid_source', `The branch "${branch}" does not exist in ${display} (branches: ${known || 'none'}).`);
      }
      const first = [...refs.heads.entries()][0];
      if (!first) throw new RefdeskError('no_documentation', `No documentation found: the repository ${display} has no branches.`);
      return { name: first[0], kind: 'branch', commit: first[1] };
    }
    return { name, kind: branch ? 'branch' : 'default', commit };
  }
  const candidates = [version, version.startsWith('v') ? version.slice(1) : `v${version}`];
  for (const c of candidates) {
    const commit = refs.tags.get(c);
    if (commit) return { name: c, kind: 'tag', commit };
  }
  const head = refs.heads.get(version);
  if (head) return { name: version, kind: 'branch', commit: head };
  const tags = [...refs.tags.keys()].sort(compareVersionsDesc).slice(0, 20);
  throw new RefdeskError(
    'version_not_found',
    `The version "${version}" is neither a tag nor a branch of ${display} (tags: ${tags.join(', ') || 'none'}).`,
  );
}
