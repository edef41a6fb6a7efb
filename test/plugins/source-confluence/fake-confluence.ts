/**
 * A Confluence-shaped HTTP server on 127.0.0.1 for the tests: the Cloud REST v2 endpoints under
 * /wiki/api/v2 (Basic email:token) and the Server/Data Center REST v1 endpoints under
 * <context>/rest/api (Bearer personal access token), over one mutable space. It records every
 * request and can answer the next requests with an error status (429, 503...).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FixturePage, FixtureSpace } from './fixtures.ts';
import { listenOnLoopback } from '../../helpers/listen.ts';

export interface RecordedRequest {
  method: string;
  /** Path and query as requested. */
  url: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  /** What it answered. */
  status: number;
}

export interface FakeConfluenceOptions {
  space: FixtureSpace;
  /** Cloud credentials accepted as Basic auth. */
  email: string;
  apiToken: string;
  /** Server/Data Center personal access token accepted as Bearer. */
  pat: string;
  /** Server context path, e.g. `/confluence`. */
  context?: string;
  /** Largest `limit` honoured when bodies are expanded on Server (Confluence caps it too). */
  serverBodyLimitCap?: number;
}

/** A failure reply made for each failed request (e.g. one that echoes the request's Authorization). */
export interface FailureReply {
  statusText?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface FakeConfluence {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  space: FixtureSpace;
  requests: RecordedRequest[];
  /**
   * Answers the next `count` requests with `status` (and a Retry-After header when given);
   * `reply` shapes their status text, headers and body (status 200 with a reply answers that body).
   * With `only`, just the requests whose path matches count (and fail).
   */
  failNext(status: number, count: number, retryAfter?: string, reply?: (req: IncomingMessage) => FailureReply, only?: RegExp): void;
  /** Requests whose path matches, e.g. count(/\/pages\/104$/). */
  count(path: RegExp): number;
  close(): Promise<void>;
}

export async function startFakeConfluence(options: FakeConfluenceOptions): Promise<FakeConfluence> {
  const context = options.context ?? '/confluence';
  const requests: RecordedRequest[] = [];
  let failures: { status: number; count: number; retryAfter?: string; reply?: (req: IncomingMessage) => FailureReply; only?: RegExp } | null = null;
  const space = options.space;
  let origin = '';

  const byId = (id: string) => space.pages.find((p) => p.id === id);
  const ancestors = (p: FixturePage): FixturePage[] => {
    const out: FixturePage[] = [];
    let cur = p.parentId ? byId(p.parentId) : undefined;
    while (cur) {
      out.unshift(cur);
      cur = cur.parentId ? byId(cur.parentId) : undefined;
    }
    return out;
  };
  // Listing order is Confluence's, not sorted by title or id: the source must not depend on it.
  const listed = () => [...space.pages].sort((a, b) => (a.title.length - b.title.length) || (a.id < b.id ? 1 : -1));

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8' });
    res.end(JSON.stringify(body));
  };

  // ----- Cloud v2 -----
  const v2Page = (p: FixturePage, withBody: boolean) => ({
    id: p.id,
    status: 'current',
    title: p.title,
    spaceId: space.id,
    parentId: p.parentId,
    parentType: p.parentId ? 'page' : null,
    authorId: '5b10a2844c20165700ede21g',
    createdAt: '2024-03-01T10:00:00.000Z',
    version: { number: p.version, message: '', minorEdit: false, authorId: '5b10a2844c20165700ede21g', createdAt: '2024-04-01T10:00:00.000Z' },
    ...(withBody ? { body: { storage: { representation: 'storage', value: p.body } } } : {}),
    _links: { webui: `/spaces/${space.key}/pages/${p.id}/${encodeURIComponent(p.title).replace(/%20/g, '+')}`, editui: `/pages/resumedraft.action?draftId=${p.id}`, tinyui: `/x/${p.id}` },
  });

  const cloud = (req: IncomingMessage, res: ServerResponse, path: string, q: URLSearchParams): number => {
    const expected = 'Basic ' + Buffer.from(`${options.email}:${options.apiToken}`).toString('base64');
    if (req.headers.authorization !== expected) {
      json(res, 401, { code: 401, message: 'Unauthorized; scope does not match' });
      return 401;
    }
    if (path === '/wiki/api/v2/spaces') {
      const keys = (q.get('keys') ?? '').split(',');
      const results = keys.includes(space.key)
        ? [{ id: space.id, key: space.key, name: space.name, type: 'global', status: 'current', homepageId: space.homepageId, _links: { webui: `/spaces/${space.key}` } }]
        : [];
      json(res, 200, { results, _links: { base: `${origin}/wiki` } });
      return 200;
    }
    let m = /^\/wiki\/api\/v2\/spaces\/([^/]+)\/pages$/.exec(path);
    if (m) {
      if (m[1] !== space.id) {
        json(res, 404, { errors: [{ status: 404, code: 'NOT_FOUND', title: 'Space not found' }] });
        return 404;
      }
      const limit = Math.min(250, Number(q.get('limit') ?? 25));
      const offset = q.get('cursor') ? Number(Buffer.from(q.get('cursor')!, 'base64url').toString()) : 0;
      const all = listed();
      const slice = all.slice(offset, offset + limit);
      const withBody = q.get('body-format') === 'storage';
      const next = offset + limit < all.length ? new URLSearchParams(q) : null;
      next?.set('cursor', Buffer.from(String(offset + limit)).toString('base64url'));
      json(res, 200, {
        results: slice.map((p) => v2Page(p, withBody)),
        _links: { ...(next ? { next: `/wiki/api/v2/spaces/${space.id}/pages?${next}` } : {}), base: `${origin}/wiki` },
      });
      return 200;
    }
    m = /^\/wiki\/api\/v2\/pages\/(\d+)$/.exec(path);
    if (m && byId(m[1])) {
      json(res, 200, v2Page(byId(m[1])!, q.get('body-format') === 'storage'));
      return 200;
    }
    json(res, 404, { errors: [{ status: 404, code: 'NOT_FOUND', title: 'Not Found' }] });
    return 404;
  };

