/** Crash-safe file replacement: readers see the old file or the new one, never a partial one. */
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { unlinkIfPresent } from '../../core/missing-files.ts';

/** The temporary name this process writes before renaming over `file`. */
export function tempFileName(file: string, pid = process.pid): string {
  return `${file}.tmp-${pid}`;
}

/**
 * Writes `data` to `<file>.tmp-<pid>`, fsyncs it, renames it over `file`, then fsyncs the
 * directory so the rename itself is durable. On failure the temporary file is removed and
 * `file` is left as it was. Callers must not run two writes of the same file at once.
 */
export async function writeFileAtomic(file: string, data: Uint8Array | readonly Uint8Array[]): Promise<void> {
  const tmp = tempFileName(file);
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(tmp, 'w', 0o644);
    let position = 0;
    for (const chunk of data instanceof Uint8Array ? [data] : data) {
      let offset = 0;
      while (offset < chunk.length) {
        const { bytesWritten } = await fh.write(chunk, offset, chunk.length - offset, position);
        offset += bytesWritten;
        position += bytesWritten;
      }
    }
    await fh.sync();
    await fh.close();
    fh = undefined;
    await rename(tmp, file);
  } catch (err) {
    if (fh) await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await fsyncDirectory(dirname(file));
}

/** Makes a directory's entries (a rename, a new file) durable. A no-op where unsupported. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let dh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    dh = await open(dir, 'r');
    await dh.sync();
  } catch (err) {
    // Windows cannot open or fsync directories; some file systems refuse directory fsync.
    const code = (err as NodeJS.ErrnoException).code;
    if (!['EISDIR', 'EPERM', 'EACCES', 'EINVAL', 'EBADF', 'ENOTSUP'].includes(code ?? '')) throw err;
  } finally {
    if (dh) await dh.close().catch(() => {});
  }
}

/** Removes `<file>.tmp-*` files left behind by processes that crashed mid-write. */
export async function removeStaleTempFiles(file: string): Promise<string[]> {
  const dir = dirname(file);
  const prefix = `${basename(file)}.tmp-`;
  const removed: string[] = [];
  for (const name of await readdir(dir)) {
    if (!name.startsWith(prefix)) continue;
    if (await unlinkIfPresent(join(dir, name))) removed.push(name);
  }
  return removed;
}
