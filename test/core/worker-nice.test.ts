/**
 * A server's ingest worker threads (chunking, segment builds: core/worker-task.ts startWorker)
 * run at a lower priority than its event loop: on Linux a nice value is per thread, so only the
 * worker's own thread is lowered. REFDESK_WORKER_NICE sets it; a bad value is a config error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SERVER_WORKER_NICE, setWorkerNice, startWorker } from '../../core/worker-task.ts';
import { readWorkerNice } from '../../server/env.ts';

/** The nice value of each thread of this process (Linux: /proc/self/task/<tid>/stat, field 19). */
function threadNices(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

test('with a worker nice set (a server sets it at start), a worker thread runs at that priority and every other thread keeps its own', { skip: !existsSync('/proc/self/task') && 'no /proc/self/task' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-worker-nice-'));
  // A worker module that says its own priority and what /proc says of every thread, then waits to be ended.
  const file = join(dir, 'probe.mjs');
  writeFileSync(file, "import { parentPort } from 'node:worker_threads';\nimport { getPriority } from 'node:os';\nparentPort.postMessage(getPriority());\nsetInterval(() => {}, 1000);\n");
  const main = getPriority();
  const started: Array<ReturnType<typeof startWorker>> = [];
  const probe = async (background?: boolean): Promise<{ own: number; nices: number[] }> => {
    const w = startWorker(pathToFileURL(file), {}, undefined, undefined, background === undefined ? {} : { background });
    started.push(w);
    const own = await new Promise<number>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
    return { own, nices: threadNices() };
  };
  try {
    const plain = await probe();
    assert.equal(plain.own, main, 'no nice set: as the main thread');
    setWorkerNice(SERVER_WORKER_NICE);
    const lowered = await probe();
    assert.equal(lowered.own, SERVER_WORKER_NICE);
    assert.equal(lowered.nices.filter((n) => n === SERVER_WORKER_NICE).length, 1, `only the new worker's thread: ${lowered.nices.join(' ')}`);
    assert.equal(getPriority(), main, 'the main thread unchanged');
    // A query thread of the search pool (background: false) keeps the main thread's priority.
    const query = await probe(false);
    assert.equal(query.own, main, 'background: false is not lowered');
  } finally {
    setWorkerNice(0);
    await Promise.all(started.map((w) => w.terminate()));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('REFDESK_WORKER_NICE: unset gives the server default, 0 - 19 are taken, anything else is a config error', () => {
  assert.equal(readWorkerNice({}, SERVER_WORKER_NICE), 10);
  assert.equal(readWorkerNice({ REFDESK_WORKER_NICE: ' ' }, SERVER_WORKER_NICE), 10);
  assert.equal(readWorkerNice({ REFDESK_WORKER_NICE: '0' }, SERVER_WORKER_NICE), 0);
  assert.equal(readWorkerNice({ REFDESK_WORKER_NICE: '19' }, SERVER_WORKER_NICE), 19);
  for (const bad of ['20', '-1', '5.5', 'low', '100']) {
    assert.throws(() => readWorkerNice({ REFDESK_WORKER_NICE: bad }, SERVER_WORKER_NICE), (e: Error & { code?: string }) => e.code === 'config_error' && /REFDESK_WORKER_NICE must be a whole number from 0/.test(e.message), bad);
  }
});
