import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { create as createTar } from 'tar';
import { isSkippedName, walkFolder } from '../core/folder-walk.ts';

/**
 * The bytes to send to a server's upload route: an archive as it is, a folder or a single file
 * packed as .tar.gz (without the names the upload source never reads: hidden ones such as .git,
 * node_modules). A folder is walked by the same rule the
 * upload source applies when it reads a folder itself (core/folder-walk.ts): symlinks inside the
 * folder are packed as the files they point to, under the link's own path; links leaving the
 * folder, broken links and special files are left out and reported to `onSkip`.
 */
export async function packForUpload(path: string, onSkip: (path: string, reason: string) => void = () => {}): Promise<Buffer> {
  const st = await stat(path);
  if (st.isFile() && /\.(zip|tar\.gz|tgz|tar)$/i.test(path)) return readFile(path);
  // A folder goes in under its own name: the upload source strips that single top-level folder,
  // so paths come out relative to the folder, exactly as when `add` reads the folder itself.
  const real = await realpath(path);
  const cwd = dirname(real);
  const top = basename(real);
  const entries = [top];
  if (st.isDirectory()) {
    for await (const f of walkFolder(real, { skipName: isSkippedName, onSkip })) entries.push(`${top}/${f.path}`);
  }
  const chunks: Buffer[] = [];
  // Only the listed entries (noDirRecurse), with links read through (follow): the walk has
  // already decided which links stay inside the folder.
  const stream = createTar({ gzip: true, cwd, portable: true, follow: true, noDirRecurse: true }, entries);
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}
