/**
 * The job runner on a shared queue (server/job-runner.ts with the PostgreSQL store's JobQueue) on
 * Debian's PostgreSQL server: two nodes (two kernels, each with its own PostgresStore, data
 * directory and JobRunner) on one database, the real llms.txt source reading a real HTTP server
 * on 127.0.0.1 that counts its reads and can hold an answer. Each job runs exactly once; a node
 * that stops renewing its lease loses the job to the other node, which completes it, and the
 * stale node cannot finalize its build; cancel through one node stops a job running on the other;
 * a watcher on one node hears the log lines, progress and end of a job running on the other.
 * Short leases (leaseMs 4000, heartbeatMs 300, pollMs 200).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JobRecord, JobState } from '../../core/contracts.ts';
import { addLibrary } from '../../core/ingest.ts';
import { JobRunner, sharedJobQueue, type JobEvent } from '../../server/job-runner.ts';
import type { PostgresStore } from '../../plugins/store-postgres/store.ts';
import { listenOnLoopback } from '../helpers/listen.ts';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { BASE_PLUGINS, openTestKernel, type TestKernel } from '../helpers/test-kernel.ts';
import { memoryLogger } from '../plugins/store-embedded/helpers.ts';

// A lease of 1.5 s expired while its node was alive at load average 19 on 2 cores (renewals
// starved of CPU), so a job ran twice in turn; these tests count runs, so their leases are longer.
const LEASE = { leaseMs: 4000, heartbeatMs: 300, pollMs: 200 };

let cluster: TestPostgres;
let site: Server;
let siteBase: string;
let databases = 0;
/** GET requests per path: each is one read of an llms.txt source, i.e. one run of its job. */
const reads = new Map<string, number>();
/** Paths whose first answer waits until the test releases it. */
const holdFirst = new Set<string>();
const held = new Map<string, ServerResponse[]>();

interface Node {
  tk: TestKernel;
  store: PostgresStore;
  runner: JobRunner;
  logs: ReturnType<typeof memoryLogger>;
}
const nodes: Node[] = [];

/** A node on `url`: a kernel with the PostgreSQL store and its runner, started as the server starts it. */
async function startNode(url: string): Promise<Node> {
  const logs = memoryLogger();
  const tk = await openTestKernel({
    prefix: 'refdesk-pg-runner-',
    plugins: [{ use: 'test/fixtures/store-postgres-test.ts', options: { 'postgres-test': { databaseUrl: url, ...LEASE } } }, 'plugins/chunker-markdown', { use: 'plugins/source-llms-txt', options: { llmstxt: {} } }],
    sections: { slots: { store: 'postgres-test', chunkers: ['markdown'] }, network: { allowHosts: ['127.0.0.1'] } },
    logger: logs,
  });
  const runner = new JobRunner(tk.kernel);
  const node = { tk, store: tk.kernel.store as PostgresStore, runner, logs };
  nodes.push(node);
  await runner.resumeQueued();
  return node;
}

async function twoNodes(): Promise<[Node, Node]> {
  const url = await cluster.createDatabase(`runner_${process.pid}_${++databases}`);
  return [await startNode(url), await startNode(url)];
}

async function stopNode(n: Node): Promise<void> {
  const i = nodes.indexOf(n);
  if (i >= 0) nodes.splice(i, 1);
  await n.runner.stop();
  await n.tk.close();
}

/** Waits until `check` returns a value (not undefined/false), polling. */
async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function jobIn(n: Node, id: string, states: JobState[]): Promise<JobRecord> {
  return until(`job ${id} in ${states.join('/')}`, async () => {
    const j = await n.store.getJob(id);
    return j && states.includes(j.state) ? j : undefined;
  });
}

function release(path: string): void {
  for (const r of held.get(path)?.splice(0) ?? []) r.end(page(path));
}

const page = (path: string) => {
  const name = path.replace(/\W/g, '');
  return `# ${name}\n\n## Setup\n\nRun \`${name} init\` to create a ${name} project (read ${reads.get(path)}).\n`;
};

