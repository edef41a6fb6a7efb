/**
 * Job logs on disk (core/job-log.ts): batched JSON lines per job, numbering that continues
 * across runs, secrets redacted before they are written, retention pruning at start.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kernel } from '../../core/kernel.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { JobLogWriter, jobLogPath, pruneJobLogs, readJobLog, type JobLogEntry } from '../../core/job-log.ts';
import { JobRunner } from '../../server/job-runner.ts';
import { BASE_PLUGINS, openTestKernel, type TestKernel } from '../helpers/test-kernel.ts';

const TOKEN = 'glpat-JobLogPlantedSecret-0123456789';
let dir: string;
let tk: TestKernel;
let kernel: Kernel;

before(async () => {
  tk = await openTestKernel({
    prefix: 'refdesk-job-log-',
    plugins: [...BASE_PLUGINS, 'test/fixtures/logging-source.ts'],
    sections: { jobs: { logRetentionDays: 7 } },
    mode: 'server',
  });
  ({ dir, kernel } = tk);
});
after(() => tk?.close());

test('lines are written in batches, as JSON lines numbered from 1; a second writer of the same job continues the numbering', async () => {
  const data = join(dir, 'batch');
  const w = new JobLogWriter(data, 'job_batch', { flushMs: 60_000, maxBuffered: 3 });
  w.append({ level: 'info', stage: 'reading', message: 'one' });
  w.append({ level: 'warn', stage: 'reading', message: 'two', path: 'docs/two.md' });
  assert.equal(existsSync(jobLogPath(data, 'job_batch')!), false, 'written before the batch was full');
  w.append({ level: 'info', stage: 'reading', message: 'three' });
  await w.flush();
  assert.equal(readFileSync(jobLogPath(data, 'job_batch')!, 'utf8').trim().split('\n').length, 3);
  const again = new JobLogWriter(data, 'job_batch');
  assert.equal(again.append({ level: 'info', stage: 'done', message: 'four' })?.seq, 4);
  await again.close();
  const lines = await readJobLog(data, 'job_batch');
  assert.deepEqual(lines.map((l) => [l.seq, l.message]), [[1, 'one'], [2, 'two'], [3, 'three'], [4, 'four']]);
  assert.equal(lines[1].path, 'docs/two.md');
  assert.deepEqual((await readJobLog(data, 'job_batch', 2)).map((l) => l.seq), [3, 4]);
  assert.deepEqual(await readJobLog(data, 'job_none'), []);
  assert.equal(jobLogPath(data, '../escape'), null);
  assert.throws(() => new JobLogWriter(data, '../escape'));
});

test('a job run writes its log file with stages and paths; the spec secret never reaches the file, the events or the store', async () => {
  const { job } = await addLibrary(kernel, { source: 'logging', name: 'secretive', spec: { name: 'x', token: TOKEN } });
  const heard: JobLogEntry[] = [];
  const done = await runIngestJob(kernel, job.id, { onLog: (e) => heard.push(e) });
  assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.progress.total, 3);
  const text = readFileSync(jobLogPath(kernel.env.dataDir, job.id)!, 'utf8');
  assert.ok(!text.includes(TOKEN), text);
  assert.ok(!JSON.stringify(heard).includes(TOKEN));
  assert.ok(!JSON.stringify(await kernel.store.getJobLog(job.id)).includes(TOKEN));
  const lines = await readJobLog(kernel.env.dataDir, job.id);
  const order = ['queued', 'starting', 'reading', 'writing', 'finalizing', 'done'];
  const stages = lines.map((l) => order.indexOf(l.stage));
  assert.ok(stages.every((x, i) => x >= 0 && (i === 0 || x >= stages[i - 1])), `stages out of order: ${lines.map((l) => l.stage).join(',')}`);
  assert.ok(['queued', 'starting', 'reading', 'done'].every((s) => lines.some((l) => l.stage === s)));
  assert.equal(lines[0].stage, 'queued');
  const skipped = lines.find((l) => l.level === 'warn' && l.path?.startsWith('secret-'));
  assert.ok(skipped, JSON.stringify(lines));
  assert.ok(lines.some((l) => l.path === 'a.md' && /^a\.md: \d+ snippets$/.test(l.message)));
  assert.ok(lines.some((l) => l.stage === 'done' && /^finalized: 2 documents/.test(l.message)));
  // The events carry the same lines as the file (from "started" on).
  assert.deepEqual(heard.map((e) => e.seq), lines.filter((l) => l.stage !== 'queued').map((l) => l.seq));
});

test('the log is complete when the job is seen to end: the final state is written after its last line reaches the file', async () => {
  const { job } = await addLibrary(kernel, { source: 'logging', name: 'ordered', spec: { name: 'y', token: TOKEN } });
  // What a client polling GET /api/jobs/{id} and then reading /log would see at the moment the
  // state turns terminal: the store's updateJob is watched on this instance only.
  const store = kernel.store;
  const seen: string[][] = [];
  const updateJob = store.updateJob.bind(store);
  store.updateJob = async (id, patch) => {
    if (id === job.id && (patch.state === 'succeeded' || patch.state === 'failed')) seen.push((await readJobLog(kernel.env.dataDir, job.id)).map((l) => l.message));
    return updateJob(id, patch);
  };
  try {
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  } finally {
    delete (store as { updateJob?: unknown }).updateJob;
  }
  assert.equal(seen.length, 1);
  assert.ok(seen[0].some((m) => /^finalized: /.test(m)), `the log when the job ended: ${JSON.stringify(seen[0])}`);
});

test('logs older than jobs.logRetentionDays are pruned when the runner starts; newer ones stay', async () => {
  const logs = join(kernel.env.dataDir, 'jobs');
  mkdirSync(logs, { recursive: true });
  const old = join(logs, 'job_old.log');
  const recent = join(logs, 'job_recent.log');
  writeFileSync(old, '{"seq":1}\n');
  writeFileSync(recent, '{"seq":1}\n');
  const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000);
  utimesSync(old, eightDaysAgo, eightDaysAgo);
  const runner = new JobRunner(kernel);
  try {
    await runner.resumeQueued();
    const end = Date.now() + 10_000;
    while (existsSync(old) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.equal(existsSync(old), false, 'the old log is still there');
    assert.equal(existsSync(recent), true);
  } finally {
    await runner.stop();
  }
  // 0 keeps everything.
  utimesSync(recent, eightDaysAgo, eightDaysAgo);
  assert.equal(await pruneJobLogs(kernel.env.dataDir, 0), 0);
  assert.equal(existsSync(recent), true);
  assert.equal(await pruneJobLogs(kernel.env.dataDir, 7), 1);
});
