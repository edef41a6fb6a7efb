/**
 * Context searches in worker threads (server/search-pool.ts) behind the real HTTP API: the same
 * answers as the main thread's search, /ping answered while a search keeps a worker busy, a
 * real 504 at the request deadline (the worker stopped and started again), a worker that dies
 * failing only its own query (503), and a damaged segment left to the store, which repairs it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { getContext, toContextJson } from '../../core/query.ts';
import { createApp } from '../../server/app.ts';
import type { SearchPool } from '../../server/search-pool.ts';
import type { JobRunner } from '../../server/job-runner.ts';
import { selfRetrievalScore } from '../../core/self-retrieval.ts';
import { listenOnLoopback } from '../helpers/listen.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A small library: pages about widgets, each with sections of prose and code. */
function writeDocs(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const topics = ['frobnicator', 'sprocket', 'gearbox', 'flux capacitor', 'turbo encabulator', 'widget cache', 'retry policy', 'event stream'];
  topics.forEach((topic, i) => {
    const sections = [`# The ${topic}`, '', `The ${topic} is part of every widget. This page explains how to configure the ${topic}.`, ''];
    for (let k = 0; k < 6; k++) {
      sections.push(`## Configure the ${topic} option ${k}`, '', `Set \`${topic.replace(/ /g, '')}Level${k}\` in widgets.yaml to tune the ${topic}; level ${k} means ${k * 10} percent.`, '');
      sections.push('```yaml', `${topic.replace(/ /g, '')}Level${k}: ${k}`, '```', '');
    }
    writeFileSync(join(dir, `page-${i}.md`), sections.join('\n'));
  });
}

