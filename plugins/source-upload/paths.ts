import { isSkippedName } from '../../core/folder-walk.ts';
import { RefdeskError } from '../../core/errors.ts';
import type { DocumentFormat } from '../../core/contracts.ts';

/** Code-unit order: stable whatever the locale. */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** An entry name as shown in a message: control characters escaped, at most 200 characters. */
export function displayName(name: string): string {
  const escaped = name.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return escaped.length > 200 ? `${escaped.slice(0, 200)}…` : escaped;
}

/** Refuses a whole archive because of one entry. */
export function unsafeEntry(archive: string, name: string, reason: string): RefdeskError {
  return new RefdeskError(
    'invalid_source',
    `Refused archive ${archive}: entry "${displayName(name)}" ${reason}; nothing was read from it`,
  );
}

/**
 * Validates an archive entry name and splits it into segments ('' and '.' segments dropped).
 * Backslashes count as separators, so `..\evil.md` is caught like `../evil.md`.
 * Returns the reason the name is unsafe instead of segments when it is.
 */
export function splitEntryName(raw: string): { segments: string[]; trailingSlash: boolean } | { unsafe: string } {
  if (raw.length === 0) return { unsafe: 'has an empty name' };
  if (raw.includes('\0')) return { unsafe: 'has a NUL character in its name' };
  if (raw.startsWith('\\\\') || raw.startsWith('//')) return { unsafe: 'is a UNC (network) path' };
  if (raw.startsWith('/') || raw.startsWith('\\')) return { unsafe: 'is an absolute path' };
  if (/^[A-Za-z]:/.test(raw)) return { unsafe: 'is a Windows drive path' };
  const name = raw.replace(/\\/g, '/');
  const parts = name.split('/');
  if (parts.includes('..')) return { unsafe: 'has a ".." segment that would escape the archive root' };
  const segments = parts.filter((s) => s !== '' && s !== '.');
  if (segments.some((s) => /^[A-Za-z]:$/.test(s))) return { unsafe: 'has a Windows drive segment' };
  return { segments, trailingSlash: name.endsWith('/') };
}

const FORMATS: Record<string, DocumentFormat> = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdown': 'markdown',
  '.mkd': 'markdown',
  '.mkdn': 'markdown',
  '.mdx': 'mdx',
  '.txt': 'text',
  '.text': 'text',
  '.rst': 'rst',
  '.adoc': 'asciidoc',
  '.asciidoc': 'asciidoc',
  '.asc': 'asciidoc',
};

/** The document format of an extension (lower case, with its dot); unknown ones read as text. */
export function formatForExtension(ext: string): DocumentFormat {
  return FORMATS[ext] ?? 'text';
}

/** Directory or file names that are never read: hidden ones, dependencies, macOS zip debris. */
export { isSkippedName };

function normalizePrefix(p: string): string {
  let s = p.replace(/\\/g, '/');
  for (;;) {
    if (s.startsWith('./')) s = s.slice(2);
    else if (s.startsWith('/')) s = s.slice(1);
    else break;
  }
  return s === '.' ? '' : s;
}

/**
 * A prefix matches a path segment-wise: `docs/` and `docs` both match `docs/a.md` (and `docs`
 * matches the file `docs` itself), but neither matches `docs-old/a.md`.
 */
function prefixMatches(path: string, prefix: string): boolean {
  if (prefix === '') return true;
  if (prefix.endsWith('/')) return path.startsWith(prefix);
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** Decides which relative paths are documentation files, and their format. */
export class DocSelector {
  private readonly extensions: string[];
  private readonly include: string[] | null;
  private readonly exclude: string[];

  constructor(extensions: string[], include?: string[], exclude?: string[]) {
    // Longest first, so `.md.txt` wins over `.txt` if an operator configures both.
    this.extensions = [...extensions].sort((a, b) => b.length - a.length);
    this.include = include && include.length > 0 ? include.map(normalizePrefix) : null;
    this.exclude = (exclude ?? []).map(normalizePrefix);
  }

  get extensionList(): string {
    return [...this.extensions].sort().join(', ');
  }

  get hasFilters(): boolean {
    return this.include !== null || this.exclude.length > 0;
  }

  /** The format when the file name has a documentation extension. */
  formatOf(fileName: string): DocumentFormat | null {
    const lower = fileName.toLowerCase();
    const ext = this.extensions.find((e) => lower.endsWith(e) && lower.length > e.length);
    return ext === undefined ? null : formatForExtension(ext);
  }

  /** Include/exclude filters on a relative path (forward slashes). Exclude wins. */
  passesFilters(path: string): boolean {
    if (this.exclude.some((p) => prefixMatches(path, p))) return false;
    return this.include === null || this.include.some((p) => prefixMatches(path, p));
  }

  /** True when an exclude prefix matches the path (such a file is never read). */
  excluded(path: string): boolean {
    return this.exclude.some((p) => prefixMatches(path, p));
  }

  /** The format of a relative file path that should be read, or null to skip it. */
  accept(segments: readonly string[]): DocumentFormat | null {
    if (segments.length === 0 || segments.some(isSkippedName)) return null;
    const format = this.formatOf(segments[segments.length - 1]);
    if (format === null) return null;
    return this.passesFilters(segments.join('/')) ? format : null;
  }

  /** Whether a directory (relative path, no trailing slash) may hold accepted files. */
  mayContain(dir: string): boolean {
    const asDir = `${dir}/`;
    if (this.exclude.some((p) => prefixMatches(asDir, p) || p === dir)) return false;
    if (this.include === null) return true;
    return this.include.some((p) => prefixMatches(asDir, p) || p === dir || (p.endsWith('/') ? p : `${p}/`).startsWith(asDir));
  }
}
