/**
 * Bad HTTP input against a real `refdesk serve` process: truncated, malformed, oversized and
 * aborted bodies on every route that reads one, case variants of every route, deeply nested and
 * wrongly typed JSON. Every answer must be a 4xx {error, message}, no upload may leave a partial
 * file behind, and the process must keep answering /ping.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeDataDir, removeDataDir, sleep, startServer, stopAll, type RefdeskServer } from '../e2e/refdesk-process.ts';

let dataDir: string;
let server: RefdeskServer;
let member: string;
let admin: string;

interface RawReply {
  status: number | null;
  text: string;
  body: any;
}

/**
 * Sends `head` (+ `body`) on a raw socket and reads the answer until the server closes it.
 * `abortAfter`: the socket is destroyed after sending that many bytes of the body (no answer
 * is awaited then).
 */
function raw(head: string, body: Buffer | string = '', opts: { abortAfter?: number } = {}): Promise<RawReply> {
  return new Promise((resolve) => {
    const socket = connect(server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => finish(), 20_000);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      const payload = text.split('\r\n\r\n').slice(1).join('\r\n\r\n');
      let parsed: unknown;
      try {
        parsed = JSON.parse(payload);
      } catch {
        parsed = undefined;
      }
      resolve({ status: m ? Number(m[1]) : null, text, body: parsed });
    };
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', finish);
    socket.on('error', finish);
    socket.on('connect', () => {
      const b = Buffer.from(body);
      if (opts.abortAfter !== undefined) {
        socket.write(head);
        socket.write(b.subarray(0, opts.abortAfter), () => setTimeout(() => finish(), 100));
        return;
      }
      socket.write(Buffer.concat([Buffer.from(head), b]));
    });
  });
}

