/**
 * The crawl of one website library: robots.txt, sitemaps, a breadth-first frontier inside the
 * scope, polite fetching (per-host delay, bounded concurrency, retries), redirects, canonical
 * URLs, duplicate pages and conditional refreshes.
 *
 * Pages are fetched ahead of time (up to `concurrency` at once) but handled and yielded strictly
 * in frontier order, so the same site gives the same documents in the same order on every read.
 */
import { createHash } from 'node:crypto';
import type { Fetch, PreviousDocument, SourceContext, SourceDocument } from '../../core/contracts.ts';
import { isRefdeskError, RefdeskError } from '../../core/errors.ts';
import { extractPage, type ExtractedPage } from './extract.ts';
import { PageFetcher, type PageResponse } from './fetch-page.ts';
import type { WebsiteOptions } from './options.ts';
import { ALLOW_ALL, parseRobots, robotsAgentName, type RobotsRules } from './robots.ts';
import { Scope } from './scope.ts';
import { parseSitemap } from './sitemap.ts';
import type { CrawlSettings } from './spec.ts';
import { documentPath, normalizeUrl } from './urls.ts';

interface QueueItem {
  url: string;
  depth: number;
}

type Outcome =
  | { kind: 'page'; item: QueueItem; finalUrl: string; format: 'markdown' | 'text'; page: ExtractedPage; etag: string | null; lastModified: string | null }
  | { kind: 'unchanged'; item: QueueItem; path: string; prev: PreviousDocument }
  | { kind: 'skip'; item: QueueItem; reason: string; level: 'debug' | 'info' | 'warn'; response?: PageResponse };

