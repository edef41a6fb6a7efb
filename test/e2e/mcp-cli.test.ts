/**
 * `refdesk mcp` end to end: a real Refdesk server process with the Widgetry docs added through
 * its upload flow, and the MCP command as a child process driven by the SDKs' own clients:
 * over stdio in both protocol eras, over its own HTTP endpoint, with the server found through
 * the data directory's lock, --server or REFDESK_URL, and with no server at all.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BIN, ROOT, cliEnv, httpGet, makeDataDir, removeDataDir, runRefdesk, spawnRefdesk, startServer, stopAll, stopProcess, withTimeout, type RefdeskServer } from './refdesk-process.ts';
import { CLIENT_KINDS, makeClient, resultText, writeWidgetryDocs, type ClientKind, type McpTestClient } from '../helpers/mcp-docs.ts';
import { toolBehaviourTests } from '../helpers/mcp-tool-checks.ts';
import { listenOnLoopback } from '../helpers/listen.ts';

/** The environment of an MCP child: DATA_DIR and any extra variables, no undefined values. */
function childEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env = cliEnv(dataDir, extra);
  delete env.REFDESK_URL;
  delete env.REFDESK_API_KEY;
  return Object.fromEntries(Object.entries({ ...env, ...extra }).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

interface StdioSession {
  client: McpTestClient;
  protocolVersion(): string | undefined;
  stderr(): string;
}

const open: McpTestClient[] = [];

async function stdioClient(kind: ClientKind, dataDir: string, args: string[] = [], extraEnv: Record<string, string> = {}): Promise<StdioSession> {
  const params = { command: process.execPath, args: [BIN, 'mcp', '--transport', 'stdio', ...args], env: childEnv(dataDir, extraEnv), cwd: ROOT, stderr: 'pipe' as const };
  const transport = kind === 'v1 SDK (2025 era)' ? new StdioClientTransportV1(params) : new StdioClientTransport(params);
  let err = '';
  const c = makeClient(kind);
  const connecting = c.connect(transport);
  transport.stderr?.on('data', (b: Buffer) => (err += b.toString('utf8')));
  await withTimeout(connecting, 60_000, () => `connecting ${kind} over stdio timed out; stderr: ${err}`);
  open.push(c.client);
  return { client: c.client, protocolVersion: c.protocolVersion, stderr: () => err };
}

describe('refdesk mcp against a running Refdesk server', { timeout: 300_000 }, () => {
  let dir: string;
  let docsDir: string;
  let emptyDir: string;
  let server: RefdeskServer;

  before(async () => {
    dir = makeDataDir('refdesk-mcp-e2e-');
    docsDir = makeDataDir('refdesk-mcp-docs-');
    emptyDir = makeDataDir('refdesk-mcp-empty-');
    server = await startServer(dir);
    // The server holds the data directory: `add` sends the docs to its upload API.
    const added = await runRefdesk(['add', writeWidgetryDocs(docsDir), '--name', 'widgetry', '--title', 'Widgetry', '--description', 'Widgetry UI widgets'], dir, 120_000);
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stderr, /sending the documents to it/);
  });

  after(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => {})));
    await stopAll();
    for (const d of [dir, docsDir, emptyDir]) removeDataDir(d);
  });

  for (const kind of CLIENT_KINDS) {
    describe(`${kind} client over stdio (server found through DATA_DIR's lock)`, () => {
      let s: StdioSession;
      before(async () => {
        s = await stdioClient(kind, dir);
      });

      test('negotiates its protocol era and logs to stderr', async () => {
        const v = s.protocolVersion();
        if (kind === 'v2 SDK, 2026-07-28') assert.equal(v, '2026-07-28');
        else if (kind === 'v2 SDK, 2025 era') assert.equal(v, '2025-11-25');
        // A pinned client probes on a sibling process, so the session's own process may still be starting.
        await s.client.listTools();
        assert.match(s.stderr(), /Refdesk MCP server on stdio, answering from the Refdesk server running on/);
      });

      toolBehaviourTests(() => s.client, { trust: /^- Trust: (Low|Medium|High)$/m });
    });
  }

  test('--server URL and REFDESK_URL name the server (the data directory has none)', async () => {
    for (const [args, env] of [
      [['--server', server.base], {}],
      [[], { REFDESK_URL: server.base + '/' }],
    ] as Array<[string[], Record<string, string>]>) {
      const s = await stdioClient('v2 SDK, 2025 era', emptyDir, args, env);
      const r = await s.client.callTool({ name: 'query-docs', arguments: { libraryId: '/docs/widgetry', query: 'dark mode' } });
      assert.notEqual(r.isError, true, resultText(r));
      assert.match(resultText(r), /docs\/theming\.md/);
      assert.match(s.stderr(), new RegExp(`answering from ${server.base.replace(/[.]/g, '\\.')}`));
      assert.doesNotMatch(s.stderr(), /rdk_example/);
      await s.client.close();
    }
  });

  test('with no server to talk to, tools answer with a tool error that says how to fix it', async () => {
    const s = await stdioClient('v2 SDK, 2026-07-28', emptyDir);
    const r = await s.client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'widgetry', query: 'x' } });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /No Refdesk server is running on the data directory .*Start one \(refdesk serve.*--server URL or REFDESK_URL/);
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(port));
      });
    });
    const down = await stdioClient('v1 SDK (2025 era)', emptyDir, ['--server', `http://127.0.0.1:${closedPort}`]);
    const r2 = await down.client.callTool({ name: 'query-docs', arguments: { libraryId: '/docs/widgetry', query: 'x' } });
    assert.equal(r2.isError, true);
    assert.match(resultText(r2), new RegExp(`Cannot reach the Refdesk server at http://127\\.0\\.0\\.1:${closedPort} \\(connection refused\\)`));
    await s.client.close();
    await down.client.close();
  });

  test('stdout carries only JSON-RPC, and the process exits when the client closes stdin', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', '--transport', 'stdio'], { cwd: ROOT, env: childEnv(dir), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const gotLine = new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        out += c;
        if (out.includes('\n')) resolve();
      });
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stderr.resume();
    child.stdin.write(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n',
    );
    try {
      await withTimeout(gotLine, 60_000, () => `no answer on stdout: ${out}`);
      child.stdin.end();
      assert.equal(await withTimeout(exited, 20_000, () => 'did not exit after stdin closed'), 0);
    } finally {
      await stopProcess(child);
    }
    const lines = out.split('\n').filter(Boolean);
    assert.ok(lines.length >= 1);
    for (const l of lines) assert.equal(JSON.parse(l).jsonrpc, '2.0', `not JSON-RPC on stdout: ${l}`);
    const init = JSON.parse(lines[0]);
    assert.equal(init.id, 1);
    assert.equal(init.result.serverInfo.name, 'refdesk');
    assert.match(init.result.instructions, /resolve-library-id/);
  });

  test('--transport http serves MCP alone, with /ping, for both eras', async () => {
    const p = spawnRefdesk(['mcp', '--transport', 'http', '--port', '0'], dir);
    try {
      const m = await p.waitFor('stdout', /Refdesk MCP listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/, 60_000);
      const base = `http://127.0.0.1:${m[1]}`;
      assert.deepEqual((await httpGet(base + '/ping')).body, { status: 'ok', message: 'pong' });
      for (const kind of ['v2 SDK, 2026-07-28', 'v1 SDK (2025 era)'] as const) {
        const c = makeClient(kind);
        const url = new URL(base + '/mcp');
        await c.connect(kind === 'v1 SDK (2025 era)' ? new StreamableHTTPClientTransportV1(url) : new StreamableHTTPClientTransport(url));
        const r = await c.client.callTool({ name: 'get-library-docs', arguments: { context7CompatibleLibraryID: '/docs/widgetry', topic: 'WidgetError' } });
        await c.client.close();
        assert.notEqual(r.isError, true, resultText(r));
        assert.match(resultText(r), /E_NO_ROOT/, kind);
      }
    } finally {
      await stopProcess(p.child);
    }
  });

  test('bad options exit 1 with a message', async () => {
    const r = await runRefdesk(['mcp', '--transport', 'pigeon'], dir);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--transport must be stdio or http/);
    const r2 = await runRefdesk(['mcp', '--server', 'ftp://example.com'], dir);
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /--server must be an http:\/\/ or https:\/\/ URL/);
  });
});


