/**
 * Jobs over the real HTTP API: every job runs exactly once however many adds arrive at once, a
 * failed first build is a terminal answer that can be retried, libraries can be deleted through
 * the loopback admin route, and raw uploads are removed once their job has ended.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { existsSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { bearer, call, createKey, qs, startApiServer, writeDocs, type ApiServer } from './helpers/api-server.ts';
import { listenOnLoopback } from '../helpers/listen.ts';
import { packForUpload } from '../../server/pack.ts';
import { JobRunner } from '../../server/job-runner.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';

let s: ApiServer;
let site: Server;
let siteBase: string;
let key: string;
/** GET requests per path: each is one read of an llms.txt source. */
const reads = new Map<string, number>();
/** Paths answered 500 (a broken upstream). */
const broken = new Set<string>();
/** Paths whose answer waits until the test releases it. */
const held = new Map<string, ServerResponse[]>();

const post = (path: string, json: unknown) => call(s.base, 'POST', path, { headers: bearer(key), json });
const context = (libraryId: string, query: string) => call(s.base, 'GET', '/api/v2/context' + qs({ libraryId, query }));
/** Queues a build of a pinned version (as a source's previousVersions would) and runs it. */
async function buildPinned(id: string, llmstxtUrl: string, version: string): Promise<void> {
  const { job } = await addLibrary(s.kernel, { source: 'llmstxt', spec: { url: llmstxtUrl }, id, version });
  s.refdesk.jobs.enqueue(job.id);
  await s.refdesk.jobs.idle();
}
const llms = (name: string) => `# ${name}\n\n## Setup\n\nRun \`${name} init\` to create a ${name} project with the wizard.\n`;

