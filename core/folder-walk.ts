/**
 * One rule for reading a folder from disk, shared by the upload source (which reads a folder
 * itself) and the CLI (which packs a folder to send to a running server), so both see the same
 * files:
 *
 * - Symbolic links are followed, files and folders alike, when their target (resolved fully)
 *   stays inside the folder. A followed link appears under its own path (`docs/latest/a.md` for a
 *   link `docs/latest -> v2`).
 * - A folder link that loops back to a folder on its own path (`a/b/up -> ..`) is not entered
 *   again.
 * - Skipped, each with a reason given to `onSkip`: links whose target leaves the folder, broken
 *   links, special files (sockets, FIFOs, devices), folders that cannot be read.
 *
 * Entries come out in walk order (names sorted by code unit within each folder).
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

export interface FolderFile {
  /** Path inside the folder, forward slashes. */
  path: string;
  /** The real path to read (links resolved). */
  file: string;
  size: number;
}

export interface FolderWalkOptions {
  /** Names (files or folders, at any depth) never looked at, without a log line. */
  skipName?(name: string): boolean;
  /** Whether a folder (its path inside the root) may hold wanted files; not entered otherwise. */
  enterFolder?(path: string): boolean;
  /** Whether a file (its path inside the root) is wanted; unwanted files are not even stat'ed. */
  wantFile?(path: string): boolean;
  /** A link, special file or unreadable folder that is left out, and why. */
  onSkip?(path: string, reason: string): void;
  signal?: AbortSignal;
}

/**
 * Folder or file names never read from an upload (hidden ones, dependencies, macOS zip debris):
 * the upload source skips them, and the CLI does not pack them.
 */
export function isSkippedName(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules' || name === '__MACOSX';
}

/** True when `target` is `root` or inside it (both real paths). */
export function isInsideFolder(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

const code = (e: unknown): string => (e as NodeJS.ErrnoException | undefined)?.code ?? 'error';

/**
 * Walks `root` by the rule above. Throws (with the errno code) only when the root itself cannot
 * be read.
 */
export async function* walkFolder(root: string, options: FolderWalkOptions = {}): AsyncGenerator<FolderFile> {
  const realRoot = await realpath(root);
  const skip = (path: string, reason: string) => options.onSkip?.(path, reason);

  async function* walk(dir: string, relDir: string, ancestors: ReadonlySet<string>): AsyncGenerator<FolderFile> {
    options.signal?.throwIfAborted();
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      if (relDir === '') throw e;
      skip(relDir, `the folder cannot be read (${code(e)})`);
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const name = entry.name;
      if (options.skipName?.(name)) continue;
      const rel = relDir === '' ? name : `${relDir}/${name}`;
      const abs = join(dir, name);
      if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = await realpath(abs);
        } catch {
          skip(rel, 'it is a broken symbolic link (its target does not exist)');
          continue;
        }
        if (!isInsideFolder(realRoot, target)) {
          skip(rel, 'it is a symbolic link to a place outside the folder');
          continue;
        }
        const st = await stat(target).catch(() => null);
        if (st === null) {
          skip(rel, 'it is a broken symbolic link (its target does not exist)');
        } else if (st.isDirectory()) {
          if (ancestors.has(target)) {
            skip(rel, 'it is a symbolic link that loops back to a folder above it');
            continue;
          }
          if (options.enterFolder?.(rel) ?? true) yield* walk(target, rel, new Set(ancestors).add(target));
        } else if (st.isFile()) {
          if (options.wantFile?.(rel) ?? true) yield { path: rel, file: target, size: st.size };
        } else {
          skip(rel, 'it is a symbolic link to a special file (socket, FIFO or device)');
        }
      } else if (entry.isDirectory()) {
        if (options.enterFolder?.(rel) ?? true) {
          const real = await realpath(abs).catch(() => abs);
          yield* walk(abs, rel, new Set(ancestors).add(real));
        }
      } else if (entry.isFile()) {
        if (!(options.wantFile?.(rel) ?? true)) continue;
        const st = await stat(abs).catch(() => null);
        if (st === null || !st.isFile()) continue;
        yield { path: rel, file: abs, size: st.size };
      } else {
        skip(rel, 'it is a special file (socket, FIFO or device)');
      }
    }
  }

  yield* walk(realRoot, '', new Set([realRoot]));
}
