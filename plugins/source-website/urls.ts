/** URL helpers of the website crawler: normalization, document paths and library IDs. */
import { RefdeskError } from '../../core/errors.ts';

const TRACKING = /^(utm_[a-z]+|gclid|fbclid|msclkid|mc_cid|mc_eid|_ga|ref_src)$/i;

/**
 * The key one page is known by: no fragment, no tracking parameters, no empty query; host and
 * scheme in lower case and the default port dropped (the URL parser does those two).
 */
export function normalizeUrl(input: URL | string): string {
  const u = new URL(String(input));
  u.hash = '';
  if (u.search) {
    const params = new URLSearchParams(u.search);
    for (const key of [...params.keys()]) if (TRACKING.test(key)) params.delete(key);
    const rest = params.toString();
    u.search = rest ? `?${rest}` : '';
  }
  return u.href;
}

/**
 * The document path of a page: its URL path without the leading '/', with `index` for a
 * directory URL ('/' -> 'index', '/docs/' -> 'docs/index') and the query kept after a '?'.
 */
export function documentPath(input: URL | string): string {
  const u = new URL(String(input));
  let path = u.pathname.replace(/^\/+/, '');
  if (path === '' || path.endsWith('/')) path += 'index';
  path = path.replace(/\/{2,}/g, '/');
  return u.search ? `${path}?${u.search.slice(1)}` : path;
}

/** The library name part of a website URL: host with '.' as '_', then the path segments. */
export function websiteName(rawUrl: string): string {
  let u: URL;
  try {
    u = new URL(rawUrl);
  } catch {
    throw new RefdeskError('invalid_source', 'The website "url" is not a valid absolute URL; give one such as https://docs.example.com/guide.');
  }
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
  const parts = [clean(u.hostname.replace(/\./g, '_'))];
  if (u.port) parts.push(u.port);
  const segments = u.pathname.split('/').filter(Boolean);
  if (segments.length > 0 && /^index\.(html?|php)$/i.test(segments[segments.length - 1])) segments.pop();
  for (const s of segments) {
    let decoded = s;
    try {
      decoded = decodeURIComponent(s);
    } catch {
      // keep it encoded
    }
    const c = clean(decoded.replace(/\./g, '_'));
    if (c) parts.push(c);
  }
  const name = parts.filter(Boolean).join('_').slice(0, 100).replace(/_+$/, '');
  if (!name) throw new RefdeskError('invalid_source', 'The website "url" has no host to name the library after; give a full URL such as https://docs.example.com/.');
  return name;
}
