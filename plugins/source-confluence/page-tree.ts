/**
 * The page hierarchy: which pages are in scope (the space, or a subtree), each page's trail of
 * ancestor titles (the breadcrumb) and its document path `<ancestor slugs>/<page slug>.md`.
 */
import { RefdeskError } from '../../core/errors.ts';
import type { PageInfo, SpaceInfo } from './api.ts';

export interface PlannedPage {
  page: PageInfo;
  /** Document path, unique within the read. */
  path: string;
  /** Ancestor titles from the top of the space down to the parent (the space home page left out). */
  trail: string[];
}

/** `Getting Started!` → `getting-started`; '' when nothing usable remains. */
export function slugify(title: string): string {
  return title
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
}

/** Ancestors (top first) of each page: given by Server, rebuilt from parentId on Cloud. */
function ancestorsOf(page: PageInfo, byId: Map<string, PageInfo>): Array<{ id: string; title: string }> {
  if (page.ancestors) return page.ancestors;
  const chain: Array<{ id: string; title: string }> = [];
  const seen = new Set<string>([page.id]);
  let parentId = page.parentId;
  while (parentId && !seen.has(parentId)) {
    const parent = byId.get(parentId);
    if (!parent) break; // a folder, whiteboard or page outside the listing
    seen.add(parentId);
    chain.unshift({ id: parent.id, title: parent.title });
    parentId = parent.parentId;
  }
  return chain;
}

/**
 * Plans the pages in scope, in a stable order (parents before their children, siblings by path).
 * Throws invalid_source when rootPageId is not a page of the listing.
 */
export function planPages(pages: PageInfo[], space: SpaceInfo, rootPageId: string | undefined, spaceKey: string): PlannedPage[] {
  const byId = new Map(pages.map((p) => [p.id, p]));
  if (rootPageId && !byId.has(rootPageId)) {
    throw new RefdeskError(
      'invalid_source',
      `rootPageId ${rootPageId} is not a current page of space "${spaceKey}": give the numeric ID of a page in that space (the number in its URL).`,
    );
  }
  const inScope: Array<{ page: PageInfo; ancestors: Array<{ id: string; title: string }> }> = [];
  for (const page of pages) {
    const ancestors = ancestorsOf(page, byId);
    if (rootPageId && page.id !== rootPageId && !ancestors.some((a) => a.id === rootPageId)) continue;
    inScope.push({ page, ancestors });
  }
  // Ids in numeric order decide who keeps a clashing path, so paths are stable between reads.
  inScope.sort((a, b) => compareIds(a.page.id, b.page.id));
  const taken = new Set<string>();
  const planned: PlannedPage[] = [];
  for (const { page, ancestors } of inScope) {
    const shown = ancestors.filter((a) => a.id !== space.homepageId);
    const dirs = shown.map((a) => slugify(a.title) || `page-${a.id}`);
    const slug = slugify(page.title) || `page-${page.id}`;
    let path = [...dirs, `${slug}.md`].join('/');
    if (taken.has(path)) path = [...dirs, `${slug}-${page.id}.md`].join('/');
    taken.add(path);
    planned.push({ page, path, trail: shown.map((a) => a.title) });
  }
  return planned.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
