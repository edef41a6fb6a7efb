/**
 * File-system calls for which a missing file or folder is an ordinary answer, not an error:
 * sweeps of folders that may not exist yet and removals of files that may be gone already.
 * Any other failure (permissions, I/O) is thrown as it is.
 */
import { readdir, unlink } from 'node:fs/promises';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** The names in `dir`, or none when the folder does not exist. */
export async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
}

/** Removes `file`; false when it was not there. */
export async function unlinkIfPresent(file: string): Promise<boolean> {
  try {
    await unlink(file);
    return true;
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}
