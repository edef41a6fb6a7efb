/**
 * A loopback server shaped like Notion's public API, for the tests: POST /v1/search and
 * GET /v1/blocks/{id}/children, paginated with `has_more` / `next_cursor` (at most `page_size`
 * results an answer), answering Notion's error shape ({object: "error", status, code, message})
 * for a missing Notion-Version header (400), a wrong bearer token (401) and unknown blocks (404).
 * Nothing here imports Refdesk.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeBlock {
  id: string;
  type: string;
  text?: string;
  /** Extra fields of the block's type object (e.g. `{language: 'ts'}` for code, `{checked: true}`). */
  data?: Record<string, unknown>;
  children?: FakeBlock[];
}

export interface FakePage {
  id: string;
  title: string;
  blocks: FakeBlock[];
  archived?: boolean;
}

export interface FakeNotion {
  url: string;
  /** Every request: method, path and the headers that matter. */
  requests: Array<{ method: string; path: string; version: string | undefined; auth: string | undefined; body?: any }>;
  close(): Promise<void>;
}

const rich = (text: string) => {
  // `code`, **bold** and [links](url) in the fixture text become annotated runs.
  const runs: any[] = [];
  for (const m of text.matchAll(/`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)]+)\)|([^`*[]+)/g)) {
    if (m[1]) runs.push({ type: 'text', plain_text: m[1], href: null, annotations: { code: true } });
    else if (m[2]) runs.push({ type: 'text', plain_text: m[2], href: null, annotations: { bold: true } });
    else if (m[3]) runs.push({ type: 'text', plain_text: m[3], href: m[4], annotations: {} });
    else runs.push({ type: 'text', plain_text: m[5], href: null, annotations: {} });
  }
  return runs;
};

function blockJson(b: FakeBlock) {
  return { object: 'block', id: b.id, type: b.type, has_children: !!b.children?.length, [b.type]: { rich_text: rich(b.text ?? ''), ...b.data } };
}

export async function startFakeNotion(opts: { token: string; pages: FakePage[] }): Promise<FakeNotion> {
  const requests: FakeNotion['requests'] = [];
  const blocks = new Map<string, FakeBlock[]>();
  const index = (id: string, list: FakeBlock[]) => {
    blocks.set(id, list);
    for (const b of list) if (b.children) index(b.id, b.children);
  };
  for (const p of opts.pages) index(p.id, p.blocks);

  const page = <T>(all: T[], cursor: string | null, size: number) => {
    const start = cursor ? Number(cursor) : 0;
    const results = all.slice(start, start + size);
    const next = start + size < all.length ? String(start + size) : null;
    return { object: 'list', results, has_more: next !== null, next_cursor: next };
  };
  const fail = (res: any, status: number, code: string, message: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'error', status, code, message }));
  };

  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = raw ? JSON.parse(raw) : undefined;
      requests.push({ method: req.method!, path: url.pathname + url.search, version: req.headers['notion-version'] as string | undefined, auth: req.headers.authorization, body });
      if (!req.headers['notion-version']) return fail(res, 400, 'missing_version', 'Notion-Version header failed validation: Notion-Version should be defined.');
      if (req.headers.authorization !== `Bearer ${opts.token}`) return fail(res, 401, 'unauthorized', 'API token is invalid.');
      const size = Math.min(Number(body?.page_size ?? url.searchParams.get('page_size') ?? 100), 100);
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && url.pathname === '/v1/search') {
        const q = String(body?.query ?? '').toLowerCase();
        const pages = opts.pages
          .filter((p) => !q || p.title.toLowerCase().includes(q))
          .map((p) => ({
            object: 'page',
            id: p.id,
            url: `https://www.notion.so/${p.title.replace(/\W+/g, '-')}-${p.id.replace(/-/g, '')}`,
            archived: !!p.archived,
            properties: { Name: { id: 'title', type: 'title', title: rich(p.title) } },
          }));
        return res.end(JSON.stringify(page(pages, body?.start_cursor ?? null, size)));
      }
      const m = /^\/v1\/blocks\/([^/]+)\/children$/.exec(url.pathname);
      if (req.method === 'GET' && m) {
        const list = blocks.get(decodeURIComponent(m[1]));
        if (!list) return fail(res, 404, 'object_not_found', `Could not find block with ID: ${m[1]}.`);
        return res.end(JSON.stringify(page(list.map(blockJson), url.searchParams.get('start_cursor'), size)));
      }
      fail(res, 400, 'invalid_request_url', 'Invalid request URL.');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** A small workspace: two pages, one long enough to need several block pages at page_size 2. */
export const WORKSPACE: FakePage[] = [
  {
    id: '1a2b3c4d-0000-4000-8000-000000000001',
    title: 'Deploy runbook',
    blocks: [
      { id: 'b1', type: 'paragraph', text: 'How we ship the **billing** service.' },
      { id: 'b2', type: 'heading_1', text: 'Roll back a release' },
      { id: 'b3', type: 'numbered_list_item', text: 'Find the previous tag with `git tag --sort=-v:refname`.' },
      { id: 'b4', type: 'numbered_list_item', text: 'Run the rollback job.', children: [{ id: 'b4a', type: 'bulleted_list_item', text: 'It takes about five minutes.' }] },
      { id: 'b5', type: 'code', text: 'deployctl rollback --service billing --to previous', data: { language: 'bash' } },
      { id: 'b6', type: 'toggle', text: 'When the rollback fails', children: [{ id: 'b6a', type: 'paragraph', text: 'Page the on-call engineer, see [the rota](https://example.com/rota).' }] },
      { id: 'b7', type: 'to_do', text: 'Announce it in #releases', data: { checked: true } },
    ],
  },
  {
    id: '1a2b3c4d-0000-4000-8000-000000000002',
    title: 'Rate limits',
    blocks: [
      { id: 'c1', type: 'heading_2', text: 'Client quotas' },
      { id: 'c2', type: 'paragraph', text: 'Each API key may send 600 requests a minute; call `quota.remaining()` to see what is left.' },
      { id: 'c3', type: 'quote', text: 'Raise limits through the platform team.' },
    ],
  },
  { id: '1a2b3c4d-0000-4000-8000-000000000003', title: 'Old page', archived: true, blocks: [{ id: 'd1', type: 'paragraph', text: 'Archived.' }] },
];
