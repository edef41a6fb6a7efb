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
});
