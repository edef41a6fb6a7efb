/**
 * The pieces of `refdesk mcp` below the MCP layer: HttpBackend against a REST server the test
 * runs on 127.0.0.1 (what it sends, how errors map), the server address rule, and the library
 * listing text.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRefdeskError, type RefdeskError } from '../../core/errors.ts';
import { HttpBackend } from '../../server/mcp/http-backend.ts';
import { parseServerUrl, serverAddress } from '../../server/mcp/server-address.ts';
import { formatLibraryListing, trustLabel } from '../../server/mcp/library-listing.ts';
import { explainError } from '../../server/mcp/tools.ts';
import type { LibrarySummary } from '../../server/mcp/backend.ts';
import { listenOnLoopback } from '../helpers/listen.ts';

const LIB = {
  id: '/docs/widgetry',
  title: 'Widgetry',
  description: 'Widgetry UI widgets',
  branch: 'main',
  lastUpdateDate: '2025-01-01T00:00:00.000Z',
  state: 'finalized',
  totalTokens: 1234,
  totalSnippets: 42,
  stars: 0,
  trustScore: 5,
  benchmarkScore: 61.25,
  versions: ['v2.0.0', 'v1.0.0'],
};

describe('HttpBackend against a REST server', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ url: string; authorization?: string }> = [];
  before(async () => {
    server = createServer((req: IncomingMessage, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(body));
      };
      if (u.pathname === '/api/v2/libs/search') return json(200, { results: [LIB], searchFilterApplied: true });
      if (u.pathname === '/api/v2/context') {
        const id = u.searchParams.get('libraryId');
        if (id === '/docs/widgetry') {
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
          return res.end(`### Dark mode\n\nSource: docs/theming.md (lines 1-2)\n\ntokens=${u.searchParams.get('tokens') ?? '-'} type=${u.searchParams.get('type')}`);
        }
        if (id === '/docs/pending') return json(202, { error: 'library_not_finalized', message: 'Library "/docs/pending" is still being processed.' });
        if (id === '/docs/secret') return json(401, { error: 'invalid_api_key', message: 'Invalid API key.' });
        return json(404, { error: 'library_not_found', message: `Library "${id}" not found.` });
      }
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>nope</h1>');
    });
    base = await listenOnLoopback(server);
  });
  after(() => server.close());

  const backend = () => new HttpBackend({ baseUrl: async () => base, defaultApiKey: 'rdk_default' });

  test('searchLibraries: GET libs/search with the key as a Bearer header, never in the URL', async () => {
    seen.length = 0;
    const r = await backend().searchLibraries({ libraryName: 'widgetry', query: 'dark mode' });
    assert.equal(r.searchFilterApplied, true);
    assert.deepEqual(r.results[0], {
      id: '/docs/widgetry',
      title: 'Widgetry',
      description: 'Widgetry UI widgets',
      state: 'finalized',
      totalSnippets: 42,
      totalTokens: 1234,
      trustScore: 5,
      benchmarkScore: 61.25,
      versions: ['v2.0.0', 'v1.0.0'],
    });
    assert.equal(seen[0].url, '/api/v2/libs/search?libraryName=widgetry&query=dark+mode');
    assert.equal(seen[0].authorization, 'Bearer rdk_default');
  });

  test("getContext: type=txt, tokens passed on, the caller's key wins over the default", async () => {
    seen.length = 0;
    const text = await backend().getContext({ libraryId: '/docs/widgetry', query: 'dark mode', tokens: 1500, apiKey: 'rdk_caller' });
    assert.match(text, /tokens=1500 type=txt/);
    assert.equal(seen[0].authorization, 'Bearer rdk_caller');
    assert.doesNotMatch(seen[0].url, /rdk_/);
    const none = new HttpBackend({ baseUrl: async () => base });
    seen.length = 0;
    await none.getContext({ libraryId: '/docs/widgetry', query: 'x' });
    assert.equal(seen[0].authorization, undefined);
  });

  test('error answers become RefdeskErrors with the server message (202 not-finalized included)', async () => {
    const codeOf = async (libraryId: string) => {
      try {
        await backend().getContext({ libraryId, query: 'x' });
      } catch (e) {
        assert.ok(isRefdeskError(e));
        return [(e as RefdeskError).code, (e as RefdeskError).message];
      }
      assert.fail('no error');
    };
    assert.deepEqual(await codeOf('/docs/pending'), ['library_not_finalized', 'Library "/docs/pending" is still being processed.']);
    assert.deepEqual(await codeOf('/docs/secret'), ['invalid_api_key', 'Invalid API key.']);
    assert.deepEqual(await codeOf('/docs/other'), ['library_not_found', 'Library "/docs/other" not found.']);
  });

  test('a URL that is not a Refdesk server, and a server that is down, say so', async () => {
    const elsewhere = new HttpBackend({ baseUrl: async () => base + '/not-refdesk' });
    await assert.rejects(elsewhere.searchLibraries({ libraryName: 'x', query: 'x' }), /does not look like a Refdesk server \(HTTP 404/);
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const down = new HttpBackend({ baseUrl: async () => `http://127.0.0.1:${port}` });
    await assert.rejects(down.getContext({ libraryId: '/docs/x', query: 'x' }), (e: unknown) => {
      assert.match((e as Error).message, new RegExp(`Cannot reach the Refdesk server at http://127\\.0\\.0\\.1:${port} \\(connection refused\\)`));
      assert.match(explainError(e), /Check that it is running \(refdesk serve\)/);
      return true;
    });
  });
});

describe('the server address rule', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'refdesk-mcp-addr-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('--server wins over REFDESK_URL, which wins over the lock', async () => {
    assert.equal(await serverAddress({ flag: 'http://a.example:1/', env: 'http://b.example', dataDir: dir }).resolve(), 'http://a.example:1');
    assert.equal(await serverAddress({ env: 'https://b.example/refdesk/', dataDir: dir }).resolve(), 'https://b.example/refdesk');
  });

  test('the running server of DATA_DIR is found through its lock, on every call', async () => {
    const addr = serverAddress({ env: '', dataDir: dir });
    await assert.rejects(addr.resolve(), /No Refdesk server is running on the data directory/);
    writeFileSync(join(dir, 'refdesk.lock'), JSON.stringify({ pid: process.pid, mode: 'server', port: 45678, startedAt: new Date().toISOString() }));
    assert.equal(await addr.resolve(), 'http://127.0.0.1:45678');
    writeFileSync(join(dir, 'refdesk.lock'), JSON.stringify({ pid: process.pid, mode: 'writer', startedAt: new Date().toISOString() }));
    await assert.rejects(addr.resolve(), /No Refdesk server is running/);
  });

  test('bad URLs are refused with what to give instead', () => {
    assert.throws(() => parseServerUrl('not a url', '--server'), /--server must be the URL of a Refdesk server/);
    assert.throws(() => parseServerUrl('ftp://x', 'REFDESK_URL'), /REFDESK_URL must be an http:\/\/ or https:\/\/ URL/);
    assert.throws(() => parseServerUrl('http://me:rdk_secret@x', '--server'), (e: Error) => /must not contain a user name or password/.test(e.message) && !e.message.includes('rdk_secret'));
    assert.throws(() => parseServerUrl('http://x/?key=1', '--server'), /must not have a query string/);
  });
});

describe('the library listing', () => {
  const lib = (over: Partial<LibrarySummary>): LibrarySummary => ({ ...LIB, ...over });

  test('trust labels', () => {
    assert.deepEqual([9.5, 7, 6.9, 4, 3.9, 0.1, 0].map(trustLabel), ['High', 'High', 'Medium', 'Medium', 'Low', 'Low', null]);
  });

  test('every field, best first, and the policy note when results were filtered', () => {
    const text = formatLibraryListing('widgetry', { results: [lib({}), lib({ id: '/docs/widgetry-old', title: 'Widgetry (old)', state: 'processing', benchmarkScore: 0, versions: [], trustScore: 0 })], searchFilterApplied: true });
    const [head, first, second] = text.split('\n\n----------\n\n');
    assert.match(head, /access policy of this Refdesk server hid some libraries/);
    assert.equal(
      first,
      [
        '- Title: Widgetry',
        '- Library ID: /docs/widgetry',
        '- Description: Widgetry UI widgets',
        '- Code snippets: 42',
        '- Trust: Medium',
        '- Benchmark score: 61.3',
        '- Versions: v2.0.0, v1.0.0 (pin one as /docs/widgetry@<version>; without a version you get the default branch)',
      ].join('\n'),
    );
    assert.match(second, /- Trust: Not rated/);
    assert.doesNotMatch(second, /Benchmark|Versions/);
    assert.match(second, /- State: processing \(still being indexed/);
    assert.doesNotMatch(formatLibraryListing('w', { results: [lib({})], searchFilterApplied: false }), /access policy/);
    assert.match(formatLibraryListing('w', { results: [], searchFilterApplied: true }), /No library on this Refdesk server matches "w".*access policy/s);
  });
});
