/**
 * The Confluence REST calls this plugin makes, for Cloud (REST v2) and Server/Data Center
 * (REST v1), behind one small interface. Only GETs; every one goes through ConfluenceHttp.
 *
 * Cloud (base `https://<site>.atlassian.net/wiki`):
 * - `GET /wiki/api/v2/spaces?keys=<KEY>&limit=1` → the space's id, name and homepageId;
 * - `GET /wiki/api/v2/spaces/<id>/pages?status=current&limit=<n>[&body-format=storage]` → pages
 *   with id, title, parentId, version.number (and body.storage.value), cursor-paginated by
 *   `_links.next`;
 * - `GET /wiki/api/v2/pages/<id>?body-format=storage` → one page with its body.
 * A subtree (rootPageId) is cut from the space listing by parentId, so no extra calls are needed.
 *
 * Server/Data Center (base = the site URL with its context path):
 * - `GET /rest/api/space/<KEY>?expand=homepage` → the space's name and home page;
 * - `GET /rest/api/content?spaceKey=<KEY>&type=page&status=current&expand=version,ancestors[,body.storage]&start=&limit=`
 *   → pages with their ancestors (root first), paginated by start/limit while `_links.next` is given;
 * - a subtree: `GET /rest/api/content/<id>?expand=version,ancestors,space[,body.storage]` for the root
 *   and `GET /rest/api/content/<id>/descendant/page?expand=...&start=&limit=` below it;
 * - `GET /rest/api/content/<id>?expand=body.storage,version,ancestors` → one page with its body.
 */
import { RefdeskError } from '../../core/errors.ts';
import type { ConfluenceHttp } from './http-client.ts';
import type { ConfluenceTarget } from './spec.ts';

export interface SpaceInfo {
  /** The space's id (Cloud v2 uses it in page listings). */
  id: string;
  key: string;
  name: string;
  homepageId: string | null;
}

export interface PageInfo {
  id: string;
  title: string;
  version: number;
  /** Cloud: the parent page's id (null at the top of the space). */
  parentId: string | null;
  /** Server: the ancestor pages, top first (undefined on Cloud). */
  ancestors?: Array<{ id: string; title: string }>;
  /** The storage-format XHTML, when it was asked for. */
  body?: string;
}

export interface PageListing {
  pages: PageInfo[];
  /** How many listing requests it took (a listing with bodies takes as many). */
  requests: number;
}

export interface ConfluenceApi {
  space(): Promise<SpaceInfo>;
  /**
   * The current pages in scope: the whole space on Cloud (a subtree is cut out later), the space or
   * the subtree under rootPageId (the root included) on Server. Throws too_large past `limit` pages.
   */
  listPages(space: SpaceInfo, withBodies: boolean, limit: number): Promise<PageListing>;
  /** One page with its body. */
  /** One page with its body; `path` (its document path) goes on the job log lines of the request. */
  getPage(id: string, path?: string): Promise<PageInfo>;
}

export interface ApiSettings {
  pageSize: number;
}

function spaceNotFound(target: ConfluenceTarget): RefdeskError {
  return new RefdeskError(
    'invalid_source',
    `Space "${target.spaceKey}" was not found at ${target.base}, or the account cannot see it: check spaceKey (keys are case-sensitive, e.g. ENG) and the account's permissions.`,
  );
}

function pageGone(target: ConfluenceTarget, id: string): () => RefdeskError {
  return () => new RefdeskError('invalid_source', `Page ${id} was not found in space "${target.spaceKey}" at ${target.base} (it may have been deleted while reading, or the account cannot see it).`);
}