describe('jobs over the HTTP API', () => {
  before(async () => {
    s = await startApiServer();
    site = createServer((req, res) => {
      const path = req.url ?? '';
      reads.set(path, (reads.get(path) ?? 0) + 1);
      if (broken.has(path)) {
        res.statusCode = 500;
        return void res.end('upstream broke');
      }
      const wait = held.get(path);
      if (wait) return void wait.push(res);
      res.end(llms(path.replace(/\W/g, '')));
    });
    siteBase = await listenOnLoopback(site);
    key = await createKey(s.base, { name: 'member' });
  });
  after(async () => {
    for (const list of held.values()) for (const r of list) r.end('late');
    site?.closeAllConnections();
    site?.close();
    await s?.close();
  });

  test('20 adds at once: each job runs exactly once (one source read each) and succeeds', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `burst${i}.txt`);
    // A second runner over the same store (another tick, or the resume at start) sees the same
    // queued jobs while the server's own runner takes them as they arrive.
    const other = new JobRunner(s.kernel);
    const answers = await Promise.all(
      names.map(async (n) => {
        const a = await post('/api/v2/add/llmstxt', { llmstxtUrl: `${siteBase}/${n}` });
        await other.resumeQueued();
        return a;
      }),
    );
    for (const a of answers) assert.equal(a.status, 200, a.text);
    await Promise.all([s.refdesk.jobs.idle(), other.idle()]);
    await s.refdesk.jobs.idle();
    for (const n of names) assert.equal(reads.get(`/${n}`), 1, `/${n} was read ${reads.get(`/${n}`)} times`);
    for (const a of answers) {
      const job = await s.kernel.store.getJob(a.body.jobId);
      assert.equal(job?.state, 'succeeded');
      const started = (await s.kernel.store.getJobLog(a.body.jobId)).filter((l) => l.message.startsWith('started:'));
      assert.equal(started.length, 1);
    }
    const ctx = await context('/llmstxt/127_0_0_1-burst7.txt', 'init');
    assert.equal(ctx.status, 200, ctx.text);
    assert.match(ctx.text, /burst7txt init/);
  });

  test('a failed first build answers 422 build_failed with the reason; search hides it; adding it again retries it', async () => {
    broken.add('/flaky.txt');
    const add = await post('/api/v2/add/llmstxt', { llmstxtUrl: `${siteBase}/flaky.txt` });
    assert.equal(add.status, 200, add.text);
    const id = add.body.libraryName as string;
    await s.refdesk.jobs.idle();
    assert.equal((await s.kernel.store.getJob(add.body.jobId))?.state, 'failed');

    const ctx = await context(id, 'init');
    assert.equal(ctx.status, 422, ctx.text);
    assert.equal(ctx.body.error, 'build_failed');
    assert.match(ctx.body.message, /answered 500/, 'the job\'s error message is the reason');
    assert.match(ctx.body.message, /add the same source again or refresh it/);
    const search = await call(s.base, 'GET', '/api/v2/libs/search' + qs({ libraryName: 'flaky', query: 'init' }));
    assert.equal(search.status, 200);
    assert.deepEqual(search.body.results.map((r: { id: string }) => r.id), [], 'a library with nothing to serve is not offered');

    // Adding the same source again retries it (no 409), once the upstream works.
    broken.delete('/flaky.txt');
    const again = await post('/api/v2/add/llmstxt', { llmstxtUrl: `${siteBase}/flaky.txt` });
    assert.equal(again.status, 200, again.text);
    assert.notEqual(again.body.jobId, add.body.jobId);
    await s.refdesk.jobs.idle();
    const ok = await context(id, 'init');
    assert.equal(ok.status, 200, ok.text);
    assert.match(ok.text, /flakytxt init/);
    const found = await call(s.base, 'GET', '/api/v2/libs/search' + qs({ libraryName: 'flaky', query: 'init' }));
    assert.deepEqual(found.body.results.map((r: { id: string }) => r.id), [id]);
    // Served now: a third add is a 409 again.
    assert.equal((await post('/api/v2/add/llmstxt', { llmstxtUrl: `${siteBase}/flaky.txt` })).status, 409);
  });

  test('a failed build with a token: the 422 message and the job log never show the token', async () => {
    const token = 'ghp_PLANTEDsecret0123456789abcdefABCDEF';
    const add = await post('/api/v2/add/repo/github', { docsRepoUrl: 'https://github.com/acme/secretive', gitToken: token });
    assert.equal(add.status, 200, add.text);
    await s.refdesk.jobs.idle();
    const ctx = await context('/acme/secretive', 'install');
    assert.equal(ctx.status, 422, ctx.text);
    assert.equal(ctx.body.error, 'build_failed');
    assert.ok(!ctx.text.includes(token) && !ctx.text.includes('PLANTED'), ctx.text);
    const log = await call(s.base, 'GET', `/api/admin/jobs/${add.body.jobId}`);
    assert.ok(!log.text.includes('PLANTED'), log.text);
  });

  test('refreshing a failed library retries it; a pinned version whose build failed answers 422 too', async () => {
    broken.add('/refail.txt');
    const add = await post('/api/v2/add/llmstxt', { llmstxtUrl: `${siteBase}/refail.txt` });
    const id = add.body.libraryName as string;
    await s.refdesk.jobs.idle();
    assert.equal((await context(id, 'init')).body.error, 'build_failed');
    await buildPinned(id, `${siteBase}/refail.txt`, 'v2');
    const v2 = await context(`${id}/v2`, 'init');
    assert.equal(v2.status, 422, v2.text);
    assert.equal(v2.body.error, 'build_failed');
    assert.ok(v2.body.message.includes(`${id}@v2`), v2.body.message);
    broken.delete('/refail.txt');
    const refresh = await post('/api/v1/refresh', { libraryName: id });
    assert.equal(refresh.status, 200, refresh.text);
    await s.refdesk.jobs.idle();
    assert.equal((await context(id, 'init')).status, 200);
  });

  test('DELETE /api/admin/libraries/<id>: a version, then the whole library; 404 unknown; 409 while a job runs', async () => {
    const add = await post('/api/v2/add/llmstxt', { llmstxtUrl: `${siteBase}/gone.txt` });
    const id = add.body.libraryName as string;
    await s.refdesk.jobs.idle();
    await buildPinned(id, `${siteBase}/gone.txt`, 'v1');
    assert.equal((await context(`${id}/v1`, 'init')).status, 200);

    const v1 = await call(s.base, 'DELETE', `/api/admin/libraries${id}/v1`);
    assert.equal(v1.status, 200, v1.text);
    assert.match(v1.body.message, /Deleted version v1/);
    assert.equal((await context(`${id}/v1`, 'init')).status, 404);
    assert.equal((await context(id, 'init')).status, 200, 'the default version stays');
    assert.equal((await call(s.base, 'DELETE', `/api/admin/libraries${id}/v1`)).status, 404);

    // A job running: refused, nothing removed.
    held.set('/gone.txt', []);
    const refresh = await post('/api/v1/refresh', { libraryName: id });
    while ((await s.kernel.store.getJob(refresh.body.jobId))?.state !== 'running' || held.get('/gone.txt')!.length === 0) await new Promise((r) => setTimeout(r, 20));
    const busy = await call(s.base, 'DELETE', `/api/admin/libraries${id}`);
    assert.equal(busy.status, 409, busy.text);
    assert.equal(busy.body.error, 'library_busy');
    assert.match(busy.body.message, /has an ingest job running \(job [0-9a-f-]+\)/);
    for (const r of held.get('/gone.txt')!) r.end(llms('gone'));
    held.delete('/gone.txt');
    await s.refdesk.jobs.idle();

    const whole = await call(s.base, 'DELETE', `/api/admin/libraries${id}`);
    assert.equal(whole.status, 200, whole.text);
    assert.equal((await context(id, 'init')).status, 404);
    assert.equal(await s.kernel.store.getLibrary(id), null);
    assert.deepEqual(await s.kernel.store.listJobs({ libraryId: id }), []);
    assert.equal((await call(s.base, 'DELETE', `/api/admin/libraries${id}`)).status, 404);
    const bad = await call(s.base, 'DELETE', `/api/admin/libraries/docs/${'x'.repeat(600)}`);
    assert.equal(bad.status, 400, bad.text);
    // Deleted, it can be added again from scratch (no 409).
    assert.equal((await post('/api/v2/add/llmstxt', { llmstxtUrl: `${siteBase}/gone.txt` })).status, 200);
    await s.refdesk.jobs.idle();
  });

  test('uploads: the raw archive is removed when its job ends (success or failure); refresh then asks for a re-upload', async () => {
    const uploads = join(s.dataDir, 'uploads');
    const folder = writeDocs(s.scratch, 'up', { 'guide.md': '# Up\n\n## Install\n\nRun `up install` to install it.\n' });
    const body = new Blob([new Uint8Array(await packForUpload(folder))]);
    const up = await call(s.base, 'POST', '/api/admin/upload?name=up', { body, headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(up.status, 202, up.text);
    await s.refdesk.jobs.idle();
    assert.equal((await s.kernel.store.getJob(up.body.jobId))?.state, 'succeeded');
    assert.deepEqual(readdirSync(uploads), [], 'the raw upload is gone once the build is finalized');
    assert.match((await context('/docs/up', 'install')).text, /up install/);

    const refresh = await post('/api/v1/refresh', { libraryName: '/docs/up' });
    assert.equal(refresh.status, 409, refresh.text);
    assert.equal(refresh.body.error, 'upload_required');
    assert.match(refresh.body.message, /re-upload to refresh/);

    // A failed build (no documentation in the archive) also removes its raw upload.
    const empty = writeDocs(s.scratch, 'empty', { 'data.bin': '\u0000\u0001' });
    const bad = await call(s.base, 'POST', '/api/admin/upload?name=empty', { body: new Blob([new Uint8Array(await packForUpload(empty))]), headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(bad.status, 202, bad.text);
    await s.refdesk.jobs.idle();
    assert.equal((await s.kernel.store.getJob(bad.body.jobId))?.state, 'failed');
    assert.deepEqual(readdirSync(uploads), []);

    // Deleting an upload library leaves nothing of it.
    assert.equal((await call(s.base, 'DELETE', '/api/admin/libraries/docs/up')).status, 200);
    assert.equal((await context('/docs/up', 'install')).status, 404);
  });

  test('at start, raw uploads no queued job needs are swept; those a queued job needs stay and are read', async () => {
    const uploads = join(s.dataDir, 'uploads');
    mkdirSync(uploads, { recursive: true });
    const stale = join(uploads, 'stale.upload');
    writeFileSync(stale, 'left by a crash');
    const folder = writeDocs(s.scratch, 'kept', { 'a.md': '# Kept\n\n## Launch\n\nCall `kept.launch()` to launch the rocket.\n' });
    const kept = join(uploads, 'kept.upload');
    writeFileSync(kept, await packForUpload(folder));
    // A job queued by a process that stopped before running it.
    await addLibrary(s.kernel, { source: 'upload', name: 'kept', spec: { path: kept } });
    const runner = new JobRunner(s.kernel);
    await runner.resumeQueued(new Date(Date.now() + 1000));
    await runner.idle();
    const job = (await s.kernel.store.listJobs({ libraryId: '/docs/kept' }))[0];
    assert.equal(job.state, 'succeeded', JSON.stringify(job.error));
    assert.equal(existsSync(stale), false, 'the stale upload is swept');
    assert.equal(existsSync(kept), false, 'the queued job read its upload, then it was removed');
    assert.match((await context('/docs/kept', 'launch the rocket')).text, /kept\.launch\(\)/);
  });

  test('a new upload replacing a queued one removes the old raw file; both jobs read the new one, which goes after the last', async () => {
    const uploads = join(s.dataDir, 'uploads');
    mkdirSync(uploads, { recursive: true });
    const first = join(uploads, 'first.upload');
    const second = join(uploads, 'second.upload');
    writeFileSync(first, await packForUpload(writeDocs(s.scratch, 'swap1', { 'a.md': '# Swap\n\n## Old\n\nThe `swap.old()` call.\n' })));
    writeFileSync(second, await packForUpload(writeDocs(s.scratch, 'swap2', { 'a.md': '# Swap\n\n## New\n\nThe `swap.fresh()` call replaces it.\n' })));
    const a = await addLibrary(s.kernel, { source: 'upload', name: 'swap', spec: { path: first } });
    const b = await addLibrary(s.kernel, { source: 'upload', name: 'swap', spec: { path: second } });
    assert.equal(existsSync(first), false, 'no job runs yet: the replaced upload goes at once');
    assert.equal((await runIngestJob(s.kernel, a.job.id)).state, 'succeeded');
    assert.equal(existsSync(second), true, 'the second job still needs it');
    assert.equal((await runIngestJob(s.kernel, b.job.id)).state, 'succeeded');
    assert.equal(existsSync(second), false);
    assert.match((await context('/docs/swap', 'swap fresh call')).text, /swap\.fresh\(\)/);
  });
});
