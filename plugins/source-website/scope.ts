/**
 * Which URLs a crawl may read. By default: the start URL's origin and path prefix (see
 * `pathPrefix`: a start of `/docs/` or `/docs/index.html` keeps the crawl under `/docs/`, a start
 * of `/learn` under `/learn` and `/learn/...`). `include` patterns replace the path prefix;
 * `exclude` patterns always win. The start URL itself is always in scope.
 *
 * Patterns: `re:<expression>` is a regular expression tested on the whole URL; anything else is
 * a glob on the URL path (plus query): `**` any characters, `*` any characters but '/', `?` one
 * character but '/'. A glob without a leading '/' matches anywhere in the path; a glob without
 * wildcards matches a path prefix.
 */
import { RefdeskError } from '../../core/errors.ts';

export type UrlTest = (url: URL) => boolean;

/** Compiles one include/exclude pattern; a bad one is an `invalid_source` error naming it. */
export function compilePattern(pattern: string, field: string): UrlTest {
  if (pattern.startsWith('re:')) {
    let re: RegExp;
    try {
      re = new RegExp(pattern.slice(3));
    } catch (e) {
      throw new RefdeskError('invalid_source', `The ${field} pattern "${pattern.slice(0, 80)}" is not a valid regular expression: ${(e as Error).message}.`);
    }
    return (u) => re.test(u.href);
  }
  const anchored = pattern.startsWith('/');
  const hasWildcard = /[*?]/.test(pattern);
  let src = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '*' && pattern[i + 1] === '*') {
      src += '.*';
      i++;
    } else if (ch === '*') src += '[^/]*';
    else if (ch === '?') src += '[^/]';
    else src += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const re = new RegExp(`${anchored ? '^' : '(?:^|/)'}${src}${hasWildcard ? '$' : ''}`);
  return (u) => re.test(u.pathname + u.search);
}

/** The path prefix of a start URL: its directory when it names a file, else the path itself. */
export function pathPrefix(start: URL): string {
  const path = start.pathname;
  if (path.endsWith('/')) return path;
  const last = path.slice(path.lastIndexOf('/') + 1);
  if (last.includes('.')) return path.slice(0, path.lastIndexOf('/') + 1);
  return path;
}

export class Scope {
  readonly origin: string;
  readonly prefix: string;
  private readonly include: UrlTest[];
  private readonly exclude: UrlTest[];

  constructor(readonly start: URL, include: string[] = [], exclude: string[] = []) {
    this.origin = start.origin;
    this.prefix = pathPrefix(start);
    this.include = include.map((p) => compilePattern(p, 'include'));
    this.exclude = exclude.map((p) => compilePattern(p, 'exclude'));
  }

  /** Why the URL is out of scope, or null when it may be read. */
  refuse(u: URL): string | null {
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'not an http(s) URL';
    if (u.origin !== this.origin) return `another origin than ${this.origin}`;
    if (this.exclude.some((t) => t(u))) return 'matches an exclude pattern';
    if (u.pathname === this.start.pathname && u.search === this.start.search) return null;
    if (this.include.length > 0) return this.include.some((t) => t(u)) ? null : 'matches no include pattern';
    const p = this.prefix;
    const under = p.endsWith('/') ? u.pathname.startsWith(p) : u.pathname === p || u.pathname.startsWith(`${p}/`);
    return under ? null : `outside ${p}`;
  }
}