function tooLarge(target: ConfluenceTarget, limit: number): RefdeskError {
  return new RefdeskError(
    'too_large',
    `Space "${target.spaceKey}"${target.rootPageId ? ` (below page ${target.rootPageId})` : ''} has more than ${limit} pages, the most one library may hold: pick a smaller subtree with rootPageId, or raise the confluence source option maxPages.`,
  );
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

function shapeError(target: ConfluenceTarget, what: string): RefdeskError {
  return new RefdeskError(
    'invalid_source',
    `${target.base} answered ${what} with JSON that is not shaped like Confluence's; check siteUrl and deployment (${target.deployment}).`,
  );
}

// ---------------------------------------------------------------------------------------------
// Cloud, REST v2
// ---------------------------------------------------------------------------------------------

interface V2Page {
  id?: unknown;
  title?: unknown;
  parentId?: unknown;
  version?: { number?: unknown };
  body?: { storage?: { value?: unknown } };
}

interface V2List<T> {
  results?: T[];
  _links?: { next?: string };
}

export class CloudApi implements ConfluenceApi {
  constructor(
    private readonly http: ConfluenceHttp,
    private readonly target: ConfluenceTarget,
    private readonly settings: ApiSettings,
  ) {}

  private get v2(): string {
    return `${this.target.base}/api/v2`;
  }

  async space(): Promise<SpaceInfo> {
    const q = new URLSearchParams({ keys: this.target.spaceKey, limit: '1' });
    const what = `space "${this.target.spaceKey}"`;
    const res = await this.http.getJson<V2List<{ id?: unknown; key?: unknown; name?: unknown; homepageId?: unknown }>>(`${this.v2}/spaces?${q}`, {
      what,
      notFound: () => spaceNotFound(this.target),
    });
    if (!Array.isArray(res?.results)) throw shapeError(this.target, what);
    const s = res.results.find((r) => str(r.key) === this.target.spaceKey) ?? res.results[0];
    if (!s || str(s.id) === '') throw spaceNotFound(this.target);
    return { id: str(s.id), key: str(s.key) || this.target.spaceKey, name: str(s.name) || this.target.spaceKey, homepageId: str(s.homepageId) || null };
  }

  async listPages(space: SpaceInfo, withBodies: boolean, limit: number): Promise<PageListing> {
    const q = new URLSearchParams({ status: 'current', limit: String(this.settings.pageSize) });
    if (withBodies) q.set('body-format', 'storage');
    const what = `the pages of space "${this.target.spaceKey}"`;
    // A subtree is cut from the whole space: allow a bigger listing, the subtree is checked later.
    const cap = this.target.rootPageId ? limit * 10 : limit;
    const pages: PageInfo[] = [];
    const seen = new Set<string>();
    let next: string | undefined = `${this.v2}/spaces/${encodeURIComponent(space.id)}/pages?${q}`;
    let requests = 0;
    while (next) {
      if (seen.has(next)) throw new RefdeskError('invalid_source', `Confluence at ${this.target.origin} sent the same next-page link twice while listing ${what}; stopping.`);
      seen.add(next);
      requests++;
      const res: V2List<V2Page> = await this.http.getJson<V2List<V2Page>>(next, { what, notFound: () => spaceNotFound(this.target) });
      if (!Array.isArray(res?.results)) throw shapeError(this.target, what);
      for (const p of res.results) pages.push(this.page(p, withBodies, what));
      if (pages.length > cap) throw tooLarge(this.target, limit);
      next = res.results.length > 0 ? res._links?.next : undefined;
    }
    return { pages, requests };
  }

  async getPage(id: string, path?: string): Promise<PageInfo> {
    const what = `page ${id}`;
    const res = await this.http.getJson<V2Page>(`${this.v2}/pages/${encodeURIComponent(id)}?body-format=storage`, { what, notFound: pageGone(this.target, id), path });
    return this.page(res, true, what);
  }

  private page(p: V2Page, withBody: boolean, what: string): PageInfo {
    const id = str(p?.id);
    const version = Number(p?.version?.number);
    if (!id || !Number.isFinite(version)) throw shapeError(this.target, what);
    const body = p.body?.storage?.value;
    if (withBody && typeof body !== 'string') throw shapeError(this.target, what);
    return {
      id,
      title: str(p.title) || `Page ${id}`,
      version,
      parentId: str(p.parentId) || null,
      ...(withBody ? { body: body as string } : {}),
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Server / Data Center, REST v1
// ---------------------------------------------------------------------------------------------

interface V1Content {
  id?: unknown;
  title?: unknown;
  type?: unknown;
  version?: { number?: unknown };
  ancestors?: Array<{ id?: unknown; title?: unknown; type?: unknown }>;
  body?: { storage?: { value?: unknown } };
  space?: { key?: unknown };
}

interface V1List {
  results?: V1Content[];
  _links?: { next?: string };
}

export class ServerApi implements ConfluenceApi {
  constructor(
    private readonly http: ConfluenceHttp,
    private readonly target: ConfluenceTarget,
    private readonly settings: ApiSettings,
  ) {}

  private get v1(): string {
    return `${this.target.base}/rest/api`;
  }

  async space(): Promise<SpaceInfo> {
    const what = `space "${this.target.spaceKey}"`;
    const res = await this.http.getJson<{ id?: unknown; key?: unknown; name?: unknown; homepage?: { id?: unknown } }>(
      `${this.v1}/space/${encodeURIComponent(this.target.spaceKey)}?expand=homepage`,
      { what, notFound: () => spaceNotFound(this.target) },
    );
    if (!res || typeof res !== 'object' || str(res.key) === '') throw shapeError(this.target, what);
    return { id: str(res.id) || str(res.key), key: str(res.key), name: str(res.name) || str(res.key), homepageId: str(res.homepage?.id) || null };
  }

  async listPages(_space: SpaceInfo, withBodies: boolean, limit: number): Promise<PageListing> {
    const expand = withBodies ? 'version,ancestors,body.storage' : 'version,ancestors';
    const root = this.target.rootPageId;
    const pages: PageInfo[] = [];
    let requests = 0;
    let url: string;
    let what: string;
    if (root) {
      what = `page ${root} of space "${this.target.spaceKey}"`;
      requests++;
      const top = await this.http.getJson<V1Content>(`${this.v1}/content/${encodeURIComponent(root)}?expand=${expand},space`, {
        what,
        notFound: () => new RefdeskError('invalid_source', `rootPageId ${root} was not found at ${this.target.base}, or the account cannot see it: give the numeric ID of a page in space "${this.target.spaceKey}".`),
      });
      if (str(top?.space?.key) !== '' && str(top.space!.key) !== this.target.spaceKey) {
        throw new RefdeskError('invalid_source', `rootPageId ${root} is a page of space "${str(top.space!.key)}", not of space "${this.target.spaceKey}": fix spaceKey or rootPageId.`);
      }
      if (str(top?.type) !== '' && str(top.type) !== 'page') {
        throw new RefdeskError('invalid_source', `rootPageId ${root} is a ${str(top.type)}, not a page.`);
      }
      pages.push(this.page(top, withBodies, what));
      url = `${this.v1}/content/${encodeURIComponent(root)}/descendant/page`;
      what = `the pages below page ${root}`;
    } else {
      url = `${this.v1}/content`;
      what = `the pages of space "${this.target.spaceKey}"`;
    }
    let start = 0;
    for (;;) {
      const q = new URLSearchParams();
      if (!root) {
        q.set('spaceKey', this.target.spaceKey);
        q.set('type', 'page');
        q.set('status', 'current');
      }
      q.set('expand', expand);
      q.set('start', String(start));
      q.set('limit', String(this.settings.pageSize));
      requests++;
      const res = await this.http.getJson<V1List>(`${url}?${q}`, { what, notFound: () => spaceNotFound(this.target) });
      if (!Array.isArray(res?.results)) throw shapeError(this.target, what);
      for (const p of res.results) pages.push(this.page(p, withBodies, what));
      if (pages.length > limit) throw tooLarge(this.target, limit);
      if (res.results.length === 0 || !res._links?.next) break;
      start += res.results.length;
    }
    return { pages, requests };
  }

  async getPage(id: string, path?: string): Promise<PageInfo> {
    const what = `page ${id}`;
    const res = await this.http.getJson<V1Content>(`${this.v1}/content/${encodeURIComponent(id)}?expand=body.storage,version,ancestors`, {
      what,
      notFound: pageGone(this.target, id),
      path,
    });
    return this.page(res, true, what);
  }

  private page(p: V1Content, withBody: boolean, what: string): PageInfo {
    const id = str(p?.id);
    const version = Number(p?.version?.number);
    if (!id || !Number.isFinite(version)) throw shapeError(this.target, what);
    const body = p.body?.storage?.value;
    if (withBody && typeof body !== 'string') throw shapeError(this.target, what);
    const ancestors = (Array.isArray(p.ancestors) ? p.ancestors : [])
      .filter((a) => a && (a.type === undefined || a.type === 'page') && str(a.id) !== '')
      .map((a) => ({ id: str(a.id), title: str(a.title) || `Page ${str(a.id)}` }));
    return {
      id,
      title: str(p.title) || `Page ${id}`,
      version,
      parentId: ancestors.length > 0 ? ancestors[ancestors.length - 1].id : null,
      ancestors,
      ...(withBody ? { body: body as string } : {}),
    };
  }
}
