/**
 * Issue 21 over real HTTP: PATCH /api/settings turning an embedder on queues `embed` jobs that
 * the jobs API shows (log lines, progress) and the server runs; context answers then come from
 * hybrid search (the search workers' lexical hits fused in the main thread); an embedder that
 * fails at query time never gives a 5xx; the planted embedding key appears in no answer, job
 * log, server log or support bundle.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createConsoleLogger } from '../../core/services.ts';
import { readBuildVectorsMeta } from '../../core/vectors.ts';
import { ROOT, adminAuth, call, indexUpload, qs, startApiServer, writeDocs, type ApiServer } from './helpers/api-server.ts';
import { startOpenAiEmbeddings, type EmbeddingServer } from '../helpers/embedding-servers.ts';
import { unzip } from '../helpers/unzip.ts';

const KEY = 'sk-PlantedVectorsApiKey-77aa88bb99cc';
let s: ApiServer;
let vendor: EmbeddingServer;
const logLines: string[] = [];

async function waitForJobs(libraryId: string, kind: string): Promise<Array<{ id: string; kind: string; state: string; progress: { snippets: number; message?: string } }>> {
  for (let i = 0; i < 200; i++) {
    const res = await call(s.base, 'GET', `/api/jobs${qs({ libraryId })}`, { headers: adminAuth });
    assert.equal(res.status, 200);
    const jobs = (res.body.jobs ?? res.body) as Array<{ id: string; kind: string; state: string; progress: { snippets: number; message?: string } }>;
    const mine = jobs.filter((j) => j.kind === kind);
    if (mine.length > 0 && mine.every((j) => j.state === 'succeeded' || j.state === 'failed')) return mine;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`no finished ${kind} job for ${libraryId}`);
}

describe('vectors over HTTP', { timeout: 120_000 }, () => {
  before(async () => {
    vendor = await startOpenAiEmbeddings(undefined, { key: KEY });
    s = await startApiServer({
      logger: createConsoleLogger('debug', (l) => logLines.push(l)),
      plugins: [{ use: join(ROOT, 'plugins/embedder-openai/index.ts'), options: { openai: { batchSize: 8, retryBaseMs: 1, maxRetries: 1 } } }],
    });
    const folder = writeDocs(s.scratch, 'hybrid', {
      'routing.md': '# Routing\n\nRoutes map a path to a handler.\n\n## Parameters\n\nNamed parameters are read from ctx.params.\n',
      'cookies.md': '# Cookies\n\nRead and set cookies with ctx.cookies; signed cookies need app.keys.\n',
    });
    await indexUpload(s.kernel, 'hybrid', folder);
  });
  after(async () => {
    await s?.close();
    await vendor?.close();
  });

  test('turning the embedder on queues an embed job per version; it runs, logs and gives the version vectors', async () => {
    const before = await call(s.base, 'GET', `/api/v2/context${qs({ libraryId: '/docs/hybrid', query: 'route parameters', type: 'json' })}`);
    assert.equal(before.status, 200);
    const lexicalTag = before.headers.get('etag');
    assert.ok(lexicalTag);
    assert.equal(vendor.requests.length, 0, 'no embedder: no call');
    const res = await call(s.base, 'PATCH', '/api/settings', { headers: adminAuth, json: { embedding: { provider: 'openai', baseUrl: `${vendor.base}/v1`, apiKey: KEY, model: 'loopback-hash' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [job] = await waitForJobs('/docs/hybrid', 'embed');
    assert.equal(job.state, 'succeeded');
    assert.equal(job.progress.snippets, 3);
    assert.equal(job.progress.message, '3 of 3 snippets have vectors');
    const log = await call(s.base, 'GET', `/api/jobs/${job.id}/log`, { headers: adminAuth });
    assert.equal(log.status, 200);
    const text = log.text;
    assert.match(text, /embedding 3 snippets with loopback-hash: 0 unchanged \(vectors reused\), 3 to embed/);
    assert.match(text, /vectors written: 3 x 256/);
    const build = (await s.kernel.store.getVersion('/docs/hybrid', ''))!.activeBuildId!;
    assert.equal((await readBuildVectorsMeta(s.dataDir, build))?.model, 'loopback-hash');

    const calls = vendor.bodies.length;
    const hybrid = await call(s.base, 'GET', `/api/v2/context${qs({ libraryId: '/docs/hybrid', query: 'route parameters', type: 'json' })}`);
    assert.equal(hybrid.status, 200);
    assert.equal(vendor.bodies.length, calls + 1, 'the question was embedded');
    assert.notEqual(hybrid.headers.get('etag'), lexicalTag, 'the vectors change the ETag (no stale 304 after an embed job)');
    const revalidated = await call(s.base, 'GET', `/api/v2/context${qs({ libraryId: '/docs/hybrid', query: 'route parameters', type: 'json' })}`, { headers: { 'if-none-match': lexicalTag! } });
    assert.equal(revalidated.status, 200);
    assert.ok(JSON.stringify(hybrid.body).includes('ctx.params'));
  });

  test('an embedder failing at query time: 200 with the lexical answer, never a 5xx', async () => {
    for (let i = 0; i < 4; i++) vendor.script.push({ status: 500, body: '{"error":{"message":"boom","type":"server_error","param":null,"code":null}}' });
    const res = await call(s.base, 'GET', `/api/v2/context${qs({ libraryId: '/docs/hybrid', query: 'signed cookies keys', type: 'json' })}`);
    assert.equal(res.status, 200);
    assert.ok(JSON.stringify(res.body).includes('app.keys'));
    vendor.script.length = 0;
    vendor.script.push({ body: '{"object":"list","data":[{"obj' });
    const txt = await call(s.base, 'GET', `/api/v2/context${qs({ libraryId: '/docs/hybrid', query: 'cookies keys signed' })}`);
    assert.equal(txt.status, 200);
  });

  test('the planted embedding key is in no answer, job log, server log or support bundle', async () => {
    const texts: string[] = [logLines.join('\n')];
    for (const path of ['/api/settings', '/api/jobs', `/api/jobs${qs({ libraryId: '/docs/hybrid' })}`]) texts.push((await call(s.base, 'GET', path, { headers: adminAuth })).text);
    const jobs = (await call(s.base, 'GET', '/api/jobs', { headers: adminAuth })).body;
    for (const j of (jobs.jobs ?? jobs) as Array<{ id: string }>) texts.push((await call(s.base, 'GET', `/api/jobs/${j.id}/log`, { headers: adminAuth })).text);
    texts.push((await call(s.base, 'GET', `/api/v2/context${qs({ libraryId: '/docs/hybrid', query: 'cookies' })}`)).text);
    const bundle = await fetch(`${s.base}/api/support-bundle`, { headers: adminAuth });
    assert.equal(bundle.status, 200);
    for (const [, bytes] of await unzip(Buffer.from(await bundle.arrayBuffer()))) texts.push(bytes.toString('utf8'));
    for (const t of texts) {
      assert.ok(!t.includes(KEY), 'the key is not shown');
      assert.ok(!t.includes(Buffer.from(KEY).toString('base64')), 'nor in base64');
    }
    assert.ok(vendor.requests.every((r) => r.headers.authorization === `Bearer ${KEY}`), 'the key went to the embedding endpoint only');
  });
});
