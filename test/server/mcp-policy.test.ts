/**
 * /mcp on the Refdesk server runs over the REST API's service layer: the teamspace policy hides
 * libraries from resolve-library-id (with the note) and refuses them in query-docs, as the REST
 * endpoints do.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { defaultPolicy, setPolicy } from '../../server/access/policy.ts';
import { createApp } from '../../server/app.ts';
import { makeClient, resultText, writeWidgetryDocs } from '../helpers/mcp-docs.ts';
import { listenOnLoopback } from '../helpers/listen.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let kernel: Kernel;
let server: Server;
let base: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'refdesk-mcp-policy-'));
  kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), { env: { dataDir: dir, mode: 'server', port: 0 }, logger: createConsoleLogger('error', () => {}) });
  await kernel.open();
  const docs = writeWidgetryDocs(dir);
  for (const name of ['widgetry', 'widgetry-legacy']) {
    const { job } = await addLibrary(kernel, { source: 'upload', name, title: name, description: 'Widgetry UI widgets', spec: { path: docs } });
    assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
  }
  server = createServer(createApp(kernel).app.callback());
  base = await listenOnLoopback(server);
});

after(async () => {
  server?.close();
  await kernel?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a policy that selects libraries filters resolve-library-id (with the note) and refuses query-docs', async () => {
  const c = makeClient('v2 SDK, 2025 era');
  await c.connect(new StreamableHTTPClientTransport(new URL(base + '/mcp')));
  const open = resultText(await c.client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'widgetry', query: 'widgets' } }));
  assert.match(open, /\/docs\/widgetry-legacy/);
  assert.doesNotMatch(open, /access policy/);

  const policy = defaultPolicy();
  policy.libraryFilters.mode = 'select';
  policy.libraryFilters.select.allowedLibraries = ['/docs/widgetry'];
  await setPolicy(kernel.store, policy);

  const filtered = resultText(await c.client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'widgetry', query: 'widgets' } }));
  assert.match(filtered, /\/docs\/widgetry\b/);
  assert.doesNotMatch(filtered, /\/docs\/widgetry-legacy/);
  assert.match(filtered, /access policy of this Refdesk server hid some libraries/);

  const refused = await c.client.callTool({ name: 'query-docs', arguments: { libraryId: '/docs/widgetry-legacy', query: 'widgets' } });
  assert.equal(refused.isError, true);
  assert.match(resultText(refused), /Access denied/);
  const allowed = await c.client.callTool({ name: 'query-docs', arguments: { libraryId: '/docs/widgetry', query: 'widgets' } });
  assert.notEqual(allowed.isError, true);
  await c.client.close();
});
