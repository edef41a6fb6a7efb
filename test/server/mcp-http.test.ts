/**
 * /mcp on the Refdesk server (the Koa app on 127.0.0.1), driven by the MCP SDKs' own clients over
 * Streamable HTTP in both protocol eras: the tools, the key requirement, and the Host/Origin
 * checks against DNS rebinding.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { rawMcpRequest } from '../helpers/mcp-raw.ts';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { createApp, type AppOptions } from '../../server/app.ts';
import { mcpEndpoint } from '../../server/mcp/http-endpoint.ts';
import { ServiceBackend } from '../../server/mcp/service-backend.ts';
import { parseAllowedHosts } from '../../server/allowed-hosts.ts';
import type { ContextTextRequest, LibrarySearchRequest } from '../../server/mcp/backend.ts';
import { CLIENT_KINDS, makeClient, resultText, writeWidgetryDocs, type ClientKind, type McpTestClient } from '../helpers/mcp-docs.ts';
import { toolBehaviourTests } from '../helpers/mcp-tool-checks.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let kernel: Kernel;
const servers: Server[] = [];

async function listen(app: Koa, host = '127.0.0.1'): Promise<string> {
  const server = createServer(app.callback());
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, host, r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function serveApp(options: AppOptions): Promise<string> {
  return listen(createApp(kernel, options).app);
}

async function connect(kind: ClientKind, url: string, headers: Record<string, string> = {}) {
  const c = makeClient(kind);
  const u = new URL(url + '/mcp');
  const transport =
    kind === 'v1 SDK (2025 era)' ? new StreamableHTTPClientTransportV1(u, { requestInit: { headers } }) : new StreamableHTTPClientTransport(u, { requestInit: { headers } });
  await c.connect(transport);
  return c;
}

/** A raw POST of an initialize request with chosen headers (Host included), by node:http. */
const rawPost = rawMcpRequest;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'refdesk-mcp-http-'));
  kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), {
    env: { dataDir: dir, mode: 'server', port: 0 },
    logger: createConsoleLogger('error', () => {}),
  });
  await kernel.open();
  // Every tools/call counts against the caller's rate limit (as a REST request does), and the tool
  // behaviour tests below make more calls from 127.0.0.1 than the default 60 per minute.
  kernel.config.rateLimits.anonymous.requests = 10_000;
  const docs = writeWidgetryDocs(dir);
  const { job } = await addLibrary(kernel, { source: 'upload', name: 'widgetry', title: 'Widgetry', description: 'Widgetry UI widgets', spec: { path: docs } });
  const done = await runIngestJob(kernel, job.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  const lib = (await kernel.store.getLibrary('/docs/widgetry'))!;
  await kernel.store.upsertLibrary({ id: lib.id, title: lib.title, description: lib.description, branch: lib.branch, source: lib.source, stars: 0, trustScore: 8.5, benchmarkScore: 72 });
  // Queued, never run: not finalized.
  await addLibrary(kernel, { source: 'upload', name: 'pending', spec: { path: docs } });
});

after(async () => {
  for (const s of servers) s.close();
  await kernel?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the Refdesk server: /ping and /mcp', () => {
  let base: string;
  before(async () => {
    base = await serveApp({ mcp: { bindHost: '127.0.0.1' } });
  });

  test('GET /ping answers exactly {"status":"ok","message":"pong"}', async () => {
    const res = await fetch(base + '/ping');
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '{"status":"ok","message":"pong"}');
  });

  for (const kind of CLIENT_KINDS) {
    describe(`${kind} client over Streamable HTTP`, () => {
      let c: Awaited<ReturnType<typeof connect>>;
      let client: McpTestClient;
      before(async () => {
        c = await connect(kind, base);
        client = c.client;
      });
      after(() => client?.close());

      test('negotiates its protocol era', () => {
        const v = c.protocolVersion();
        if (kind === 'v2 SDK, 2026-07-28') assert.equal(v, '2026-07-28');
        else if (kind === 'v2 SDK, 2025 era') assert.equal(v, '2025-11-25');
        else assert.equal(v, '2025 era');
      });

      toolBehaviourTests(() => client, { trust: /^- Trust: High$/m });

      test('resolve-library-id shows the benchmark score; a library still indexing is a tool error', async () => {
        const listing = resultText(await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'widgetry', query: 'dark mode' } }));
        assert.match(listing, /^- Benchmark score: 72$/m);
        const r = await client.callTool({ name: 'query-docs', arguments: { libraryId: '/docs/pending', query: 'dark mode' } });
        assert.equal(r.isError, true);
        assert.match(resultText(r), /still being processed/);
      });
    });
  }

  test('GET /mcp without a session is answered by the MCP handler (405 in stateless serving), not 404', async () => {
    const r = await rawPost(base, {}, 'GET');
    assert.equal(r.status, 405);
  });
});

