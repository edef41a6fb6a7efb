/**
 * Reads a Confluence space (or a page subtree) as markdown documents, one per page.
 *
 * Requests: the space, then the page listing (paginated), then bodies. On a first read the
 * listing carries the bodies (one pass). On a refresh the listing carries only ids, titles,
 * parents and versions; a page whose version, place in the hierarchy and title match the
 * previous build is yielded `unchanged` without its body, and the bodies of the changed pages
 * are fetched one by one, or, when more pages changed than the listing took requests, by listing
 * again with bodies, whichever takes fewer requests.
 */
import { createHash } from 'node:crypto';
import type { Fetch, Logger, Source, SourceContext, SourceDocument } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { CloudApi, ServerApi, type ConfluenceApi, type PageInfo } from './api.ts';
import { ConfluenceHttp } from './http-client.ts';
import { pageMarkdown } from './markdown.ts';
import { planPages, type PlannedPage } from './page-tree.ts';
import { DEFAULT_CONFLUENCE_OPTIONS, type ConfluenceOptions } from './schema.ts';
import { parseConfluenceSpec, type ConfluenceTarget } from './spec.ts';

/** Bumped when the conversion changes, so a refresh converts every page again. */
export const CONVERTER_VERSION = '1';

export interface ConfluenceDeps {
  fetch: Fetch;
  logger?: Logger;
}

const PROGRESS_EVERY = 25;

/** The web URLs of pages and attachments on the site. */
export class SiteUrls {
  constructor(private readonly target: ConfluenceTarget) {}

  /** A page by id (the form both deployments keep working across renames and moves). */
  page(id: string): string {
    const { base, spaceKey, deployment } = this.target;
    return deployment === 'cloud'
      ? `${base}/spaces/${encodeURIComponent(spaceKey)}/pages/${encodeURIComponent(id)}`
      : `${base}/pages/viewpage.action?pageId=${encodeURIComponent(id)}`;
  }

  /** A page by space and title, for links to pages this read does not hold. */
  byTitle(title: string, spaceKey: string): string {
    return `${this.target.base}/display/${encodeURIComponent(spaceKey)}/${encodeURIComponent(title).replace(/%20/g, '+')}`;
  }

  attachment(pageId: string, filename: string): string {
    return `${this.target.base}/download/attachments/${encodeURIComponent(pageId)}/${encodeURIComponent(filename)}`;
  }
}

/** The fingerprint of a page's document: its version plus what else shapes the markdown. */
export function pageHash(version: number, spaceName: string, trail: string[], title: string): string {
  const digest = createHash('sha256').update(JSON.stringify([CONVERTER_VERSION, spaceName, trail, title])).digest('hex').slice(0, 12);
  return `v${version}-${digest}`;
}

export class ConfluenceSource implements Source {
  readonly options: ConfluenceOptions;

  constructor(options: Partial<ConfluenceOptions> | undefined, private readonly deps: ConfluenceDeps) {
    this.options = { ...DEFAULT_CONFLUENCE_OPTIONS, ...options };
  }

  async *read(ctx: SourceContext): AsyncGenerator<SourceDocument> {
    const target = parseConfluenceSpec(ctx.spec);
    ctx.signal.throwIfAborted();
    const http = new ConfluenceHttp(this.deps.fetch, target, this.options, ctx.signal, (m, fields) => ctx.log('warn', m, fields));
    const settings = { pageSize: this.options.pageSize };
    const api: ConfluenceApi = target.deployment === 'cloud' ? new CloudApi(http, target, settings) : new ServerApi(http, target, settings);
    const urls = new SiteUrls(target);
    const scope = `space "${target.spaceKey}"${target.rootPageId ? ` below page ${target.rootPageId}` : ''}`;

    const space = await api.space();
    // The library is named as its space is; a space is the organization's own documentation.
    ctx.setLibraryMeta?.({ title: space.name || undefined, official: true });
    // Cloud cuts a subtree out of the whole space listing: bodies only for the pages in scope.
    const bodiesInListing = ctx.previous.size === 0 && !(target.deployment === 'cloud' && target.rootPageId);
    const listing = await api.listPages(space, bodiesInListing, this.options.maxPages);
    const planned = planPages(listing.pages, space, target.rootPageId, target.spaceKey);
    if (planned.length > this.options.maxPages) {
      throw new RefdeskError(
        'too_large',
        `The ${scope} has ${planned.length} pages, more than the ${this.options.maxPages} one library may hold: pick a smaller subtree with rootPageId, or raise the confluence source option maxPages.`,
      );
    }
    if (planned.length === 0) {
      throw new RefdeskError('no_documentation', `The ${scope} at ${target.base} has no current pages to read.`);
    }

    const titleUrls = new Map<string, string>();
    for (const p of listing.pages) if (!titleUrls.has(p.title)) titleUrls.set(p.title, urls.page(p.id));
    const pageUrl = (title: string, key: string | null): string =>
      (key === null || key === target.spaceKey ? titleUrls.get(title) : undefined) ?? urls.byTitle(title, key ?? target.spaceKey);

    const hashOf = (p: PlannedPage, version = p.page.version) => pageHash(version, space.name, p.trail, p.page.title);
    const changed = planned.filter((p) => ctx.previous.get(p.path)?.hash !== hashOf(p));
    const bodies = new Map<string, PageInfo>();
    if (bodiesInListing) {
      for (const p of listing.pages) bodies.set(p.id, p);
    } else if (changed.length > listing.requests) {
      for (const p of (await api.listPages(space, true, this.options.maxPages)).pages) bodies.set(p.id, p);
    }

    let files = 0;
    let bytes = 0;
    let unchanged = 0;
    for (const p of planned) {
      ctx.signal.throwIfAborted();
      const url = urls.page(p.page.id);
      if (!changed.includes(p)) {
        unchanged++;
        yield {
          path: p.path,
          url,
          format: 'markdown',
          content: '',
          title: p.page.title,
          hash: hashOf(p),
          meta: { pageId: p.page.id, version: String(p.page.version) },
          unchanged: true,
        };
        continue;
      }
      const full = bodies.get(p.page.id) ?? (await api.getPage(p.page.id, p.path));
      const content = pageMarkdown(space.name, p.trail, p.page.title, full.body ?? '', {
        pageUrl,
        attachmentUrl: (file) => urls.attachment(p.page.id, file),
        selfUrl: url,
      });
      files++;
      bytes += Buffer.byteLength(content);
      yield {
        path: p.path,
        url,
        format: 'markdown',
        content,
        title: p.page.title,
        hash: hashOf(p, full.version),
        meta: { pageId: p.page.id, version: String(full.version) },
      };
      if (files % PROGRESS_EVERY === 0) ctx.progress({ files, bytes, message: `${files} Confluence pages converted` });
    }
    ctx.progress({ files, bytes });
    ctx.log(
      'info',
      `read ${planned.length} pages of ${scope} (${target.deployment}): ${files} converted, ${unchanged} unchanged, ${http.requests} requests`,
    );
  }
}
