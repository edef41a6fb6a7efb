import type { DocumentFormat } from '../../core/contracts.ts';
import type { ReadBudget, UploadOptions } from './limits.ts';
import type { DocSelector } from './paths.ts';

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

export interface ReadPlan {
  docs: PlannedDoc[];
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
