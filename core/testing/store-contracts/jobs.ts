/**
 * The job role of the Store contract (JobStore): the queue, claims and job logs. Jobs belong to
 * catalog libraries.
 */
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { CatalogStore, JobStore } from '../../contracts.ts';
import { ISO_MS, errorCode, lib, storeTests, type MakeStore } from './shared.ts';

export function runJobStoreContract(name: string, makeStore: MakeStore<CatalogStore & JobStore>): void {
  const storeTest = storeTests(makeStore);
  describe(`Store contract, jobs: ${name}`, () => {
    storeTest('createJob and updateJob keep state, progress, error and timestamps', async (store) => {
      await store.upsertLibrary(lib('/docs/koa'));
      const job = await store.createJob({ libraryId: '/docs/koa', version: 'v1', kind: 'upload' });
      assert.equal(typeof job.id, 'string');
      assert.equal(job.libraryId, '/docs/koa');
      assert.equal(job.version, 'v1');
      assert.equal(job.kind, 'upload');
      assert.equal(job.state, 'queued');
      assert.deepEqual(job.progress, {});
      assert.equal(job.error, null);
      assert.match(job.createdAt, ISO_MS);
      assert.equal(job.startedAt, null);
      assert.equal(job.finishedAt, null);
      assert.deepEqual(await store.getJob(job.id), job);

      const running = await store.updateJob(job.id, { state: 'running' });
      assert.equal(running.state, 'running');
      assert.match(running.startedAt ?? '', ISO_MS);
      assert.equal(running.finishedAt, null);

      const progressed = await store.updateJob(job.id, { progress: { files: 3, bytes: 1200, message: 'reading' } });
      assert.equal(progressed.state, 'running');
      assert.equal(progressed.startedAt, running.startedAt);
      assert.deepEqual(progressed.progress, { files: 3, bytes: 1200, message: 'reading' });

      const failed = await store.updateJob(job.id, { state: 'failed', error: { code: 'no_documentation', message: 'No docs found.' } });
      assert.equal(failed.state, 'failed');
      assert.deepEqual(failed.error, { code: 'no_documentation', message: 'No docs found.' });
      assert.match(failed.finishedAt ?? '', ISO_MS);
      assert.equal(failed.startedAt, running.startedAt);
      assert.deepEqual(await store.getJob(job.id), failed);

      const other = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      await store.updateJob(other.id, { state: 'running' });
      const done = await store.updateJob(other.id, { state: 'succeeded', progress: { snippets: 12 } });
      assert.equal(done.state, 'succeeded');
      assert.equal(done.error, null);
      assert.equal(done.progress.snippets, 12);
      assert.match(done.finishedAt ?? '', ISO_MS);
    });

    storeTest('job logs keep lines in order with increasing seq', async (store) => {
      await store.upsertLibrary(lib('/docs/koa'));
      const job = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      assert.deepEqual(await store.getJobLog(job.id), []);
      await store.appendJobLog(job.id, 'info', 'started');
      await store.appendJobLog(job.id, 'warn', 'skipped docs/big.bin: binary');
      await store.appendJobLog(job.id, 'error', 'failed');
      const log = await store.getJobLog(job.id);
      assert.deepEqual(
        log.map((l) => [l.level, l.message]),
        [['info', 'started'], ['warn', 'skipped docs/big.bin: binary'], ['error', 'failed']],
      );
      for (let i = 1; i < log.length; i++) assert.ok(log[i].seq > log[i - 1].seq);
      for (const l of log) assert.match(l.at, ISO_MS);
    });

    storeTest('listJobs lists newest first and filters by library, state and limit', async (store) => {
      await store.upsertLibrary(lib('/docs/a'));
      await store.upsertLibrary(lib('/docs/b'));
      const a1 = await store.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' });
      const b1 = await store.createJob({ libraryId: '/docs/b', version: '', kind: 'upload' });
      const a2 = await store.createJob({ libraryId: '/docs/a', version: 'v1', kind: 'upload' });
      await store.updateJob(a1.id, { state: 'running' });
      await store.updateJob(a1.id, { state: 'succeeded' });

      assert.deepEqual((await store.listJobs()).map((j) => j.id), [a2.id, b1.id, a1.id]);
      assert.deepEqual((await store.listJobs({ libraryId: '/docs/a' })).map((j) => j.id), [a2.id, a1.id]);
      assert.deepEqual((await store.listJobs({ state: 'queued' })).map((j) => j.id), [a2.id, b1.id]);
      assert.deepEqual((await store.listJobs({ libraryId: '/docs/a', state: 'succeeded' })).map((j) => j.id), [a1.id]);
      assert.deepEqual((await store.listJobs({ limit: 2 })).map((j) => j.id), [a2.id, b1.id]);
      assert.deepEqual(await store.listJobs({ libraryId: '/docs/none' }), []);
    });

    storeTest('claimJob takes a queued job once: queued -> running; null when not queued or unknown', async (store) => {
      await store.upsertLibrary(lib('/docs/koa'));
      const job = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      // Twenty claims at once: exactly one wins.
      const claims = await Promise.all(Array.from({ length: 20 }, () => store.claimJob(job.id)));
      const won = claims.filter((c) => c !== null);
      assert.equal(won.length, 1);
      assert.equal(won[0]!.id, job.id);
      assert.equal(won[0]!.state, 'running');
      assert.match(won[0]!.startedAt ?? '', ISO_MS);
      assert.equal(won[0]!.finishedAt, null);
      assert.deepEqual(await store.getJob(job.id), won[0]);
      assert.equal(await store.claimJob(job.id), null);
      await store.updateJob(job.id, { state: 'succeeded' });
      assert.equal(await store.claimJob(job.id), null);
      assert.equal((await store.getJob(job.id))?.state, 'succeeded');
      assert.equal(await store.claimJob('no-such-job'), null);
      // A job queued again (e.g. after a restart) can be claimed again.
      const other = await store.createJob({ libraryId: '/docs/koa', version: 'v1', kind: 'upload' });
      await store.updateJob(other.id, { state: 'running' });
      assert.equal(await store.claimJob(other.id), null);
      await store.updateJob(other.id, { state: 'queued' });
      assert.equal((await store.claimJob(other.id))?.state, 'running');
    });

    storeTest('unknown job ids: getJob is null, updates and logs are refused', async (store) => {
      assert.equal(await store.getJob('no-such-job'), null);
      await assert.rejects(store.updateJob('no-such-job', { state: 'running' }), errorCode('invalid_request'));
      await assert.rejects(store.appendJobLog('no-such-job', 'info', 'x'), errorCode('invalid_request'));
      await assert.rejects(store.getJobLog('no-such-job'), errorCode('invalid_request'));
      await assert.rejects(store.createJob({ libraryId: '/docs/missing', version: '', kind: 'upload' }), errorCode('library_not_found'));
    });
  });
}
