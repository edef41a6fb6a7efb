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
  const cwd = st.isDirectory() ? path : dirname(path);
  const entries = st.isDirectory() ? ['.'] : [basename(path)];
  const chunks: Buffer[] = [];
  const stream = createTar(
    { gzip: true, cwd, portable: true, filter: (p: string) => !/(^|\/)(node_modules|\.git)(\/|$)/.test(p) },
    entries,
  );
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}
