/**
 * A real HTTP server on 127.0.0.1 for tests of sources that read over the network. The test
 * gives one handler; every request is recorded (method, path with query, headers).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { TestContext } from 'node:test';
import { listenOnLoopback } from './listen.ts';

export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => unknown;

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  base: string;
  requests: RecordedRequest[];
  /** Requests to this path (query included), in order. */
  hits(path: string): RecordedRequest[];
  close(): Promise<void>;
}

/** Starts a server; it is closed when the test (or suite, for a `before` hook's context) ends. */
export async function startServer(handler: Handler, t?: TestContext): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, headers: { ...req.headers } });
    Promise.resolve(handler(req, res, url)).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(e));
    });
  });
  // Idle connections stay open until the client drops them: with Node's 5 s default, a test
  // starved of CPU on a loaded machine can reuse a socket in the moment the server closes it
  // (ECONNRESET), which says nothing about the code under test.
  server.keepAliveTimeout = 120_000;
  const base = await listenOnLoopback(server);
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t?.after(close);
  return { base, requests, hits: (p) => requests.filter((r) => r.path === p), close };
}

/** Sends a body with a content type (and optional extra headers). */
export function send(res: ServerResponse, status: number, body: string | Buffer, type = 'text/plain; charset=utf-8', headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}
