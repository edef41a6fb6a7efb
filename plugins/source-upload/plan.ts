import type { DocumentFormat } from '../../core/contracts.ts';
import type { ReadBudget, UploadOptions } from './limits.ts';
import { isSkippedName, type DocSelector } from './paths.ts';

/** One documentation file to read, in the order it will be yielded. */
export interface PlannedDoc {
  /** Relative path with forward slashes, as the document will carry it. */
  path: string;
  format: DocumentFormat;
  /**
   * Reads the bytes, counting them against the budget as they come. Resolves to null when the
   * file is skipped (too big once read); the loader has logged why.
   */
  load(): Promise<Buffer | null>;
}

/**
 * Every regular file of the upload, documentation or not (code, fragments outside the include
 * filter), for the include directives of its documents. Paths are relative with forward slashes;
 * hidden names, node_modules and excluded prefixes are never read.
 */
export interface UploadFiles {
  /** Whether the upload has a readable regular file at this path. */
  has(path: string): boolean;
  /**
   * Reads these files, bounded by maxFileBytes and counted against maxBytes like documents; the
   * ones that cannot be read (gone, too big) are left out of the result, with a warning.
   */
  read(paths: string[]): Promise<Map<string, Buffer>>;
  /**
   * True when each read() goes through the whole upload again (a tar stream): the caller then
   * asks once for what all documents need, instead of once per document.
   */
  batched: boolean;
}

export interface ReadPlan {
  docs: PlannedDoc[];
  files: UploadFiles;
  /** Releases what the plan holds open (an archive's file descriptor). */
  close(): Promise<void>;
}

/** What every reader (folder, file, archive) gets. */
export interface ReadEnv {
  /** A short name of the upload for messages (the archive's file name). */
  label: string;
  limits: UploadOptions;
  selector: DocSelector;
  budget: ReadBudget;
  signal: AbortSignal;
  warn(message: string): void;
  debug(message: string): void;
}

export function skipTooBig(env: ReadEnv, path: string, size: number, exact: boolean): void {
  env.warn(
    `Skipped ${path}: ${exact ? '' : 'more than '}${size} bytes is over the per-file limit maxFileBytes=${env.limits.maxFileBytes}`,
  );
}

/**
 * Tracks whether every archive entry sits under one common top-level directory (as in GitHub
 * tarballs, `repo-main/...`), which is then stripped. `__MACOSX/` debris and the root entry
 * (`./`) do not count.
 */
export class CommonTop {
  private top: string | null | undefined = undefined;

  add(segments: readonly string[], isDir: boolean): void {
    if (segments.length === 0 || segments[0] === '__MACOSX') return;
    if (!isDir && segments.length === 1) {
      this.top = null;
      return;
    }
    if (this.top === undefined) this.top = segments[0];
    else if (this.top !== segments[0]) this.top = null;
  }

  /** The directory to strip, or null. */
  get value(): string | null {
    return this.top ?? null;
  }
}

/** An archive file entry that may become a document once the common top is known. */
export interface ArchiveFile<T> {
  /** Segments inside the archive, before stripping. */
  segments: string[];
  payload: T;
}

/**
 * Strips the common top directory, applies the selector, and orders the files by path. When
 * an archive holds the same path twice the later entry wins (as when extracting a tarball).
 */
/** No files besides the documents (a single uploaded file has no tree to include from). */
export const NO_FILES: UploadFiles = { has: () => false, read: async () => new Map(), batched: false };

/** Whether an include target path may be read: no hidden or node_modules segment, not excluded. */
export function readableTarget(path: string, env: ReadEnv): boolean {
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..' || isSkippedName(s))) return false;
  return !env.selector.excluded(path);
}

/** The archive path of an entry once the common top directory is stripped. */
export function strippedPath(segments: readonly string[], top: string | null): string {
  return (top !== null && segments[0] === top ? segments.slice(1) : segments).join('/');
}

export function selectArchiveFiles<T>(
  files: readonly ArchiveFile<T>[],
  top: string | null,
  env: ReadEnv,
): Array<{ path: string; format: DocumentFormat; payload: T }> {
  const byPath = new Map<string, { path: string; format: DocumentFormat; payload: T }>();
  for (const f of files) {
    const segments = top !== null && f.segments[0] === top ? f.segments.slice(1) : f.segments;
    const format = env.selector.accept(segments);
    if (format === null) continue;
    const path = segments.join('/');
    if (byPath.has(path)) {
      env.warn(`Archive ${env.label} holds ${path} more than once; the last entry wins`);
      byPath.delete(path);
    }
    byPath.set(path, { path, format, payload: f.payload });
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
