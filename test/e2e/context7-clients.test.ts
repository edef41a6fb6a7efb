/**
 * The official Context7 clients from the npm registry, unmodified, against a Refdesk server on
 * 127.0.0.1:
 * - @upstash/context7-sdk: version 0.3.1 has no base-URL option (it always calls
 *   https://context7.com/api), so this process routes that origin to Refdesk with an undici
 *   dispatcher, the way a hosts-file entry would; the SDK's code and its requests are unchanged.
 * - @upstash/context7-mcp: started as its own process over stdio with CONTEXT7_API_URL set to
 *   Refdesk's /api, driven by the MCP SDK client (resolve-library-id and query-docs).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Agent, Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { Context7 } from '@upstash/context7-sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { adminAuth, createKey, indexUpload, startApiServer, writeDocs, type ApiServer } from '../server/helpers/api-server.ts';

let s: ApiServer;
let key: string;

/** Sends requests for one origin to another (like a hosts-file entry); everything else passes. */
class OriginRedirect extends Dispatcher {
  constructor(
    private readonly inner: Dispatcher,
    private readonly from: string,
    private readonly to: string,
  ) {
    super();
  }
  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandlers): boolean {
    const origin = String(opts.origin ?? '');
    return this.inner.dispatch(origin === this.from ? { ...opts, origin: this.to } : opts, handler);
  }
  override close(): Promise<void> {
    return this.inner.close();
  }
  override destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

function mcpBin(): string {
  const pkg = createRequire(import.meta.url).resolve('@upstash/context7-mcp/package.json');
  return join(dirname(pkg), 'dist', 'index.js');
}

describe('the official Context7 clients work against Refdesk', () => {
  before(async () => {
    s = await startApiServer();
    const docs = writeDocs(s.scratch, 'tiny-router', {
      'guide.md':
        '# Tiny Router\n\n## Defining routes\n\nDeclare a route with `router.get(path, handler)`.\n\n```js\nconst router = createRouter();\nrouter.get("/users/:id", (ctx) => ctx.params.id);\n```\n\n## Middleware\n\nRun code before every route with `router.use(fn)`.\n',
    });
    await indexUpload(s.kernel, 'tiny-router', docs, { title: 'Tiny Router', description: 'A tiny HTTP router' });
    key = await createKey(s.base, { name: 'clients' });
  });
  after(() => s?.close());

  test('@upstash/context7-sdk: searchLibrary and getContext (json and txt) return Refdesk libraries and snippets', async () => {
    const previous = getGlobalDispatcher();
    setGlobalDispatcher(new OriginRedirect(new Agent(), 'https://context7.com', s.base));
    const warn = console.warn;
    console.warn = () => {}; // the SDK warns that the key does not start with its own prefix
    try {
      const client = new Context7({ apiKey: key });
      const libs = await client.searchLibrary('how do I declare a route', 'tiny router');
      assert.equal(libs[0].id, '/docs/tiny-router');
      assert.equal(libs[0].name, 'Tiny Router');
      assert.ok(libs[0].totalSnippets > 0);
      const text = await client.searchLibrary('routes', 'tiny router', { type: 'txt' });
      assert.match(text as string, /Context7-compatible library ID: \/docs\/tiny-router/);
      const docs = await client.getContext('how do I declare a route with a parameter', '/docs/tiny-router');
      assert.ok(Array.isArray(docs) && docs.length > 0);
      assert.ok(docs.some((d) => d.content.includes('router.get("/users/:id"')), JSON.stringify(docs).slice(0, 500));
      const txt = await client.getContext('middleware before every route', '/docs/tiny-router', { type: 'txt' });
      assert.match(txt as string, /router\.use\(fn\)/);
      await assert.rejects(client.getContext('x', '/docs/missing-lib'), /library_not_found/);
      const bad = new Context7({ apiKey: 'rdk_' + 'B'.repeat(43) });
      await assert.rejects(bad.searchLibrary('x', 'tiny'), /invalid_api_key/);
    } finally {
      console.warn = warn;
      setGlobalDispatcher(previous);
    }
  });

  test('@upstash/context7-mcp over stdio: resolve-library-id and query-docs answer from Refdesk', async () => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', CONTEXT7_API_URL: `${s.base}/api`, OTEL_SDK_DISABLED: 'true' };
    const transport = new StdioClientTransport({ command: process.execPath, args: [mcpBin()], env, stderr: 'pipe' });
    const client = new Client({ name: 'refdesk-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(tools.includes('resolve-library-id') && tools.includes('query-docs'), tools.join(', '));
      const resolved = await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'Tiny Router', query: 'declare a route' } });
      const resolvedText = (resolved.content as Array<{ type: string; text: string }>)[0].text;
      assert.match(resolvedText, /Context7-compatible library ID: \/docs\/tiny-router/);
      assert.match(resolvedText, /Title: Tiny Router/);
      const docs = await client.callTool({ name: 'query-docs', arguments: { libraryId: '/docs/tiny-router', query: 'how do I run middleware before every route' } });
      const docsText = (docs.content as Array<{ type: string; text: string }>)[0].text;
      assert.match(docsText, /router\.use\(fn\)/);
      assert.match(docsText, /Source: guide\.md/);
      const missing = await client.callTool({ name: 'query-docs', arguments: { libraryId: '/docs/nothing', query: 'x' } });
      assert.match((missing.content as Array<{ text: string }>)[0].text, /"\/docs\/nothing" not found/);
    } finally {
      await client.close();
    }
  });

  test('@upstash/context7-mcp with CONTEXT7_API_KEY: the key is sent and checked', async () => {
    const revoke = await createKey(s.base, { name: 'to-revoke' });
    const list = await fetch(`${s.base}/api/admin/keys`, { headers: adminAuth }).then((r) => r.json() as Promise<{ keys: Array<{ id: string; prefix: string }> }>);
    const rec = list.keys.find((k) => revoke.startsWith(k.prefix))!;
    await fetch(`${s.base}/api/admin/keys/${rec.id}`, { method: 'DELETE', headers: adminAuth });
    for (const [apiKey, expect] of [
      [key, /Context7-compatible library ID: \/docs\/tiny-router/],
      [revoke, /revoked/],
    ] as const) {
      const env: Record<string, string> = { PATH: process.env.PATH ?? '', CONTEXT7_API_URL: `${s.base}/api`, CONTEXT7_API_KEY: apiKey, OTEL_SDK_DISABLED: 'true' };
      const client = new Client({ name: 'refdesk-test', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [mcpBin()], env, stderr: 'pipe' }));
      try {
        const r = await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'tiny router', query: 'routes' } });
        assert.match((r.content as Array<{ text: string }>)[0].text, expect);
      } finally {
        await client.close();
      }
    }
  });
});