  // ----- Server / Data Center v1 -----
  const v1Content = (p: FixturePage, expand: string[]) => ({
    id: p.id,
    type: 'page',
    status: 'current',
    title: p.title,
    ...(expand.includes('space') ? { space: { id: 98304, key: space.key, name: space.name, type: 'global' } } : {}),
    ...(expand.includes('version') ? { version: { number: p.version, when: '2024-04-01T10:00:00.000Z', minorEdit: false } } : {}),
    ...(expand.includes('ancestors')
      ? { ancestors: ancestors(p).map((a) => ({ id: a.id, type: 'page', status: 'current', title: a.title })) }
      : {}),
    ...(expand.includes('body.storage') ? { body: { storage: { value: p.body, representation: 'storage' } } } : {}),
    _links: { webui: `/display/${space.key}/${encodeURIComponent(p.title).replace(/%20/g, '+')}`, tinyui: `/x/${p.id}`, self: `${origin}${context}/rest/api/content/${p.id}` },
  });

  const page = (all: FixturePage[], q: URLSearchParams, path: string, res: ServerResponse) => {
    const expand = (q.get('expand') ?? '').split(',');
    let limit = Number(q.get('limit') ?? 25);
    if (expand.includes('body.storage')) limit = Math.min(limit, options.serverBodyLimitCap ?? 4);
    const start = Number(q.get('start') ?? 0);
    const slice = all.slice(start, start + limit);
    const next = start + slice.length < all.length ? new URLSearchParams(q) : null;
    next?.set('start', String(start + slice.length));
    next?.set('limit', String(limit));
    json(res, 200, {
      results: slice.map((p) => v1Content(p, expand)),
      start,
      limit,
      size: slice.length,
      _links: { ...(next ? { next: `${path.slice(context.length)}?${next}` } : {}), base: `${origin}${context}`, context, self: `${origin}${path}` },
    });
  };

  const server = (req: IncomingMessage, res: ServerResponse, path: string, q: URLSearchParams): number => {
    if (req.headers.authorization !== `Bearer ${options.pat}`) {
      json(res, 401, { statusCode: 401, message: 'This request requires authentication', reason: 'Unauthorized' });
      return 401;
    }
    const rest = path.slice(context.length);
    let m = /^\/rest\/api\/space\/([^/]+)$/.exec(rest);
    if (m) {
      if (decodeURIComponent(m[1]) !== space.key) {
        json(res, 404, { statusCode: 404, message: `No space found with key : ${decodeURIComponent(m[1])}` });
        return 404;
      }
      json(res, 200, { id: 98304, key: space.key, name: space.name, type: 'global', homepage: { id: space.homepageId, type: 'page', title: byId(space.homepageId)!.title } });
      return 200;
    }
    if (rest === '/rest/api/content') {
      const all = q.get('spaceKey') === space.key && q.get('type') === 'page' ? listed() : [];
      page(all, q, path, res);
      return 200;
    }
    m = /^\/rest\/api\/content\/(\d+)\/descendant\/page$/.exec(rest);
    if (m && byId(m[1])) {
      page(listed().filter((p) => ancestors(p).some((a) => a.id === m![1])), q, path, res);
      return 200;
    }
    m = /^\/rest\/api\/content\/(\d+)$/.exec(rest);
    if (m && byId(m[1])) {
      json(res, 200, v1Content(byId(m[1])!, (q.get('expand') ?? '').split(',')));
      return 200;
    }
    json(res, 404, { statusCode: 404, message: 'No content found' });
    return 404;
  };

  const http = createServer((req, res) => {
    const u = new URL(req.url ?? '/', origin);
    const rec: RecordedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', path: u.pathname, query: u.searchParams, authorization: req.headers.authorization, status: 0 };
    requests.push(rec);
    if (failures && failures.count > 0 && (!failures.only || failures.only.test(u.pathname))) {
      failures.count--;
      rec.status = failures.status;
      const reply = failures.reply?.(req) ?? {};
      const headers = { 'content-type': 'application/json', ...(failures.retryAfter !== undefined ? { 'retry-after': failures.retryAfter } : {}), ...reply.headers };
      if (reply.statusText !== undefined) res.writeHead(failures.status, reply.statusText, headers);
      else res.writeHead(failures.status, headers);
      res.end(reply.body ?? JSON.stringify({ message: 'Rate limit exceeded' }));
      return;
    }
    if (u.pathname.startsWith('/wiki/')) rec.status = cloud(req, res, u.pathname, u.searchParams);
    else if (u.pathname.startsWith(context + '/rest/')) rec.status = server(req, res, u.pathname, u.searchParams);
    else {
      rec.status = 200;
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Not Confluence</title>');
    }
  });
  origin = await listenOnLoopback(http);
  return {
    origin,
    space,
    requests,
    failNext(status, count, retryAfter, reply, only) {
      failures = { status, count, retryAfter, reply, only };
    },
    count: (path) => requests.filter((r) => path.test(r.path)).length,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
