/**
 * Package names: checks, registry URLs, library IDs.
 */
import { RefdeskError } from '../../core/errors.ts';

/** npm's rules for new names, minus the length cap; upper case is accepted (old packages have it). */
const NPM_NAME = /^(?:@([a-z0-9][a-z0-9._~-]*)\/)?([a-z0-9][a-z0-9._~-]*)$/i;
/** PEP 508 project names. */
const PYPI_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

export function checkNpmName(name: unknown): string {
  if (typeof name !== 'string' || !NPM_NAME.test(name) || name.length > 214) {
    throw new RefdeskError(
      'invalid_source',
      `"${String(name).slice(0, 80)}" is not a valid npm package name: use lower-case letters, digits, '.', '_', '-' and '~', optionally scoped as @scope/name.`,
    );
  }
  return name;
}

/** PEP 503 normal form: lower case, runs of '-', '_', '.' become one '-'. */
export function normalizePypiName(name: unknown): string {
  if (typeof name !== 'string' || !PYPI_NAME.test(name) || name.length > 200) {
    throw new RefdeskError(
      'invalid_source',
      `"${String(name).slice(0, 80)}" is not a valid PyPI project name: use ASCII letters, digits, '.', '_' and '-', starting and ending with a letter or digit.`,
    );
  }
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** The registry document URL of a package; a scoped name's '/' is encoded (`@scope%2fpkg`). */
export function npmPackageUrl(registry: string, name: string): string {
  return `${registry.replace(/\/+$/, '')}/${name.startsWith('@') ? `@${encodeURIComponent(name.slice(1))}` : encodeURIComponent(name)}`;
}

/** `<index>/pypi/<name>/json` or `<index>/pypi/<name>/<version>/json`. */
export function pypiJsonUrl(index: string, name: string, version = ''): string {
  const v = version ? `/${encodeURIComponent(version)}` : '';
  return `${index.replace(/\/+$/, '')}/pypi/${encodeURIComponent(name)}${v}/json`;
}

/** A registry base URL from a spec or the options: http(s), no credentials, no query. */
export function registryBase(value: unknown, fallback: string, what: string): string {
  const raw = typeof value === 'string' && value !== '' ? value : fallback;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new RefdeskError('invalid_source', `The ${what} must be an absolute http(s) URL.`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RefdeskError('invalid_source', `The ${what} must be an http(s) URL.`);
  if (u.username || u.password) throw new RefdeskError('invalid_source', `The ${what} must not contain credentials.`);
  u.search = '';
  u.hash = '';
  return u.href.replace(/\/+$/, '');
}

/** `/npm/<name>`, scoped as `/npm/@scope/pkg`. */
export function deriveNpmId(spec: Record<string, unknown>): string {
  return `/npm/${checkNpmName(spec.name)}`;
}

/** `/pypi/<normalized name>`. */
export function derivePypiId(spec: Record<string, unknown>): string {
  return `/pypi/${normalizePypiName(spec.name)}`;
}
