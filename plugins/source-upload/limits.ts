import { RefdeskError } from '../../core/errors.ts';

/** Operator options of the `upload` source (config), after ajv applied the defaults. */
export interface UploadOptions {
  /** Documentation files accepted (after extension, hidden-path and include/exclude filters). */
  maxFiles: number;
  /** Real (decompressed) bytes of documentation files read, in total. */
  maxBytes: number;
  /** Bytes of one documentation file; bigger files are skipped with a warning. */
  maxFileBytes: number;
  /** Entries of any kind (files, directories, links...) in one archive. */
  maxArchiveEntries: number;
  /** File name extensions that count as documentation, e.g. `.md`. */
  extensions: string[];
}

export const MiB = 1024 * 1024;

export const DEFAULT_OPTIONS: Readonly<UploadOptions> = Object.freeze({
  maxFiles: 20_000,
  maxBytes: 200 * MiB,
  maxFileBytes: 10 * MiB,
  maxArchiveEntries: 100_000,
  extensions: ['.md', '.mdx', '.markdown', '.txt', '.rst', '.adoc'],
});

/**
 * A compressed tarball must be decompressed in full to see every entry, including the
 * non-documentation ones we never keep. That stream is bounded at this multiple of maxBytes,
 * so a gzip bomb hidden in an image or a binary cannot keep the CPU busy for ever.
 */
export const TAR_STREAM_FACTOR = 4;

/** Fills missing options with the defaults (ajv does it for config; tests may not) and normalizes extensions. */
export function resolveOptions(options: Partial<UploadOptions> | undefined): UploadOptions {
  const o = { ...DEFAULT_OPTIONS, ...stripUndefined(options ?? {}) };
  for (const key of ['maxFiles', 'maxBytes', 'maxFileBytes', 'maxArchiveEntries'] as const) {
    const v = o[key];
    if (!Number.isSafeInteger(v) || v < 1) {
      throw new RefdeskError('config_error', `source-upload: option ${key} must be a positive integer`);
    }
  }
  const extensions = [...new Set(o.extensions.map(normalizeExtension).filter((e) => e.length > 1))];
  return { ...o, extensions };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function normalizeExtension(ext: string): string {
  const e = ext.trim().toLowerCase();
  return e.startsWith('.') ? e : `.${e}`;
}

export function tooLarge(what: string, limit: 'maxFiles' | 'maxBytes' | 'maxArchiveEntries', value: number): RefdeskError {
  return new RefdeskError('too_large', `Upload too large: ${what} (limit ${limit}=${value})`);
}

export function tooManyFiles(limits: UploadOptions): RefdeskError {
  return tooLarge(`more than ${limits.maxFiles} documentation files`, 'maxFiles', limits.maxFiles);
}

export function tooManyBytes(limits: UploadOptions): RefdeskError {
  return tooLarge(`more than ${limits.maxBytes} bytes of documentation`, 'maxBytes', limits.maxBytes);
}

export function tooManyEntries(limits: UploadOptions): RefdeskError {
  return tooLarge(`the archive has more than ${limits.maxArchiveEntries} entries`, 'maxArchiveEntries', limits.maxArchiveEntries);
}

/**
 * Counts what one read has accepted so far. Every byte is counted as it is actually read or
 * decompressed, never from a size a header declares.
 */
export class ReadBudget {
  files = 0;
  bytes = 0;
  constructor(readonly limits: UploadOptions) {}

  /** One more documentation file accepted. */
  addFile(): void {
    this.files += 1;
    if (this.files > this.limits.maxFiles) throw tooManyFiles(this.limits);
  }

  /** Checks a final count of accepted files. */
  checkFiles(n: number): void {
    if (n > this.limits.maxFiles) throw tooManyFiles(this.limits);
  }

  /** Bytes really read (a chunk of a file or of a decompressed entry). */
  addBytes(n: number): void {
    this.bytes += n;
    if (this.bytes > this.limits.maxBytes) throw tooManyBytes(this.limits);
  }

  /** An early check from sizes known before reading (stat sizes, archive headers). */
  checkPlannedBytes(n: number): void {
    if (n > this.limits.maxBytes) throw tooManyBytes(this.limits);
  }
}
