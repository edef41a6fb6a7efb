import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { create as createTar } from 'tar';

/**
 * The bytes to send to a server's upload route: an archive as it is, a folder or a single file
 * packed as .tar.gz (without node_modules or .git).
 */
export async function packForUpload(path: string): Promise<Buffer> {
  const st = await stat(path);
  if (st.isFile() && /\.(zip|tar\.gz|tgz|tar)$/i.test(path)) return readFile(path);
  // A folder goes in under its own name: the upload source strips that single top-level folder,
  // so paths come out relative to the folder, exactly as when `add` reads the folder itself.
  const cwd = dirname(path);
  const entries = [basename(path)];
  const chunks: Buffer[] = [];
  const stream = createTar(
    { gzip: true, cwd, portable: true, filter: (p: string) => !/(^|\/)(node_modules|\.git)(\/|$)/.test(p) },
    entries,
  );
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}