describe('refdesk mcp passes the API key on and shows policy notes', { timeout: 120_000 }, () => {
  let rest: import('node:http').Server;
  let base: string;
  let dir: string;
  const authorizations: Array<string | undefined> = [];
  before(async () => {
    dir = makeDataDir('refdesk-mcp-key-');
    // A REST server standing in for a Refdesk server that applies a policy.
    rest = createServer((req, res) => {
      authorizations.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: [], searchFilterApplied: true }));
    });
    base = await listenOnLoopback(rest);
  });
  after(async () => {
    await stopAll();
    rest.close();
    removeDataDir(dir);
  });

  test('REFDESK_API_KEY and --api-key reach the server as a Bearer token', async () => {
    for (const [args, env, expected] of [
      [['--server', base], { REFDESK_API_KEY: 'rdk_from_env' }, 'Bearer rdk_from_env'],
      [['--server', base, '--api-key', 'rdk_from_flag'], {}, 'Bearer rdk_from_flag'],
    ] as Array<[string[], Record<string, string>, string]>) {
      authorizations.length = 0;
      const s = await stdioClient('v2 SDK, 2025 era', dir, args, env);
      const r = await s.client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'widgetry', query: 'x' } });
      await s.client.close();
      assert.notEqual(r.isError, true, resultText(r));
      assert.match(resultText(r), /access policy of this Refdesk server hid some libraries/);
      assert.deepEqual(authorizations, [expected]);
      assert.doesNotMatch(s.stderr(), /rdk_from/);
    }
  });
});
