import { constants, realpathSync, statSync } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { DocumentFormat } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { isInsideFolder, walkFolder } from '../../core/folder-walk.ts';
import { comparePaths, isSkippedName } from './paths.ts';
import { readableTarget, skipTooBig, type PlannedDoc, type ReadEnv, type ReadPlan, type UploadFiles } from './plan.ts';

interface FolderFile {
  /** Relative path (forward slashes). */
  path: string;
  /** Real path to read (symlinks already resolved). */
  file: string;
  size: number;
  format: DocumentFormat;
}

const CHUNK = 64 * 1024;

/** True when `target` is `root` or inside it (both real paths). */
export const isInside = isInsideFolder;

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Walks a folder (sorted, skipping hidden names and node_modules) and plans its documentation
 * files in path order, by the one rule of core/folder-walk.ts (the CLI packs a folder for a
 * running server by the same rule): symlinks are followed, files and folders, when their target
 * stays inside the folder; folder links that loop back are not entered again; links leaving the
 * folder, broken links and special files are skipped with a warning.
 */
export async function planFolder(root: string, env: ReadEnv): Promise<ReadPlan> {
  const realRoot = await realpath(root);
  const files: FolderFile[] = [];
  let plannedBytes = 0;

  const consider = (path: string, file: string, size: number): void => {
    const segments = path.split('/');
    const format = env.selector.accept(segments);
    if (format === null) return;
    if (size > env.limits.maxFileBytes) {
      skipTooBig(env, path, size, true);
      return;
    }
    env.budget.addFile();
    plannedBytes += size;
    env.budget.checkPlannedBytes(plannedBytes);
    files.push({ path, file, size, format });
  };

  try {
    for await (const f of walkFolder(realRoot, {
      skipName: isSkippedName,
      enterFolder: (rel) => env.selector.mayContain(rel),
      wantFile: (rel) => env.selector.accept(rel.split('/')) !== null,
      onSkip: (rel, reason) => env.warn(`Skipped ${rel}: ${reason}`),
      signal: env.signal,
    })) {
      consider(f.path, f.file, f.size);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException)?.code !== undefined && !(e instanceof RefdeskError)) {
      throw new RefdeskError('invalid_source', `Upload folder cannot be read: ${root} (${errCode(e) ?? 'error'})`);
    }
    throw e;
  }
  files.sort((a, b) => comparePaths(a.path, b.path));
  env.debug(`upload: ${files.length} documentation files planned in ${root}`);

  const docs: PlannedDoc[] = files.map((f) => ({
    path: f.path,
    format: f.format,
    load: () => readFileBounded(f.file, f.path, env),
  }));
  return { docs, files: folderFiles(realRoot, env), close: async () => {} };
}

/**
 * Any regular file under the folder, for include directives: looked up when asked (so files
 * outside the include filter are found without walking the whole tree), symlinks followed only
 * when they stay inside the folder.
 */
function folderFiles(realRoot: string, env: ReadEnv): UploadFiles {
  const known = new Map<string, string | null>();
  const realFile = (path: string): string | null => {
    let real = known.get(path);
    if (real !== undefined) return real;
    real = null;
    if (readableTarget(path, env)) {
      try {
        const target = realpathSync(join(realRoot, ...path.split('/')));
        if (isInside(realRoot, target) && statSync(target).isFile()) real = target;
      } catch {
        real = null;
      }
    }
    known.set(path, real);
    return real;
  };
  return {
    batched: false,
    has: (path) => realFile(path) !== null,
    async read(paths) {
      const out = new Map<string, Buffer>();
      for (const path of paths) {
        const real = realFile(path);
        if (real === null) continue;
        const data = await readFileBounded(real, path, env);
        if (data !== null) out.set(path, data);
      }
      return out;
    },
  };
}

/**
 * Reads one file without following a symlink swapped in since the walk, counting the bytes as
 * they are read; a file that grew past maxFileBytes is skipped.
 */
export async function readFileBounded(file: string, path: string, env: ReadEnv): Promise<Buffer | null> {
  let fh;
  try {
    fh = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (e) {
    env.warn(`Skipped ${path}: it cannot be opened (${errCode(e) ?? 'error'})`);
    return null;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) {
      env.warn(`Skipped ${path}: it is no longer a regular file`);
      return null;
    }
    if (st.size > env.limits.maxFileBytes) {
      skipTooBig(env, path, st.size, true);
      return null;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      env.signal.throwIfAborted();
      const buf = Buffer.allocUnsafe(CHUNK);
      const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) break;
      env.budget.addBytes(bytesRead);
      total += bytesRead;
      if (total > env.limits.maxFileBytes) {
        skipTooBig(env, path, env.limits.maxFileBytes, false);
        return null;
      }
      chunks.push(buf.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total);
  } finally {
    await fh.close();
  }
}