async function add(n: Node, name: string): Promise<JobRecord> {
  const { job } = await addLibrary(n.tk.kernel, { source: 'llmstxt', spec: { url: `${siteBase}/${name}` } });
  n.runner.enqueue(job.id);
  return job;
}

/**
 * Two nodes and a job running on A, its source read held (`path`); B's runner is made only now
 * (`b2`, not started), so A took the job. B's own first runner is stopped.
 */
async function jobHeldOnA(name: string): Promise<{ a: Node; b: Node; b2: JobRunner; job: JobRecord; path: string }> {
  const [a, b] = await twoNodes();
  await b.runner.stop();
  const path = `/${name}`;
  holdFirst.add(path);
  const job = await add(a, name);
  await until('A reads the source', async () => held.get(path)?.length === 1);
  const b2 = new JobRunner(b.tk.kernel);
  nodes.push({ ...b, runner: b2 });
  return { a, b, b2, job, path };
}

describe('job runner on the shared PostgreSQL queue: two nodes', { skip: postgresSkipReason() }, () => {
  before(async () => {
    cluster = await startPostgres();
    site = createServer((req, res) => {
      const path = req.url ?? '';
      reads.set(path, (reads.get(path) ?? 0) + 1);
      if (holdFirst.has(path)) {
        holdFirst.delete(path);
        held.set(path, [...(held.get(path) ?? []), res]);
        return;
      }
      res.end(page(path));
    });
    siteBase = await listenOnLoopback(site);
  });
  after(async () => {
    for (const list of held.values()) for (const r of list) r.destroy();
    for (const n of [...nodes]) await stopNode(n).catch(() => {});
    site?.closeAllConnections();
    site?.close();
    await cluster?.stop();
  });

  test('the runner uses the shared queue of the PostgreSQL store (and not of the embedded one)', async () => {
    const [a] = await twoNodes();
    assert.ok(sharedJobQueue(a.store));
    const embedded = await openTestKernel({ prefix: 'refdesk-emb-runner-', plugins: BASE_PLUGINS });
    try {
      assert.equal(sharedJobQueue(embedded.kernel.store), null);
    } finally {
      await embedded.close();
    }
  });

  test('10 jobs added through one node, two runners: each job runs exactly once, both nodes run some, all succeed', async () => {
    const [a, b] = await twoNodes();
    const names = Array.from({ length: 10 }, (_, i) => `ten${i}.txt`);
    // The first job is held: node A (or B) is busy with it, so the other node must take the next ones.
    holdFirst.add(`/${names[0]}`);
    const jobs: JobRecord[] = [];
    for (const n of names) jobs.push(await add(a, n));
    await until('the first job read', async () => held.get(`/${names[0]}`)?.length === 1);
    await until('nine jobs ended', async () => (await a.store.listJobs({ state: 'succeeded' })).length >= 9);
    release(`/${names[0]}`);
    for (const j of jobs) assert.equal((await jobIn(b, j.id, ['succeeded', 'failed'])).state, 'succeeded');
    for (const n of names) assert.equal(reads.get(`/${n}`), 1, `/${n} was read ${reads.get(`/${n}`)} times`);
    for (const j of jobs) {
      const started = (await b.store.getJobLog(j.id)).filter((l) => l.message.startsWith('started:'));
      assert.equal(started.length, 1, `job ${j.id} started once`);
    }
    const ranBy = await a.store.database.query<{ claimed_by: string; n: string }>('SELECT claimed_by, count(*) AS n FROM jobs GROUP BY claimed_by');
    assert.deepEqual(ranBy.map((r) => r.claimed_by).sort(), [a.store.database.nodeId, b.store.database.nodeId].sort(), 'both nodes ran jobs');
    const hits = await b.store.search(jobs[7].libraryId, '', 'init', 5);
    assert.ok(hits.length > 0, 'node B serves a library built by either node');
  });

  test('a node that stops renewing its lease loses the job: the other node completes it after leaseMs; the stale node cannot finalize', async () => {
    const { a, b, b2, job, path } = await jobHeldOnA('stale.txt');
    assert.equal((await a.store.database.query('SELECT claimed_by FROM jobs WHERE id = $1', [job.id]))[0].claimed_by, a.store.database.nodeId);
    // A dead node, as far as the database can tell: its runner believes its renewals succeed, but none reaches the database.
    (a.store as unknown as { renewLease: () => Promise<{ held: boolean; cancelRequested: boolean }> }).renewLease = async () => ({ held: true, cancelRequested: false });
    const startedAt = Date.now();
    await b2.resumeQueued();
    // B sweeps the expired lease, claims the job and reads the source again (read 2), unheld.
    const done = await jobIn(b, job.id, ['succeeded', 'failed']);
    assert.equal(done.state, 'succeeded');
    const tookMs = Date.now() - startedAt;
    assert.ok(tookMs >= LEASE.leaseMs - 100, `taken over only once the lease expired (after ${tookMs} ms)`);
    assert.equal(reads.get(path), 2);
    const served = await b.store.getSnippets(job.libraryId, '');
    assert.ok(served.some((s) => s.content.includes('(read 2)')), "B's build is served");
    assert.ok((await b.store.getJobLog(job.id)).some((l) => /stopped renewing its lease/.test(l.message)));

    // A's read completes now: A goes on to finalize its build over B's result, and is refused.
    release(path);
    await until('A gives up the job', async () => a.logs.entries.some((l) => /job left to the node that took it over|job failed to run/.test(l.message)));
    await a.runner.idle();
    const after = await b.store.getJob(job.id);
    assert.equal(after?.state, 'succeeded', "A's end never overwrote B's");
    assert.deepEqual(after?.error, null);
    const servedAfter = await b.store.getSnippets(job.libraryId, '');
    assert.ok(servedAfter.some((s) => s.content.includes('(read 2)')) && !servedAfter.some((s) => s.content.includes('(read 1)')), "still B's build, never A's");
    const lines = (await b.store.getJobLog(job.id)).map((l) => l.message);
    assert.equal(lines.filter((l) => l.startsWith('finalized:')).length, 1, 'one finalize in the log');
    assert.ok(!lines.some((l) => l.startsWith('failed:')), `no failure line from A: ${lines.join(' | ')}`);
  });

  test("a node that finds its lease lost stops the job and says so in its own log (not 'stopped by a shutdown')", async () => {
    const { a, b, b2, job, path } = await jobHeldOnA('lost.txt');
    type Renew = (id: string) => Promise<{ held: boolean; cancelRequested: boolean }>;
    const store = a.store as unknown as { renewLease: Renew };
    const renew = store.renewLease.bind(a.store);
    // A's renewals stop reaching the database until B has taken the job over and run it.
    store.renewLease = async () => ({ held: true, cancelRequested: false });
    await b2.resumeQueued();
    assert.equal((await jobIn(b, job.id, ['succeeded', 'failed'])).state, 'succeeded');
    store.renewLease = renew;
    await until("A's lost-lease line", async () => a.logs.entries.some((l) => /lost the job's lease/.test(l.message)));
    await a.runner.idle();
    release(path);
    const local = readFileSync(join(a.tk.kernel.env.dataDir, 'jobs', `${job.id}.log`), 'utf8');
    assert.match(local, /lost the job's lease/, "A's job log file says the lease was lost");
    assert.doesNotMatch(local, /shutdown/);
    assert.ok(!a.logs.entries.some((l) => /shutdown/.test(l.message)), 'no shutdown line in the process log');
    // The store's record is B's: A wrote nothing after losing the lease.
    assert.equal((await b.store.getJob(job.id))?.state, 'succeeded');
    assert.ok(!(await b.store.getJobLog(job.id)).some((l) => /lost the job's lease|shutdown/.test(l.message)));
    // Its connections go now (the cluster's connection limit is shared by the file's tests).
    await b2.stop();
    nodes.splice(nodes.findIndex((n) => n.runner === b2), 1);
    await stopNode(a);
    await stopNode(b);
  });

  test("a watcher on another node follows the job through the store: its log lines as they are written, and its end", async () => {
    const { b2, job, path } = await jobHeldOnA('watched.txt');
    const events: JobEvent[] = [];
    const off = b2.subscribe(job.id, (e) => events.push(e));
    await sleep(LEASE.pollMs * 2);
    release(path);
    const end = await until('the end event on B', async () => events.find((e) => e.type === 'end'));
    off();
    assert.equal(end.type === 'end' && end.job.state, 'succeeded');
    const lines = events.flatMap((e) => (e.type === 'log' ? [e.entry.message] : []));
    assert.ok(lines.some((l) => l.startsWith('finalized:')), `B heard the lines written on A after it subscribed: ${lines.join(' | ')}`);
    assert.ok(!lines.some((l) => l.startsWith('started:')), 'lines from before the subscription are not sent again (the route sent them)');
    const seqs = events.flatMap((e) => (e.type === 'log' ? [e.entry.seq] : []));
    assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y));
  });

  test('a watcher on another node hears the progress the running node records, and the last progress before the end', async () => {
    const { a, b2, job, path } = await jobHeldOnA('progress.txt');
    const events: JobEvent[] = [];
    const off = b2.subscribe(job.id, (e) => events.push(e));
    // What the running node records while it works (core/ingest.ts writes it at most once a second).
    await a.store.updateJob(job.id, { progress: { files: 3, total: 9, snippets: 7, bytes: 1234 } });
    const heard = await until('a progress event on B', async () => events.find((e) => e.type === 'progress' && e.progress.files === 3));
    assert.ok(heard.type === 'progress');
    const { files, total, snippets, bytes } = heard.progress;
    assert.deepEqual({ files, total, snippets, bytes }, { files: 3, total: 9, snippets: 7, bytes: 1234 }, 'the recorded progress (merged into what A had recorded)');
    assert.ok(heard.elapsedMs >= 0);
    const sent = events.filter((e) => e.type === 'progress').length;
    await sleep(LEASE.pollMs * 3);
    assert.equal(events.filter((e) => e.type === 'progress').length, sent, 'unchanged progress is not sent again');
    release(path);
    const end = await until('the end event on B', async () => events.find((e) => e.type === 'end'));
    off();
    assert.ok(end.type === 'end' && end.job.state === 'succeeded');
    const progress = events.flatMap((e) => (e.type === 'progress' ? [e.progress] : []));
    assert.deepEqual(progress[progress.length - 1], end.job.progress, 'the last progress event is the job\'s final progress');
    assert.ok((end.job.progress.snippets ?? 0) > 0);
    assert.ok(events.findIndex((e) => e.type === 'end') > events.findLastIndex((e) => e.type === 'progress'), 'progress comes before the end');
  });

  test('cancel through the other node stops a job running on this one', async () => {
    const { a, b2, job } = await jobHeldOnA('cancel-me.txt');
    const ended = await b2.cancel(job.id);
    assert.equal(ended.state, 'failed');
    assert.equal(ended.error?.code, 'cancelled');
    await a.runner.idle();
    assert.equal((await a.store.getJob(job.id))?.state, 'failed');
    assert.equal((await a.store.getVersion(job.libraryId, ''))?.activeBuildId ?? null, null, 'nothing was served');
    // A queued job cancelled through B never runs on A.
    holdFirst.add('/busy.txt');
    const busy = await add(a, 'busy.txt');
    await until('A busy', async () => held.get('/busy.txt')?.length === 1);
    const waiting = await add(a, 'never.txt');
    const cancelled = await b2.cancel(waiting.id);
    assert.deepEqual([cancelled.state, cancelled.error?.code], ['failed', 'cancelled']);
    release('/busy.txt');
    await jobIn(a, busy.id, ['succeeded']);
    await a.runner.idle();
    assert.equal(reads.get('/never.txt'), undefined, 'the cancelled job never read its source');
  });
});