describe('API keys on /mcp', () => {
  const seen: Array<string | undefined> = [];
  let required = true;
  let base: string;
  before(async () => {
    const inner = new ServiceBackend(createApp(kernel).service);
    // Records the key each call reaches the backend with.
    const recording = {
      searchLibraries: (req: LibrarySearchRequest) => (seen.push(req.apiKey), inner.searchLibraries({ ...req, apiKey: undefined })),
      getContext: (req: ContextTextRequest) => (seen.push(req.apiKey), inner.getContext({ ...req, apiKey: undefined })),
    };
    const app = new Koa();
    app.use(mcpEndpoint(recording, { bindHost: '127.0.0.1', auth: { requireKey: () => required, verifyKey: async (k) => k === 'rdk_good' } }));
    base = await listen(app);
  });

  test('without a key when one is required: 401 with a clear message', async () => {
    const r = await rawPost(base, {});
    assert.equal(r.status, 401);
    assert.equal(r.body.error, 'invalid_api_key');
    assert.match(r.body.message, /requires an API key for MCP.*REFDESK_API_KEY header or as Authorization: Bearer/);
    await assert.rejects(() => connect('v2 SDK, 2025 era', base));
  });

  test('a wrong key: 401 that does not echo the key', async () => {
    const r = await rawPost(base, { authorization: 'Bearer rdk_wrong_secret' });
    assert.equal(r.status, 401);
    assert.match(r.body.message, /API key is not valid/);
    assert.doesNotMatch(r.text, /rdk_wrong_secret/);
  });

  test('the key in the REFDESK_API_KEY header or as a Bearer token is accepted and reaches the backend', async () => {
    for (const [kind, headers] of [
      ['v2 SDK, 2026-07-28', { REFDESK_API_KEY: 'rdk_good' }],
      ['v1 SDK (2025 era)', { Authorization: 'Bearer rdk_good' }],
    ] as const) {
      seen.length = 0;
      const c = await connect(kind, base, headers);
      const r = await c.client.callTool({ name: 'query-docs', arguments: { libraryId: '/docs/widgetry', query: 'dark mode' } });
      await c.client.close();
      assert.notEqual(r.isError, true, resultText(r));
      assert.match(resultText(r), /theming/);
      assert.deepEqual(seen, ['rdk_good'], kind);
    }
  });

  test('the hyphenated Refdesk-Api-Key header, for proxies that drop underscores, is accepted too', async () => {
    assert.equal((await rawPost(base, { 'refdesk-api-key': 'rdk_good' })).status, 200);
    assert.equal((await rawPost(base, { 'refdesk-api-key': 'rdk_bad' })).status, 401);
  });

  test('when the operator does not require a key, /mcp is public', async () => {
    required = false;
    try {
      seen.length = 0;
      const c = await connect('v2 SDK, 2025 era', base);
      const r = await c.client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'widgetry', query: 'x' } });
      await c.client.close();
      assert.match(resultText(r), /\/docs\/widgetry/);
      assert.deepEqual(seen, [undefined]);
    } finally {
      required = true;
    }
  });
});