const ACCEPT = 'text/html,application/xhtml+xml;q=0.9,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.1';
const PAGE_TYPE = /^\s*$|text\/html|application\/xhtml\+xml|text\/(x-)?markdown|text\/plain/i;
const MAX_STORED_LINKS = 2000;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export class Crawler {
  private scope: Scope;
  private robots: RobotsRules = ALLOW_ALL;
  private readonly fetcher: PageFetcher;
  private readonly queue: QueueItem[] = [];
  /** Every URL ever put in the queue or refused from it (normalized). */
  private readonly known = new Set<string>();
  /** URLs (request, final, canonical) whose page has been handled, with its document path. */
  private readonly done = new Map<string, string>();
  private readonly paths = new Set<string>();
  private readonly hashes = new Map<string, string>();
  /** The previous build's documents by the URL they were requested with. */
  private readonly previousByUrl = new Map<string, { path: string; prev: PreviousDocument }>();
  private readonly stop = new AbortController();
  private readonly signal: AbortSignal;
  private fetched = 0;
  private yielded = 0;
  private bytes = 0;

  constructor(
    private readonly ctx: SourceContext,
    private readonly settings: CrawlSettings,
    private readonly options: WebsiteOptions,
    fetch: Fetch,
  ) {
    this.scope = new Scope(settings.start, settings.include, settings.exclude);
    this.signal = AbortSignal.any([ctx.signal, this.stop.signal]);
    this.fetcher = new PageFetcher({
      fetch,
      userAgent: options.userAgent,
      timeoutMs: settings.timeoutMs,
      retries: options.retries,
      retryDelayMs: options.retryDelayMs,
      delayMs: settings.delayMs,
      signal: this.signal,
    });
    for (const [path, prev] of ctx.previous) {
      if (prev.meta?.url) this.previousByUrl.set(prev.meta.url, { path, prev });
    }
  }

  async *run(): AsyncGenerator<SourceDocument> {
    const { ctx, settings } = this;
    try {
      for (const note of settings.notes) ctx.log('warn', note);
      this.robots = await this.loadRobots(this.scope.origin);
      const startKey = normalizeUrl(settings.start);
      if (!this.robots.allows(settings.start.pathname + settings.start.search)) {
        throw new RefdeskError('invalid_source', `robots.txt of ${this.scope.origin} does not allow "${robotsAgentName(this.options.userAgent)}" to read the start page ${startKey}.`);
      }
      this.known.add(startKey);
      this.queue.push({ url: startKey, depth: 0 });
      const first = await this.fetchItem(this.queue[0], true);
      if (first.kind === 'skip') throw this.startError(first);
      // The library is named as the start page names its site.
      if (first.kind === 'page' && first.page.site) ctx.setLibraryMeta?.({ title: first.page.site.name, description: first.page.site.description });
      if (first.kind === 'page' && first.finalUrl !== startKey) await this.rebase(new URL(first.finalUrl));
      if (settings.sitemap) await this.readSitemaps();

      const inflight = new Map<number, Promise<Outcome>>([[0, Promise.resolve(first)]]);
      let started = 1;
      const maxFetches = settings.maxPages * 3 + 50;
      for (let next = 0; next < this.queue.length; next++) {
        if (this.yielded >= settings.maxPages) {
          ctx.log('info', `Stopped at maxPages (${settings.maxPages}); ${this.queue.length - next} queued URLs were not read.`);
          break;
        }
        while (started < this.queue.length && started < next + settings.concurrency && this.fetched < maxFetches) {
          const p = this.fetchItem(this.queue[started]);
          p.catch(() => undefined);
          inflight.set(started++, p);
          this.fetched += 1;
        }
        const pending = inflight.get(next);
        if (!pending) {
          ctx.log('warn', `Stopped after ${this.fetched} requests (the limit for maxPages ${settings.maxPages}); ${this.queue.length - next} queued URLs were not read.`);
          break;
        }
        const outcome = await pending;
        inflight.delete(next);
        const doc = this.commit(outcome);
        if (!doc) continue;
        this.signal.throwIfAborted();
        this.yielded += 1;
        this.bytes += Buffer.byteLength(doc.content);
        yield doc;
        ctx.progress({ files: this.yielded, bytes: this.bytes, message: `${this.yielded} pages read, ${this.queue.length - next - 1} queued` });
      }
      this.signal.throwIfAborted();
      if (this.yielded === 0) {
        throw new RefdeskError('no_documentation', `No page with content was found from ${startKey} (${this.queue.length} URLs tried); see the job log for why each was skipped.`);
      }
      ctx.log('info', `Read ${this.yielded} pages (${this.bytes} bytes of markdown) from ${this.scope.origin}.`);
    } finally {
      this.stop.abort(new Error('crawl finished'));
    }
  }

  // -------------------------------------------------------------------------------------------
  // robots.txt and sitemaps

  private async loadRobots(origin: string): Promise<RobotsRules> {
    const url = `${origin}/robots.txt`;
    const r = await this.fetcher.get({ url, headers: { accept: 'text/plain,*/*;q=0.5' } });
    if (r.kind === 'error') {
      if (isRefdeskError(r.error) && r.error.code === 'forbidden') throw r.error;
      throw new RefdeskError('invalid_source', `Could not read ${url}: ${r.message}. Check that the site is reachable.`, { cause: r.error });
    }
    if (r.kind === 'http-error' && (r.status === 429 || r.status >= 500)) {
      throw new RefdeskError('invalid_source', `${url} answered HTTP ${r.status}, so the site may not be crawled now (robots.txt rules, RFC 9309). Try again later.`);
    }
    if (r.kind !== 'ok' || r.body === null) {
      this.ctx.log('info', `No robots.txt at ${origin} (${r.kind === 'http-error' ? `HTTP ${r.status}` : r.kind}): every page in scope may be read.`);
      return ALLOW_ALL;
    }
    const rules = parseRobots(r.body, robotsAgentName(this.options.userAgent), new URL(url));
    if (rules.crawlDelayMs !== null) {
      let delay = rules.crawlDelayMs;
      if (delay > this.options.maxCrawlDelayMs) {
        this.ctx.log('warn', `robots.txt asks for a Crawl-delay of ${delay / 1000} s; using the operator's limit of ${this.options.maxCrawlDelayMs / 1000} s.`);
        delay = this.options.maxCrawlDelayMs;
      }
      this.fetcher.config.delayMs = Math.max(this.fetcher.config.delayMs, delay);
    }
    this.ctx.log('info', `Read robots.txt of ${origin}${rules.crawlDelayMs !== null ? ` (Crawl-delay ${rules.crawlDelayMs / 1000} s)` : ''}.`);
    return rules;
  }

  private async rebase(final: URL): Promise<void> {
    const origin = this.scope.origin;
    this.scope = new Scope(final, this.settings.include, this.settings.exclude);
    this.ctx.log('info', `The start URL redirected to ${final.href}; reading pages under ${this.scope.origin}${this.scope.prefix}.`);
    if (this.scope.origin !== origin) this.robots = await this.loadRobots(this.scope.origin);
    if (!this.robots.allows(final.pathname + final.search)) {
      throw new RefdeskError('invalid_source', `robots.txt of ${this.scope.origin} does not allow reading ${final.href}.`);
    }
    this.known.add(normalizeUrl(final));
  }

  private async readSitemaps(): Promise<void> {
    const pending = this.robots.sitemaps.length > 0 ? [...this.robots.sitemaps] : [`${this.scope.origin}/sitemap.xml`];
    const seen = new Set<string>();
    let files = 0;
    let added = 0;
    while (pending.length > 0 && files < this.options.maxSitemaps) {
      const url = pending.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      files += 1;
      const r = await this.fetcher.get({ url, headers: { accept: 'application/xml,text/xml,text/plain;q=0.8,*/*;q=0.1' } });
      if (r.kind !== 'ok' || r.body === null) {
        const why = r.kind === 'http-error' ? `HTTP ${r.status}` : r.kind === 'error' ? r.message : 'no body';
        this.ctx.log('info', `No sitemap read from ${url} (${why}).`);
        continue;
      }
      const parsed = parseSitemap(r.body, new URL(r.finalUrl));
      if (parsed.kind === 'index') pending.push(...parsed.locations);
      else for (const loc of parsed.locations) if (this.enqueue(loc, 1)) added += 1;
    }
    if (pending.length > 0) this.ctx.log('warn', `Read ${files} sitemap files (the limit); ${pending.length} more were not read.`);
    if (files > 0) this.ctx.log('info', `Sitemaps gave ${added} URLs in scope.`);
  }

  // -------------------------------------------------------------------------------------------
  // The frontier

  /** Queues a URL when it is new, in scope, allowed by robots.txt and not too deep. */
  private enqueue(raw: string, depth: number): boolean {
    let key: string;
    try {
      key = normalizeUrl(raw);
    } catch {
      return false;
    }
    if (this.known.has(key) || depth > this.settings.maxDepth) return false;
    this.known.add(key);
    const u = new URL(key);
    const why = this.scope.refuse(u);
    if (why) {
      this.ctx.log('debug', `Not following ${key}: ${why}.`);
      return false;
    }
    if (!this.robots.allows(u.pathname + u.search)) {
      this.ctx.log('info', `Skipped ${key}: disallowed by robots.txt.`);
      return false;
    }
    this.queue.push({ url: key, depth });
    return true;
  }

  /**
   * Fetches and extracts one queued page; never throws except when the crawl is aborted. The
   * start page may redirect anywhere the network policy allows (the scope follows it); other
   * pages only within the scope.
   */
  private async fetchItem(item: QueueItem, isStart = false): Promise<Outcome> {
    const already = this.done.get(item.url);
    if (already !== undefined) return { kind: 'skip', item, reason: `already read as ${already}`, level: 'debug' };
    const previous = this.previousByUrl.get(item.url);
    const headers: Record<string, string> = { accept: ACCEPT };
    if (previous?.prev.meta.etag) headers['if-none-match'] = previous.prev.meta.etag;
    if (previous?.prev.meta.lastModified) headers['if-modified-since'] = previous.prev.meta.lastModified;
    const r = await this.fetcher.get({
      url: item.url,
      headers,
      wantBody: (ct) => PAGE_TYPE.test(ct),
      refuseRedirect: isStart ? undefined : (target) => this.scope.refuse(target) ?? (this.robots.allows(target.pathname + target.search) ? null : 'disallowed by robots.txt'),
    });
    if (r.kind === 'error') return { kind: 'skip', item, reason: r.message, level: 'warn', response: r };
    if (r.kind === 'redirect-refused') return { kind: 'skip', item, reason: `redirects to ${r.target}, ${r.reason}`, level: 'info', response: r };
    if (r.kind === 'http-error') return { kind: 'skip', item, reason: `HTTP ${r.status}`, level: 'warn', response: r };
    if (r.kind === 'not-modified') {
      if (!previous) return { kind: 'skip', item, reason: 'HTTP 304 without a previous copy', level: 'warn', response: r };
      return { kind: 'unchanged', item, path: previous.path, prev: previous.prev };
    }
    if (r.body === null) return { kind: 'skip', item, reason: `not a page (${r.contentType})`, level: 'info', response: r };
    const finalUrl = normalizeUrl(r.finalUrl);
    const ct = r.contentType.toLowerCase();
    const isHtml = /html/.test(ct) || (ct.trim() === '' && r.body.trimStart().startsWith('<'));
    const isMarkdown = /markdown/.test(ct) || /\.(md|markdown|mdx)$/i.test(new URL(finalUrl).pathname);
    let page: ExtractedPage;
    try {
      page = isHtml ? extractPage(r.body, r.finalUrl) : { title: '', markdown: r.body, links: [], canonical: null, noindex: false, nofollow: false };
    } catch (e) {
      return { kind: 'skip', item, reason: `the page could not be parsed (${(e as Error).message})`, level: 'warn', response: r };
    }
    return {
      kind: 'page',
      item,
      finalUrl,
      format: isHtml || isMarkdown ? 'markdown' : 'text',
      page,
      etag: r.headers.get('etag'),
      lastModified: r.headers.get('last-modified'),
    };
  }

  private startError(o: Extract<Outcome, { kind: 'skip' }>): Error {
    const url = o.item.url;
    const r = o.response;
    if (r?.kind === 'error') {
      if (isRefdeskError(r.error)) return r.error;
      return new RefdeskError('invalid_source', `Could not read the start page ${url}: ${r.message}. Check the URL and that the site is reachable.`, { cause: r.error });
    }
    if (r?.kind === 'http-error') return new RefdeskError('invalid_source', `The start page ${url} answered HTTP ${r.status}; check the URL.`);
    return new RefdeskError('invalid_source', `The start page ${url} could not be read: ${o.reason}. Give the URL of an HTML, markdown or text page.`);
  }

  /** Handles one outcome in frontier order: the document to yield, or null when it is skipped. */
  private commit(o: Outcome): SourceDocument | null {
    const skip = (reason: string, level: 'debug' | 'info' | 'warn' = 'info'): null => {
      this.ctx.log(level, `Skipped ${o.item.url}: ${reason}.`, { path: o.item.url });
      return null;
    };
    if (o.kind === 'skip') return skip(o.reason, o.level);

    if (o.kind === 'unchanged') {
      const { prev, path } = o;
      if (this.paths.has(path)) return skip(`its page ${path} was read already`, 'debug');
      const pageUrl = prev.meta.page ?? o.item.url;
      this.markDone([o.item.url, pageUrl], path);
      this.paths.add(path);
      if (prev.hash) this.hashes.set(prev.hash, pageUrl);
      let links: string[] = [];
      try {
        links = prev.meta.links ? (JSON.parse(prev.meta.links) as string[]) : [];
      } catch {
        links = [];
      }
      for (const l of links) this.enqueue(l, o.item.depth + 1);
      this.ctx.log('info', `Unchanged ${o.item.url} (HTTP 304) -> ${path}.`, { path });
      return { path, url: pageUrl, format: prev.meta.format ?? 'markdown', content: '', unchanged: true, hash: prev.hash, meta: prev.meta };
    }

    const { page, finalUrl } = o;
    const final = new URL(finalUrl);
    if (finalUrl !== o.item.url) {
      const why = this.scope.refuse(final);
      if (why) return skip(`redirected to ${finalUrl}, ${why}`);
      if (!this.robots.allows(final.pathname + final.search)) return skip(`redirected to ${finalUrl}, disallowed by robots.txt`);
      const seen = this.done.get(finalUrl);
      if (seen !== undefined) return skip(`redirected to ${finalUrl}, already read as ${seen}`);
    }
    let pageUrl = finalUrl;
    if (page.canonical) {
      const canonical = normalizeUrl(page.canonical);
      const cu = new URL(canonical);
      if (canonical !== finalUrl && !this.scope.refuse(cu) && this.robots.allows(cu.pathname + cu.search)) {
        const seen = this.done.get(canonical);
        if (seen !== undefined) return skip(`its canonical URL ${canonical} was already read as ${seen}`);
        pageUrl = canonical;
      }
    }
    const inScope: string[] = [];
    if (!page.nofollow) {
      for (const l of page.links) {
        this.enqueue(l, o.item.depth + 1);
        let key: string;
        try {
          key = normalizeUrl(l);
        } catch {
          continue;
        }
        if (inScope.length < MAX_STORED_LINKS && !this.scope.refuse(new URL(key)) && !inScope.includes(key)) inScope.push(key);
      }
    }
    const path = documentPath(pageUrl);
    this.markDone([o.item.url, finalUrl, pageUrl], path);
    if (page.noindex) return skip('the page asks not to be indexed (meta robots noindex)');
    if (page.markdown.trim() === '') return skip('no content');
    const hash = sha256(page.markdown);
    const twin = this.hashes.get(hash);
    if (twin !== undefined) return skip(`same content as ${twin}`);
    if (this.paths.has(path)) return skip(`another page already has the path ${path}`);
    this.paths.add(path);
    this.hashes.set(hash, pageUrl);
    const meta: Record<string, string> = { url: o.item.url, page: pageUrl, format: o.format };
    if (o.etag) meta.etag = o.etag;
    if (o.lastModified) meta.lastModified = o.lastModified;
    if (inScope.length > 0) meta.links = JSON.stringify(inScope);
    this.ctx.log('info', `Read ${o.item.url}${pageUrl !== o.item.url ? ` (as ${pageUrl})` : ''} -> ${path}.`, { path });
    const doc: SourceDocument = { path, url: pageUrl, format: o.format, content: page.markdown, hash, meta };
    if (page.title) doc.title = page.title;
    return doc;
  }

  private markDone(urls: string[], path: string): void {
    for (const u of urls) if (!this.done.has(u)) this.done.set(u, path);
  }
}
