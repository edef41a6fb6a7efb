/**
 * `refdesk add <folder|file|archive> [--name N]`: any target that is neither a URL nor another
 * source's form is a local path (the fallback); the library is /docs/<name>, the name the file's
 * by default.
 */
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { CliTargetDeclaration } from '../../core/define.ts';
import { RefdeskError } from '../../core/errors.ts';
import { slugifyLibraryName } from '../../core/library-id.ts';

export const uploadCliTarget: CliTargetDeclaration = {
  matchTarget: () => 1,
  toSpec({ target, name }) {
    const path = resolve(target);
    if (!existsSync(path)) throw new RefdeskError('invalid_source', `add: ${target} does not exist (give a folder, a file, an archive, a URL or npm:/pypi:<package>).`);
    return { spec: { path }, name: name ?? slugifyLibraryName(basename(path).replace(/\.(zip|tar\.gz|tgz|md|mdx|txt)$/i, '')) };
  },
};