describe('DNS rebinding protection', () => {
  test('bound to 127.0.0.1: a foreign Host or Origin is refused with 403', async () => {
    const base = await serveApp({ mcp: { bindHost: '127.0.0.1' } });
    const port = new URL(base).port;
    const evilHost = await rawPost(base, { host: `evil.example:${port}` });
    assert.equal(evilHost.status, 403);
    assert.equal(evilHost.body.error, 'forbidden');
    assert.match(evilHost.body.message, /Host is localhost, 127\.0\.0\.1 or \[::1\]/);
    const evilOrigin = await rawPost(base, { origin: 'http://evil.example' });
    assert.equal(evilOrigin.status, 403);
    assert.match(evilOrigin.body.message, /Origin/);
    assert.equal((await rawPost(base, { origin: 'null' })).status, 403);
    // Local names and origins pass.
    const local: Array<Record<string, string>> = [{ host: `localhost:${port}` }, { host: `[::1]:${port}` }, { origin: `http://localhost:5173` }, {}];
    for (const headers of local) {
      const r = await rawPost(base, headers);
      assert.equal(r.status, 200, `${JSON.stringify(headers)}: ${r.text}`);
    }
  });

  test('bound to all interfaces (0.0.0.0): any Host is served', async () => {
    const base = await serveApp({ mcp: { bindHost: '0.0.0.0' } });
    const r = await rawPost(base, { host: 'docs.example.com' });
    assert.equal(r.status, 200, r.text);
  });

  test('bound to all interfaces: the Origin is checked all the same (forbidden_origin), loopback origins pass', async () => {
    const base = await serveApp({ mcp: { bindHost: '0.0.0.0' } });
    for (const origin of ['http://evil.example', 'https://docs.example.com', 'null', 'file://']) {
      const r = await rawPost(base, { host: 'docs.example.com', origin });
      assert.equal(r.status, 403, `${origin}: ${r.text}`);
      assert.equal(r.body.error, 'forbidden_origin');
      assert.match(r.body.message, /allowed hosts/);
    }
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]']) {
      assert.equal((await rawPost(base, { origin })).status, 200, origin);
    }
    // No Origin: not a browser, served.
    assert.equal((await rawPost(base, { host: 'docs.example.com' })).status, 200);
  });

  test('allowed hosts (AppOptions from ALLOWED_HOSTS, and server.allowedHosts): named origins pass, ports are matched when given', async () => {
    kernel.config.server.allowedHosts = ['wiki.example.org'];
    try {
      const base = await serveApp({ mcp: { bindHost: '0.0.0.0' }, allowedHosts: parseAllowedHosts('docs.example.com, tools.example.com:8443', 'ALLOWED_HOSTS') });
      const status = async (origin: string, host = 'docs.example.com') => (await rawPost(base, { host, origin })).status;
      assert.equal(await status('https://docs.example.com'), 200);
      assert.equal(await status('http://DOCS.example.com:8080'), 200, 'no port in the entry: any port');
      assert.equal(await status('https://tools.example.com:8443'), 200);
      assert.equal(await status('https://tools.example.com'), 403, 'the entry names port 8443');
      assert.equal(await status('https://wiki.example.org'), 200, 'server.allowedHosts from the config');
      assert.equal(await status('https://evil.example'), 403);
      assert.equal(await status('https://docs.example.com.evil.example'), 403);
    } finally {
      kernel.config.server.allowedHosts = [];
    }
  });

  test('bound to 127.0.0.1 with an allowed host: its Host and Origin pass, others are still refused', async () => {
    const base = await serveApp({ mcp: { bindHost: '127.0.0.1' }, allowedHosts: parseAllowedHosts('refdesk.internal', 'ALLOWED_HOSTS') });
    assert.equal((await rawPost(base, { host: 'refdesk.internal', origin: 'http://refdesk.internal' })).status, 200);
    const evil = await rawPost(base, { host: 'evil.example' });
    assert.equal(evil.status, 403);
    assert.equal(evil.body.error, 'forbidden');
    const evilOrigin = await rawPost(base, { origin: 'http://evil.example' });
    assert.equal(evilOrigin.status, 403);
    assert.equal(evilOrigin.body.error, 'forbidden_origin');
  });
});