describe('context searches in worker threads over HTTP', () => {
  let dir: string;
  let kernel: Kernel;
  let server: Server;
  let base: string;
  let pool: SearchPool;
  let jobs: JobRunner;
  /** The benchmark score of the first build, whose check searched on the main thread (no pool). */
  let mainThreadScore: number;
  const logs: string[] = [];

  const get = async (path: string) => {
    const res = await fetch(base + path);
    const text = await res.text();
    return { status: res.status, text, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
  };
  const ctx = (query: string, type = 'json') => get(`/api/v2/context?${new URLSearchParams({ libraryId: '/docs/widgets', query, type })}`);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'refdesk-pool-'));
    writeDocs(join(dir, 'docs'));
    kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), {
      env: { dataDir: join(dir, 'data'), mode: 'server', port: 0 },
      logger: createConsoleLogger('warn', (line) => logs.push(line)),
    });
    await kernel.open();
    const { job } = await addLibrary(kernel, { source: 'upload', name: 'widgets', spec: { path: join(dir, 'docs') } });
    assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
    mainThreadScore = (await kernel.store.getLibrary('/docs/widgets'))!.benchmarkScore;
    const made = createApp(kernel, { searchPool: { size: 2, testHooks: true } });
    assert.ok(made.searchPool);
    pool = made.searchPool;
    jobs = made.jobs;
    server = createServer(made.app.callback());
    base = await listenOnLoopback(server);
  });

  after(async () => {
    server?.close();
    await pool?.close();
    await kernel?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('answers are the main thread search answers, searched in a worker', async () => {
    for (const query of ['configure the frobnicator', 'gearbox level 3', 'how do I set the retry policy', 'event stream option 5', 'nothing matches xyzzy']) {
      const before = pool.stats.searched;
      const r = await ctx(query);
      assert.equal(r.status, 200, r.text);
      assert.equal(pool.stats.searched, before + 1, 'searched by the pool');
      const local = toContextJson(await getContext(kernel, { libraryId: '/docs/widgets', query }));
      assert.deepEqual(r.body, JSON.parse(JSON.stringify(local)), query);
    }
    const txt = await ctx('configure the sprocket', 'txt');
    assert.equal(txt.status, 200);
    assert.match(txt.text, /sprocketLevel/);
  });

  test("the server's ingest asks its self-retrieval check's questions of the pool (the new segment opened in a worker); the same score", async () => {
    const before = pool.stats.searched;
    const opened = (kernel.store as unknown as { segmentStats: { opened: number } }).segmentStats.opened;
    const { job } = await addLibrary(kernel, { source: 'upload', name: 'widgets', spec: { path: join(dir, 'docs') } });
    jobs.enqueue(job.id);
    await jobs.idle();
    assert.equal((await kernel.store.getJob(job.id))?.state, 'succeeded');
    assert.equal((await kernel.store.getLibrary('/docs/widgets'))!.benchmarkScore, mainThreadScore);
    const asked = pool.stats.searched - before;
    assert.ok(asked > 0, 'the check searched in the pool');
    assert.equal(asked, (await selfRetrievalScore(kernel.store, '/docs/widgets', '')).asked, 'every question');
    assert.ok(mainThreadScore > 0);
    // Only the line above (the main thread's own check) opened the new segment on the main thread.
    assert.equal((kernel.store as unknown as { segmentStats: { opened: number } }).segmentStats.opened, opened + 1);
  });

  test('a query past the deadline answers 504 processing_timeout at the deadline; /ping answers meanwhile; the next query is served', async () => {
    // The first test started this library's worker (under tsx that takes a moment).
    kernel.config.api.requestTimeoutMs = 1500;
    const started = Date.now();
    const slow = ctx('__refdesk_test_busy__ 20000 frobnicator');
    await new Promise((r) => setTimeout(r, 200));
    for (let i = 0; i < 5; i++) {
      const ping = await get('/ping');
      assert.equal(ping.status, 200);
      assert.deepEqual(ping.body, { status: 'ok', message: 'pong' });
    }
    const r = await slow;
    assert.equal(r.status, 504, r.text);
    assert.equal(r.body.error, 'processing_timeout');
    assert.match(r.body.message, /did not finish within 1500 ms/);
    assert.ok(Date.now() - started < 20000, 'the answer did not wait for the busy worker');
    assert.equal(pool.stats.abandoned, 1);
    kernel.config.api.requestTimeoutMs = 30_000;
    const next = await ctx('configure the gearbox');
    assert.equal(next.status, 200, next.text);
    assert.match(next.text, /gearboxLevel/);
  });

  test('a worker that dies fails its own query with 503 search_failed; the server stays up and the next query is answered', async () => {
    const crashed = pool.stats.crashed;
    const r = await ctx('__refdesk_test_crash__ sprocket');
    assert.equal(r.status, 503, r.text);
    assert.equal(r.body.error, 'search_failed');
    assert.match(r.body.message, /search worker running it stopped/);
    assert.equal(pool.stats.crashed, crashed + 1);
    assert.equal((await get('/ping')).status, 200);
    const next = await ctx('configure the sprocket');
    assert.equal(next.status, 200, next.text);
    assert.match(next.text, /sprocketLevel/);
  });

  test('a damaged segment is left to the store, which rebuilds it; the answer is unchanged', async () => {
    const want = await ctx('turbo encabulator option 2');
    assert.equal(want.status, 200);
    // A fresh server on the same data: neither the workers nor the store have the file open.
    server.close();
    await pool.close();
    await kernel.close();
    const segDir = join(dir, 'data', 'segments');
    const [file] = readdirSync(segDir).filter((f) => f.endsWith('.seg'));
    const bytes = readFileSync(join(segDir, file));
    // Damage a byte of the index part (after the 256-byte header); the catalog's checksum stays.
    bytes[300] ^= 0xff;
    writeFileSync(join(segDir, file), bytes);
    kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), {
      env: { dataDir: join(dir, 'data'), mode: 'server', port: 0 },
      logger: createConsoleLogger('warn', (line) => logs.push(line)),
    });
    await kernel.open();
    const made = createApp(kernel, { searchPool: { size: 1 } });
    pool = made.searchPool!;
    server = createServer(made.app.callback());
    base = await listenOnLoopback(server);
    const store = kernel.store as unknown as { segmentStats: { rebuilt: number } };
    const r = await ctx('turbo encabulator option 2');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, want.body);
    assert.equal(store.segmentStats.rebuilt, 1, 'the store rebuilt the segment');
    assert.ok(logs.some((l) => /index segment cannot be used/.test(l)), logs.join('\n'));
    assert.equal(pool.stats.searched, 0);
    const again = await ctx('turbo encabulator option 2');
    assert.deepEqual(again.body, want.body);
    assert.equal(pool.stats.searched, 1, 'the rebuilt segment is searched in the worker');
  });
});
