/**
 * A real git smart-HTTP server for tests: Node's http server on 127.0.0.1 running
 * `git http-backend` as a CGI program for each request, over bare repositories in `root`.
 * Repositories listed in `tokens` require HTTP Basic auth whose password is their token.
 * `failNext(n, status)` makes the next n requests answer with that status (to test retries).
 */
import { spawn, execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface FailureReply {
  statusText?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface GitServer {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Every request seen: method, path, whether it carried an Authorization header, status answered. */
  requests: Array<{ method: string; path: string; auth: boolean; status: number }>;
  /** The next n requests answer `status`; `reply` shapes each one (status text, headers, body), e.g. to echo the request. */
  failNext(n: number, status?: number, reply?: (req: IncomingMessage) => FailureReply): void;
  close(): Promise<void>;
}

const EXEC_PATH = execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim();

function credentialsOk(req: IncomingMessage, token: string): boolean {
  const h = req.headers.authorization ?? '';
  const m = /^Basic\s+(\S+)$/.exec(h);
  if (!m) return false;
  const pair = Buffer.from(m[1], 'base64').toString('utf8');
  return pair.slice(pair.indexOf(':') + 1) === token;
}

export async function startGitServer(root: string, tokens: Record<string, string> = {}): Promise<GitServer> {
  const requests: GitServer['requests'] = [];
  let failures = 0;
  let failStatus = 503;
  let failReply: ((req: IncomingMessage) => FailureReply) | undefined;

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const repo = Object.keys(tokens).find((k) => url.pathname.startsWith(`/${k}/`));
    const record = (status: number) => requests.push({ method: req.method ?? 'GET', path: url.pathname, auth: Boolean(req.headers.authorization), status });
    if (failures > 0) {
      failures--;
      record(failStatus);
      const reply = failReply?.(req) ?? {};
      const headers = { 'content-type': 'text/plain', ...reply.headers };
      if (reply.statusText !== undefined) res.writeHead(failStatus, reply.statusText, headers);
      else res.writeHead(failStatus, headers);
      res.end(reply.body ?? 'temporarily unavailable\n');
      return;
    }
    const token = repo === undefined ? undefined : tokens[repo];
    if (token !== undefined && !credentialsOk(req, token)) {
      record(401);
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' }).end('authentication required\n');
      return;
    }
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ''),
      REQUEST_METHOD: req.method ?? 'GET',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_ADDR: '127.0.0.1',
      REMOTE_USER: token !== undefined ? 'reader' : '',
      GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
    };
    const cgi = spawn(join(EXEC_PATH, 'git-http-backend'), [], { env });
    req.pipe(cgi.stdin);
    cgi.stdin.on('error', () => {});
    const chunks: Buffer[] = [];
    cgi.stdout.on('data', (b: Buffer) => chunks.push(b));
    cgi.stderr.on('data', () => {});
    cgi.on('close', () => {
      const out = Buffer.concat(chunks);
      let split = out.indexOf('\r\n\r\n');
      let sepLen = 4;
      if (split < 0) {
        split = out.indexOf('\n\n');
        sepLen = 2;
      }
      if (split < 0) {
        record(500);
        res.writeHead(500).end();
        return;
      }
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of out.subarray(0, split).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number(v.split(' ')[0]);
        else headers[k] = v;
      }
      record(status);
      res.writeHead(status, headers).end(out.subarray(split + sepLen));
    });
  };

  const server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    failNext(n, status = 503, reply) {
      failures = n;
      failStatus = status;
      failReply = reply;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