/** Request head with Connection: close (so the answer ends with the socket). */
function head(method: string, path: string, headers: Record<string, string | number> = {}): string {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${server.port}`, 'Connection: close'];
  // The operator routes need an admin: the server's local admin token, as the CLI sends it.
  if (path.startsWith('/api/admin') && !Object.keys(headers).some((k) => k.toLowerCase() === 'authorization')) lines.push(`Authorization: ${server.adminAuth.authorization}`);
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return lines.join('\r\n') + '\r\n\r\n';
}

function jsonRequest(method: string, path: string, body: string | Buffer, extra: Record<string, string | number> = {}): Promise<RawReply> {
  return raw(head(method, path, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...extra }), body);
}

async function ping(): Promise<void> {
  const res = await fetch(`${server.base}/ping`, { signal: AbortSignal.timeout(15_000) });
  assert.equal(res.status, 200, 'the server still answers /ping');
  assert.deepEqual(await res.json(), { status: 'ok', message: 'pong' });
}

function uploadsLeft(): string[] {
  const dir = join(dataDir, 'uploads');
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** Waits (up to a bound) until no upload file is left; answers what is left. */
async function settledUploads(): Promise<string[]> {
  for (let i = 0; i < 50 && uploadsLeft().length > 0; i++) await sleep(100);
  return uploadsLeft();
}

function assertClientError(r: RawReply, what: string, status?: number): void {
  if (status === 422) assert.equal(r.body?.error, 'too_large', `${what}: too_large (status ${r.status})\n${r.text.slice(0, 600)}`);
  assert.ok(r.status !== null && r.status >= 400 && r.status < 500, `${what}: expected a 4xx, got ${r.status}\n${r.text.slice(0, 600)}`);
  if (status !== undefined) assert.equal(r.status, status, `${what}: ${r.text.slice(0, 600)}`);
  assert.equal(typeof r.body?.error, 'string', `${what}: an {error, message} body\n${r.text.slice(0, 600)}`);
  assert.equal(typeof r.body?.message, 'string', `${what}: an {error, message} body`);
}

const BOUNDARY = '----refdeskboundary';
const SPEC = JSON.stringify({ openapi: '3.0.0', info: { title: 'T', version: '1' }, paths: { '/a': { get: { summary: 'list a' } } } });

function multipart(parts: string): Buffer {
  return Buffer.from(parts);
}

const filePart = (content: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="openapiFile"; filename="spec.json"\r\nContent-Type: application/json\r\n\r\n${content}`;

/** The JSON routes, each with who may call it. */
const JSON_ROUTES = (): Array<{ method: string; path: string; auth: Record<string, string> }> => [
  ...['repo/github', 'repo/gitlab', 'repo/bitbucket', 'repo/git', 'openapi', 'llmstxt', 'website', 'confluence'].map((r) => ({
    method: 'POST',
    path: `/api/v2/add/${r}`,
    auth: { Authorization: `Bearer ${member}` },
  })),
  { method: 'POST', path: '/api/v1/refresh', auth: { Authorization: `Bearer ${member}` } },
  { method: 'PATCH', path: '/api/v2/policies', auth: { Authorization: `Bearer ${admin}` } },
  { method: 'POST', path: '/api/admin/keys', auth: {} },
  { method: 'POST', path: '/api/admin/rename', auth: {} },
  { method: 'POST', path: '/api/admin/add', auth: {} },
  { method: 'PATCH', path: '/api/admin/settings', auth: {} },
  { method: 'PATCH', path: '/api/settings', auth: { Authorization: `Bearer ${admin}` } },
];

const nested = (depth: number, open: string, close: string, inner = '1') => open.repeat(depth) + inner + close.repeat(depth);

describe('HTTP robustness (real server process)', () => {
  before(async () => {
    dataDir = makeDataDir('refdesk-robust-');
    server = await startServer(dataDir, 60_000, { HOST: '127.0.0.1' });
    const mk = async (role: string) => {
      const r = await jsonRequest('POST', '/api/admin/keys', JSON.stringify({ name: role, role }));
      assert.equal(r.status, 201, r.text);
      return r.body.key as string;
    };
    member = await mk('member');
    admin = await mk('admin');
  });
  after(async () => {
    await stopAll();
    removeDataDir(dataDir);
  });

  test('a multipart upload that ends before its closing boundary is a 400 and leaves no file', async () => {
    const body = multipart(filePart(SPEC.slice(0, 40)));
    const r = await raw(head('POST', '/api/v2/add/openapi-upload', { Authorization: `Bearer ${member}`, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': body.length }), body);
    assertClientError(r, 'truncated multipart', 400);
    assert.match(r.body.message, /multipart/i);
    await ping();
    assert.deepEqual(await settledUploads(), [], 'no partial file in DATA_DIR/uploads');
  });

  test('malformed multipart bodies on the OpenAPI upload are 4xx and leave no file', async () => {
    const auth = { Authorization: `Bearer ${member}` };
    const cases: Array<[string, Record<string, string | number>, Buffer]> = [
      ['no boundary parameter', { 'Content-Type': 'multipart/form-data' }, multipart(filePart(SPEC) + `\r\n--${BOUNDARY}--\r\n`)],
      ['garbage instead of parts', { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` }, Buffer.from('\x00\x01garbage without any boundary')],
      ['empty body', { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` }, Buffer.alloc(0)],
      ['part without headers end', { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` }, multipart(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="openapiFile"`)],
      ['wrong field name', { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` }, multipart(filePart(SPEC).replace('openapiFile', 'other') + `\r\n--${BOUNDARY}--\r\n`)],
      ['wrong field name, truncated', { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` }, multipart(filePart(SPEC).replace('openapiFile', 'other'))],
      ['second file, truncated', { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` }, multipart(filePart(SPEC) + '\r\n' + filePart(SPEC))],
      ['declared far too large', { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': 10 * 1024 * 1024 * 1024 }, Buffer.alloc(0)],
    ];
    for (const [what, headers, body] of cases) {
      const r = await raw(head('POST', '/api/v2/add/openapi-upload', { ...auth, 'Content-Length': body.length, ...headers }), body);
      assertClientError(r, what);
    }
    await ping();
    assert.deepEqual(await settledUploads(), []);
  });

  test('an upload whose connection drops mid-body leaves no file and the server answers on', async () => {
    const spec = Buffer.from(filePart(SPEC + ' '.repeat(200_000)) + `\r\n--${BOUNDARY}--\r\n`);
    await raw(
      head('POST', '/api/v2/add/openapi-upload', { Authorization: `Bearer ${member}`, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': spec.length }),
      spec,
      { abortAfter: 120_000 },
    );
    const tar = Buffer.alloc(300_000, 7);
    await raw(head('POST', '/api/admin/upload?name=dropped', { 'Content-Type': 'application/gzip', 'Content-Length': tar.length }), tar, { abortAfter: 100_000 });
    for (const r of JSON_ROUTES()) {
      const body = Buffer.from(JSON.stringify({ x: 'y'.repeat(50_000) }));
      await raw(head(r.method, r.path, { ...r.auth, 'Content-Type': 'application/json', 'Content-Length': body.length }), body, { abortAfter: 20_000 });
    }
    const mcp = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'p'.repeat(50_000) } }));
    await raw(head('POST', '/mcp', { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': mcp.length }), mcp, { abortAfter: 10_000 });
    await ping();
    assert.deepEqual(await settledUploads(), []);
  });

  test('oversized bodies are a too_large answer on every route that reads one (not a dropped connection)', async () => {
    const big = Buffer.from(JSON.stringify({ pad: 'x'.repeat(1_200_000) }));
    for (const r of JSON_ROUTES()) {
      const reply = await jsonRequest(r.method, r.path, big, r.auth);
      assertClientError(reply, `${r.method} ${r.path} oversized`, 422);
    }
    // Declared too large: refused before any byte of the body is read.
    for (const r of JSON_ROUTES()) {
      const reply = await raw(head(r.method, r.path, { ...r.auth, 'Content-Type': 'application/json', 'Content-Length': 5 * 1024 * 1024 * 1024 }));
      assertClientError(reply, `${r.method} ${r.path} declared oversized`, 422);
    }
    const upload = await raw(head('POST', '/api/admin/upload?name=huge', { 'Content-Type': 'application/gzip', 'Content-Length': 50 * 1024 * 1024 * 1024 }));
    assertClientError(upload, 'admin upload declared oversized', 422);
    const mcpBig = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(5_000_000) } }));
    const mcp = await raw(head('POST', '/mcp', { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': mcpBig.length }), mcpBig);
    assertClientError(mcp, 'mcp oversized', 422);
    await ping();
    assert.deepEqual(await settledUploads(), []);
  });

  test('truncated and malformed JSON, and wrong JSON types, are a 400 that names the problem', async () => {
    const bodies: Array<[string, string]> = [
      ['truncated', '{"docsRepoUrl": "https://github.com/a/b"'],
      ['not JSON', 'docsRepoUrl=https://github.com/a/b'],
      ['NUL bytes', '{"a\u0000": 1}\u0000'],
      ['array', '[1, 2, 3]'],
      ['null', 'null'],
      ['number', '12345678901234567890e400'],
      ['string', '"a string"'],
      ['empty', ''],
      ['lone surrogate', '{"x": "\\ud800"}'],
    ];
    for (const r of JSON_ROUTES()) {
      for (const [what, body] of bodies) {
        const reply = await jsonRequest(r.method, r.path, body, r.auth);
        assertClientError(reply, `${r.method} ${r.path} (${what})`, 400);
      }
    }
    await ping();
  });

  test('fields of the wrong type are a 400 naming the field', async () => {
    const member_ = { Authorization: `Bearer ${member}` };
    const adminH = { Authorization: `Bearer ${admin}` };
    const cases: Array<[string, string, Record<string, string>, unknown, RegExp]> = [
      ['POST', '/api/v2/add/repo/github', member_, { docsRepoUrl: ['https://github.com/a/b'] }, /docsRepoUrl/],
      ['POST', '/api/v2/add/repo/git', member_, { docsRepoUrl: { url: 'x' } }, /docsRepoUrl/],
      ['POST', '/api/v2/add/openapi', member_, { openApiUrl: 12 }, /openApiUrl/],
      ['POST', '/api/v2/add/llmstxt', member_, { llmstxtUrl: null }, /llmstxtUrl/],
      ['POST', '/api/v2/add/website', member_, { websiteUrl: 'https://example.com/' + 'a'.repeat(5000) }, /websiteUrl/],
      ['POST', '/api/v2/add/confluence', member_, { siteUrl: 'https://a.atlassian.net', spaceKey: true }, /spaceKey/],
      ['POST', '/api/v1/refresh', member_, { libraryName: 42 }, /libraryName/],
      ['PATCH', '/api/v2/policies', adminH, { sourceTypes: { enable: 'websites' } }, /sourceTypes\.enable/],
      ['PATCH', '/api/v2/policies', adminH, { libraryFilters: { quality: { minTrustScore: 'high' } } }, /minTrustScore/],
      ['POST', '/api/admin/keys', {}, { name: { a: 1 } }, /name/],
      ['POST', '/api/admin/rename', {}, { from: [], to: '/a/b' }, /from/],
      ['POST', '/api/admin/add', {}, { source: 'git', spec: 'https://github.com/a/b' }, /spec/],
      ['PATCH', '/api/admin/settings', {}, { 'mcp.requireKey': 'yes' }, /mcp\.requireKey/],
      ['PATCH', '/api/settings', adminH, { anonymous: { refresh: 'yes' } }, /anonymous\.refresh/],
      ['POST', '/api/settings/test', adminH, { timeoutMs: 'soon' }, /timeoutMs/],
    ];
    for (const [method, path, auth, json, field] of cases) {
      const reply = await jsonRequest(method, path, JSON.stringify(json), auth);
      assertClientError(reply, `${method} ${path} ${JSON.stringify(json).slice(0, 80)}`, 400);
      assert.match(reply.body.message, field, `${method} ${path}: the message names the field`);
    }
    // Huge numbers of keys: refused by name in a short message, not by a crash or a megabyte of message.
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i])));
    for (const r of JSON_ROUTES()) {
      const reply = await jsonRequest(r.method, r.path, many, r.auth);
      assertClientError(reply, `${r.method} ${r.path} with 50,000 keys`, 400);
      assert.match(reply.body.message, /"k0"/, `${r.method} ${r.path}: names the first unknown field`);
      assert.ok(reply.body.message.length < 2000, `${r.method} ${r.path}: a message of ${reply.body.message.length} characters`);
    }
    await ping();
  });

  test('deeply nested JSON is refused with 400 invalid_request before any handler sees it', async () => {
    const deep = [nested(5000, '{"a":', '}'), nested(20_000, '[', ']'), '{"spec":' + nested(100, '{"a":', '}') + '}', nested(65, '[', ']')];
    for (const r of [...JSON_ROUTES(), { method: 'POST', path: '/mcp', auth: { Accept: 'application/json, text/event-stream' } }]) {
      for (const body of deep) {
        const reply = await jsonRequest(r.method, r.path, body, r.auth);
        assertClientError(reply, `${r.method} ${r.path} nested ${body.slice(0, 12)}… (${body.length} bytes)`, 400);
        assert.equal(reply.body.error, 'invalid_request');
        assert.match(reply.body.message, /nest/i);
      }
    }
    // A body nested within the bound still reaches the handler (which names the real problem).
    const ok = await jsonRequest('PATCH', '/api/v2/policies', '{"libraryFilters":{"quality":{"repoFilters":{"allowedLicenses":{"add":["MIT"]}}}}}', { Authorization: `Bearer ${admin}` });
    assert.equal(ok.status, 200, ok.text);
    await ping();
  });

  test('case variants and near misses of every route answer 404 not_found', async () => {
    const variants = [
      ['GET', '/API/V2/CONTEXT?libraryId=/a/b&query=x'],
      ['GET', '/Api/v2/libs/search?libraryName=a&query=x'],
      ['GET', '/api/V2/libs/search?libraryName=a&query=x'],
      ['GET', '/api/v2/Context?libraryId=/a/b&query=x'],
      ['GET', '/api/v2/LIBS/SEARCH?libraryName=a&query=x'],
      ['GET', '/API/v2/policies'],
      ['PATCH', '/api/v2/Policies'],
      ['POST', '/api/v2/ADD/llmstxt'],
      ['POST', '/api/v2/add/REPO/GITHUB'],
      ['POST', '/api/v2/add/OpenAPI-Upload'],
      ['POST', '/API/V1/REFRESH'],
      ['POST', '/Api/V1/refresh'],
      ['GET', '/API/OPENAPI.JSON'],
      ['GET', '/api/OpenApi.json'],
      ['GET', '/API/ADMIN/LIBRARIES'],
      ['GET', '/api/Admin/keys'],
      ['POST', '/api/admin/Keys'],
      ['PATCH', '/API/admin/settings'],
      ['GET', '/api/admin/JOBS/x'],
      ['POST', '/MCP'],
      ['GET', '/Mcp'],
      ['GET', '/PING'],
      ['GET', '/Ping'],
      ['GET', '/api/v2/context/?libraryId=/a/b&query=x'],
      ['GET', '/api/v2/libs/search/?libraryName=a&query=x'],
      ['GET', '/api/admin/libraries/'],
      ['GET', '/ping/'],
      ['POST', '/mcp/'],
    ];
    for (const [method, path] of variants) {
      const body = method === 'GET' ? '' : '{}';
      const reply = await raw(head(method, path, { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json', 'Content-Length': body.length }), body);
      assertClientError(reply, `${method} ${path}`, 404);
      assert.equal(reply.body.error, 'not_found', `${method} ${path}`);
    }
    await ping();
  });

  test('methods no route takes are a 405 (or 404 on an unknown path), never a 5xx', async () => {
    const cases: Array<[string, string, number]> = [
      ['PROPFIND', '/api/v2/context?libraryId=/a/b&query=x', 405],
      ['PURGE', '/api/v2/libs/search', 405],
      ['DELETE', '/api/v2/context', 405],
      ['PUT', '/api/admin/settings', 405],
      ['MKCOL', '/api/admin/keys', 405],
      ['PROPFIND', '/nowhere', 404],
      ['LOCK', '/api/v9/x', 404],
      ['TRACE', '/mcp', 405],
      ['PUT', '/mcp', 405],
      ['PROPFIND', '/mcp', 405],
    ];
    for (const [method, path, status] of cases) {
      const reply = await raw(head(method, path, { Authorization: `Bearer ${admin}` }));
      assertClientError(reply, `${method} ${path}`, status);
    }
    await ping();
  });

  test('malformed HTTP framing (bad chunk sizes, Data after Connection: close) answers 400 or closes, and nothing reaches stderr but JSON log lines', async () => {
    const framings = [
      `zz\r\n{"a":1}\r\n0\r\n\r\n`,
      `5\r\n{"a":1}XX\r\n0\r\n\r\n`,
      `7\r\n{"a":1}\r\n0\r\n\r\nGET /ping HTTP/1.1\r\n\r\n`,
    ];
    for (const r of [...JSON_ROUTES(), { method: 'POST', path: '/mcp', auth: { Accept: 'application/json, text/event-stream' } }]) {
      for (const body of framings) {
        const reply = await raw(head(r.method, r.path, { ...r.auth, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }), body);
        if (reply.status !== null) assert.ok(reply.status < 500, `${r.method} ${r.path}: ${reply.text.slice(0, 300)}`);
      }
    }
    await ping();
    const stray = server
      .stderr()
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('{'));
    assert.deepEqual(stray.slice(0, 10), [], 'no printout besides the JSON log');
    const failures = server
      .stderr()
      .split('\n')
      .filter((l) => /"level":"error"/.test(l) && /request failed|connection failed|unhandled/.test(l));
    assert.deepEqual(failures, [], 'no request failure logged');
  });
});
