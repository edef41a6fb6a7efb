/**
 * A real Refdesk HTTP server on 127.0.0.1 for the API tests: a kernel over a temporary data
 * directory and a config with the default store and chunker, the upload source, the test
 * sources of test/fixtures/api-plugins, and whatever the test adds.
 */
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel, type Kernel } from '../../../core/kernel.ts';
import type { Clock } from '../../../core/contracts.ts';
import { createConsoleLogger } from '../../../core/services.ts';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { createApp, type AppOptions, type RefdeskApp } from '../../../server/app.ts';
import type { Logger } from '../../../core/contracts.ts';
import { listenOnLoopback } from '../../helpers/listen.ts';
import { testLicence, type TestLicenceOptions } from '../../helpers/licence.ts';

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export interface ApiServerOptions {
  /** Extra top-level config sections (rateLimits, api, slots...). */
  config?: Record<string, unknown>;
  /** Leave the test sources out (only upload is enabled). */
  withoutTestSources?: boolean;
  /** Add the misbehaving rerankers plugin. */
  withTestRerankers?: boolean;
  /** The licence the server runs with (a key of the test issuer): one valid for a year unless given. */
  licence?: TestLicenceOptions;
  /** More createApp options (session expiry, sign-in delays, allowed hosts, settings audit, job event intervals, trusted proxies, support bundle...). */
  app?: AppOptions;
  /** The kernel's clock (sessions, rate limits, audit times). */
  clock?: Clock;
  /** The kernel's logger (default: errors only, dropped). */
  logger?: Logger;
  /** Extra plugins (after the default ones). */
  plugins?: Array<{ use: string; options?: Record<string, unknown> }>;
}

/**
 * The local admin token of the test servers (as the real server writes to DATA_DIR/cli-token):
 * `call()` sends it on /api/admin and /api/audit requests that carry no credentials of their
 * own, as the `refdesk` CLI does. Pass `anonymous: true` to send none.
 */
export const TEST_CLI_TOKEN = 'rdcli_test-admin-token-of-the-api-server-helper';
export const adminAuth = { authorization: `Bearer ${TEST_CLI_TOKEN}` };

export interface ApiServer {
  kernel: Kernel;
  refdesk: RefdeskApp;
  base: string;
  dataDir: string;
  /** A scratch folder for the test's own files (removed on close). */
  scratch: string;
  close(): Promise<void>;
}

export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'refdesk-api-data-'));
  const scratch = mkdtempSync(join(tmpdir(), 'refdesk-api-files-'));
  const plugins: Array<{ use: string; options?: Record<string, unknown> }> = [
    { use: join(ROOT, 'plugins/store-embedded/index.ts'), options: { embedded: { flushIntervalMs: 50 } } },
    { use: join(ROOT, 'plugins/chunker-markdown/index.ts') },
    { use: join(ROOT, 'plugins/source-upload/index.ts') },
  ];
  if (!opts.withoutTestSources) plugins.push({ use: join(ROOT, 'test/fixtures/api-plugins/sources.ts') });
  if (opts.withTestRerankers) plugins.push({ use: join(ROOT, 'test/fixtures/api-plugins/rerankers.ts') });
  plugins.push(...(opts.plugins ?? []));
  const config = { plugins, network: { allowHosts: ['127.0.0.1'] }, ...opts.config };
  const configFile = join(scratch, 'refdesk.yaml');
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const kernel = await createKernel(configFile, { env: { dataDir, mode: 'server', port: 0 }, logger: opts.logger ?? createConsoleLogger('error', () => {}), ...(opts.clock ? { clock: opts.clock } : {}) });
  await kernel.open();
  const refdesk = createApp(kernel, { ...opts.app, access: { licence: testLicence(opts.licence), cliToken: TEST_CLI_TOKEN, ...opts.app?.access } });
  const server: Server = createServer(refdesk.app.callback());
  // See route-server.ts: no keep-alive close racing a starved test's next request.
  server.keepAliveTimeout = 120_000;
  const base = await listenOnLoopback(server);
  return {
    kernel,
    refdesk,
    base,
    dataDir,
    scratch,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await refdesk.jobs.stop();
      await refdesk.searchPool?.close();
      await kernel.close().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/** Writes markdown files (path -> content) under a new folder of `scratch`; returns the folder. */
export function writeDocs(scratch: string, name: string, files: Record<string, string>): string {
  const dir = join(scratch, name);
  for (const [p, content] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), content);
  }
  return dir;
}

/** Indexes a folder as /docs/<name> through the real ingest path (finalized when it resolves). */
export async function indexUpload(kernel: Kernel, name: string, folder: string, extra: { title?: string; description?: string; version?: string } = {}): Promise<void> {
  const { job } = await addLibrary(kernel, { source: 'upload', name, spec: { path: folder }, ...extra });
  const done = await runIngestJob(kernel, job.id);
  if (done.state !== 'succeeded') throw new Error(`ingest of ${name} failed: ${JSON.stringify(done.error)}`);
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** One HTTP request; JSON bodies are sent as JSON; redirects are not followed. */
export async function call(base: string, method: string, path: string, init: { headers?: Record<string, string>; json?: unknown; body?: RequestInit['body']; anonymous?: boolean } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...init.headers };
  const own = Object.keys(headers).some((h) => ['authorization', 'cookie', 'refdesk_api_key'].includes(h.toLowerCase()));
  if (!own && !init.anonymous && /^\/api\/(admin|audit)([/?]|$)/.test(path)) Object.assign(headers, adminAuth);
  let body = init.body;
  if (init.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(init.json);
  }
  const res = await fetch(base + path, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, headers: res.headers, text, body: type.includes('json') && text ? JSON.parse(text) : undefined };
}

export const qs = (params: Record<string, string>) => '?' + new URLSearchParams(params).toString();

/** Creates an API key through the admin route (with the helper's local admin token); returns the key. */
export async function createKey(base: string, input: { name?: string; plan?: string; role?: 'member' | 'admin' } = {}): Promise<string> {
  const r = await call(base, 'POST', '/api/admin/keys', { json: input });
  if (r.status !== 201) throw new Error(`key creation failed: ${r.text}`);
  return r.body.key as string;
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
