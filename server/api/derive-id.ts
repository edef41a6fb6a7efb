/**
 * Library IDs for added sources when the source definition has no `deriveId` (the agreed
 * conventions of each kind; see docs/writing-plugins.md). Every result is checked with
 * parseLibraryId by the caller.
 */
import { RefdeskError } from '../../core/errors.ts';
import { deriveGitLibraryId } from '../../core/git-url.ts';
import { slugifyLibraryName } from '../../core/library-id.ts';

const hostSlug = (u: URL) => u.hostname.toLowerCase().replace(/\./g, '_');
const segSlug = (s: string) => slugifyLibraryName(decodeURIComponent(s)).replace(/\./g, '_');

function url(spec: Record<string, unknown>, field: string): URL {
  try {
    return new URL(String(spec[field]));
  } catch {
    throw new RefdeskError('invalid_request', `${field} is not a valid URL.`);
  }
}

/** The fallback library ID of a spec of this kind. */
export function fallbackLibraryId(kind: string, spec: Record<string, unknown>): string {
  switch (kind) {
    case 'git':
      return deriveGitLibraryId(spec);
    case 'llmstxt': {
      const u = url(spec, 'url');
      const last = u.pathname.split('/').filter(Boolean).pop() ?? 'llms.txt';
      return `/llmstxt/${hostSlug(u)}-${last}`;
    }
    case 'website': {
      const u = url(spec, 'url');
      const segs = u.pathname.split('/').filter(Boolean).map(segSlug).filter(Boolean);
      return `/websites/${[hostSlug(u), ...segs].join('_')}`;
    }
    case 'openapi': {
      const u = url(spec, 'url');
      const slug = segSlug(u.pathname.replace(/\.(json|ya?ml)$/i, '').split('/').filter(Boolean).join('-'));
      return `/openapi/${hostSlug(u)}${slug ? '_' + slug : ''}`;
    }
    case 'confluence': {
      const u = url(spec, 'siteUrl');
      return `/confluence/${hostSlug(u)}_${String(spec.spaceKey).toLowerCase()}`;
    }
    default:
      throw new RefdeskError('invalid_request', `No library ID can be derived for a "${kind}" source.`);
  }
}
