/**
 * The parts of Notion's public API this source reads (https://developers.notion.com/reference):
 * POST /v1/search (the pages the integration can see, paginated) and
 * GET /v1/blocks/{id}/children (a page's or block's children, paginated), each with the
 * integration's bearer token and the Notion-Version header. Pagination follows `has_more` and
 * `next_cursor`. A 429 waits for its Retry-After (a few times); other errors become
 * RefdeskErrors naming the status and Notion's error code (never its message text, never the
 * token).
 */
import { RefdeskError, type Fetch } from 'refdesk/core';
import type { NotionBlock, RichText } from './markdown.ts';

export interface NotionPage {
  object: 'page';
  id: string;
  url?: string;
  last_edited_time?: string;
  archived?: boolean;
  in_trash?: boolean;
  properties?: Record<string, { type: string; title?: RichText[] }>;
}

interface ListAnswer<T> {
  results: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface NotionClientOptions {
  apiUrl: string;
  notionVersion: string;
  pageSize: number;
  token: string;
  fetch: Fetch;
  signal: AbortSignal;
  /** Most waits after a 429 before giving up. */
  maxRetries?: number;
}

export class NotionClient {
  constructor(private readonly o: NotionClientOptions) {}

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const url = new URL(path, this.o.apiUrl.replace(/\/?$/, '/'));
    for (let attempt = 0; ; attempt++) {
      this.o.signal.throwIfAborted();
      const res = await this.o.fetch.fetch(url, {
        method,
        signal: this.o.signal,
        headers: {
          authorization: `Bearer ${this.o.token}`,
          'notion-version': this.o.notionVersion,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      if (res.status === 429 && attempt < (this.o.maxRetries ?? 3)) {
        const wait = Math.min(Number(res.headers.get('retry-after')) || 1, 30);
        await res.body?.cancel();
        await new Promise((r) => setTimeout(r, wait * 1000));
        continue;
      }
      const text = await res.text();
      if (!res.ok) {
        // Notion's error code only (an identifier such as `unauthorized`): its message is upstream text.
        let code = '';
        try {
          const parsed = JSON.parse(text) as { code?: unknown };
          if (typeof parsed.code === 'string' && /^[a-z_]{1,40}$/.test(parsed.code)) code = parsed.code;
        } catch {
          // not Notion's error shape
        }
        const why = `Notion answered ${res.status}${code ? ` ${code}` : ''}`;
        if (res.status === 401) throw new RefdeskError('invalid_source', `${why}. Check the integration token of this library.`);
        if (res.status === 403 || res.status === 404) throw new RefdeskError('invalid_source', `${why}. Share the pages with the integration (Notion: ... > Connections).`);
        throw new RefdeskError('invalid_source', `${why} (${method} ${url.pathname}).`);
      }
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new RefdeskError('invalid_source', `Notion's answer to ${method} ${url.pathname} is not JSON.`);
      }
    }
  }

  /** Every page the integration can see (optionally matching `query`), page by page. */
  async *pages(query?: string): AsyncGenerator<NotionPage> {
    let cursor: string | null = null;
    do {
      const answer: ListAnswer<NotionPage> = await this.call('POST', 'v1/search', {
        filter: { property: 'object', value: 'page' },
        sort: { direction: 'ascending', timestamp: 'last_edited_time' },
        page_size: this.o.pageSize,
        ...(query ? { query } : {}),
        ...(cursor ? { start_cursor: cursor } : {}),
      });
      for (const page of answer.results) if (page.object === 'page') yield page;
      cursor = answer.has_more ? answer.next_cursor : null;
    } while (cursor);
  }

  /** A block's children, with their own children filled in (toggles, nested lists). */
  async children(blockId: string, depth = 0): Promise<NotionBlock[]> {
    const blocks: NotionBlock[] = [];
    let cursor: string | null = null;
    do {
      const qs = new URLSearchParams({ page_size: String(this.o.pageSize), ...(cursor ? { start_cursor: cursor } : {}) });
      const answer: ListAnswer<NotionBlock> = await this.call('GET', `v1/blocks/${encodeURIComponent(blockId)}/children?${qs}`);
      blocks.push(...answer.results);
      cursor = answer.has_more ? answer.next_cursor : null;
    } while (cursor);
    // Child pages are pages of their own (search lists them); other blocks' children are read here.
    for (const block of blocks) {
      if (block.has_children && block.type !== 'child_page' && block.type !== 'child_database' && depth < 5) block.children = await this.children(block.id, depth + 1);
    }
    return blocks;
  }
}
