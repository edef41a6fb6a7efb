/**
 * Removal of a build's files beside the database (index segments, snippet packs), shared by
 * their modules: by build id, and the sweep at open of files no finalized build references.
 */
import { join } from 'node:path';
import { readdirOrEmpty, unlinkIfPresent } from '../../core/missing-files.ts';

/** Removes the file `nameOf(id)` of each build in `dir` (ids that are not plain names are skipped); returns the names removed. */
export async function removeBuildFiles(dir: string, buildIds: readonly string[], nameOf: (buildId: string) => string): Promise<string[]> {
  const removed: string[] = [];
  for (const id of buildIds) {
    if (!/^[\w-]+$/.test(id)) continue;
    if (await unlinkIfPresent(join(dir, nameOf(id)))) removed.push(nameOf(id));
  }
  return removed;
}

/** Removes the files of `dir` whose name contains `marker` (temporary ones included) and that `keep` does not hold; returns the names removed. */
export async function removeUnkeptFiles(dir: string, marker: string, keep: ReadonlySet<string>): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdirOrEmpty(dir)) {
    if (!name.includes(marker) || keep.has(name)) continue;
    if (await unlinkIfPresent(join(dir, name))) removed.push(name);
  }
  return removed;
}
