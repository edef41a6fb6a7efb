/**
 * One principal, one bucket (issue 16 item 8): MCP tool calls and REST requests of the same
 * anonymous client (or the same key) count against the same rate limit, and /mcp answers an
 * over-limit tool call as REST does: HTTP 429 with Retry-After and {error: "rate_limit_exceeded"}.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createApiKey } from '../../server/access/api-keys.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { startApiServer, type ApiServer } from './helpers/api-server.ts';
import { makeClient, resultText, writeWidgetryDocs, type ClientKind } from '../helpers/mcp-docs.ts';

const LIMIT = 6;

describe('MCP and REST share one rate-limit bucket per client', () => {
  let s: ApiServer;
  let key: string;

  before(async () => {
    s = await startApiServer({
      withoutTestSources: true,
      config: { rateLimits: { windowSeconds: 3600, anonymous: { requests: LIMIT }, defaultPlan: 'free', plans: { free: { requests: LIMIT } } } },
    });
    const { job } = await addLibrary(s.kernel, { source: 'upload', name: 'widgetry', spec: { path: writeWidgetryDocs(s.scratch) } });
    assert.equal((await runIngestJob(s.kernel, job.id)).state, 'succeeded');
    key = (await createApiKey(s.kernel.store, { name: 'mixed' }, { names: ['free'], defaultPlan: 'free' })).key;
  });
  after(() => s?.close());

  async function connect(kind: ClientKind, headers: Record<string, string> = {}) {
    const c = makeClient(kind);
    await c.connect(new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), { requestInit: { headers } }));
    return c;
  }

  const rest = (headers: Record<string, string> = {}) => fetch(`${s.base}/api/v2/libs/search?libraryName=widgetry&query=theming`, { headers });

  /** Alternates REST and MCP tool calls until the limit; the next of each is refused with 429. */
  async function alternate(kind: ClientKind, headers: Record<string, string>) {
    const mcp = await connect(kind, headers);
    try {
      for (let i = 0; i < LIMIT; i++) {
        if (i % 2 === 0) {
          const r = await rest(headers);
          assert.equal(r.status, 200, `REST request ${i + 1}: ${await r.text()}`);
          assert.equal(r.headers.get('ratelimit-remaining'), String(LIMIT - i - 1));
        } else {
          const r = await mcp.client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'widgetry', query: 'theming' } });
          assert.notEqual(r.isError, true, `MCP call ${i + 1}: ${resultText(r)}`);
        }
      }
      const over = await rest(headers);
      assert.equal(over.status, 429, 'the REST request after the limit, shared with MCP, is refused');
      assert.equal(((await over.json()) as { error: string }).error, 'rate_limit_exceeded');
      await assert.rejects(
        mcp.client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'widgetry', query: 'theming' } }),
        /429|rate limit/i,
        'the MCP tool call after the limit is refused too',
      );
    } finally {
      await mcp.client.close().catch(() => {});
    }
    // The raw answer of /mcp to an over-limit tool call: the REST 429, headers and body.
    const raw = await fetch(`${s.base}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'resolve-library-id', arguments: { libraryName: 'widgetry', query: 'x' } } }),
    });
    assert.equal(raw.status, 429);
    assert.ok(Number(raw.headers.get('retry-after')) >= 1);
    assert.equal(raw.headers.get('ratelimit-limit'), String(LIMIT));
    const body = (await raw.json()) as { error: string; message: string; retryAfterSeconds: number };
    assert.equal(body.error, 'rate_limit_exceeded');
    assert.match(body.message, new RegExp(`may make ${LIMIT} requests per 3600 s`));
  }

  test('an anonymous client alternating REST and MCP hits 429 at the anonymous limit', async () => {
    await alternate('v2 SDK, 2025 era', {});
  });

  test('a key used over REST and MCP (2026-07-28 envelope) hits 429 at its plan limit', async () => {
    await alternate('v2 SDK, 2026-07-28', { authorization: `Bearer ${key}` });
  });

  test('protocol messages (initialize, tools/list) do not count; a tool call counts once', async () => {
    const other = (await createApiKey(s.kernel.store, { name: 'protocol' }, { names: ['free'], defaultPlan: 'free' })).key;
    const headers = { authorization: `Bearer ${other}` };
    const mcp = await connect('v2 SDK, 2025 era', headers);
    try {
      for (let i = 0; i < LIMIT + 2; i++) await mcp.client.listTools();
      await mcp.client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'widgetry', query: 'theming' } });
    } finally {
      await mcp.client.close().catch(() => {});
    }
    const r = await rest(headers);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('ratelimit-remaining'), String(LIMIT - 2));
  });
});
