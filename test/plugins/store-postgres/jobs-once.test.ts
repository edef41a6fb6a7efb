/**
 * Start-up jobs queued once per deployment (issue 24): several nodes starting together each find
 * the same re-chunking (or embedding) work; PgJobs.createJobOnce (migration 008's unique index
 * and ON CONFLICT DO NOTHING) queues it once. On Debian's PostgreSQL server: the store method
 * under concurrent calls from two stores, and two kernels whose chunking configuration changed
 * running queueRechunks at the same moment.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { RECHUNK_JOB_KIND, queueRechunks } from '../../../core/rechunk.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { openTestKernel, type TestKernel } from '../../helpers/test-kernel.ts';
import { freshDatabaseUrl, withStores } from './helpers.ts';

const LEASE = { leaseMs: 4000, heartbeatMs: 300, pollMs: 200 };
const LIB = { id: '/acme/once', title: 'Once', description: '', branch: '', source: { kind: 'git', spec: { url: 'https://example.com/once.git' } } };

describe('start-up jobs queued once across nodes', { skip: postgresSkipReason() }, () => {
  test('createJobOnce: of 20 calls at once on two stores, one queues the job; none while a job of the version is queued or running; again once it ended', async () => {
    await withStores(2, async (_url, a, b) => {
      await a.upsertLibrary(LIB);
      const input = { libraryId: LIB.id, version: '', kind: RECHUNK_JOB_KIND };
      const made = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).createJobOnce!(input)));
      const jobs = made.filter((j) => j !== null);
      assert.equal(jobs.length, 1, 'one job queued');
      assert.equal((await a.listJobs({ libraryId: LIB.id })).length, 1);
      // Running (claimed by B): still none.
      assert.ok(await b.claimJob(jobs[0]!.id));
      assert.equal(await a.createJobOnce!(input), null);
      assert.equal(await a.createJobOnce!({ ...input, kind: 'embed' }), null, 'any kind of job of the version counts');
      // Another version is another job.
      assert.ok(await a.createJobOnce!({ ...input, version: 'v2' }));
      await b.updateJob(jobs[0]!.id, { state: 'succeeded' });
      assert.ok(await a.createJobOnce!(input), 'queued again once the job ended');
      // A plain job of the version (an add) also holds it off.
      const other = await b.createJob({ libraryId: LIB.id, version: 'v3', kind: 'git' });
      assert.equal(other.state, 'queued');
      assert.equal(await a.createJobOnce!({ ...input, version: 'v3' }), null);
      await assert.rejects(a.createJobOnce!({ ...input, libraryId: '/acme/none' }), (e: Error & { code?: string }) => e.code === 'library_not_found');
      // createJob is unchanged: two adds of one version queue two jobs.
      await b.createJob({ libraryId: LIB.id, version: 'v3', kind: 'git' });
      assert.equal((await a.listJobs({ libraryId: LIB.id })).filter((j) => j.version === 'v3').length, 2);
    });
  });

  test('two nodes whose chunking changed start together: each version gets one rechunk job', async () => {
    const url = await freshDatabaseUrl();
    const docs = mkdtempSync(join(tmpdir(), 'refdesk-once-docs-'));
    const kernels: TestKernel[] = [];
    const node = async (maxInfoTokens: number) => {
      const tk = await openTestKernel({
        prefix: 'refdesk-pg-once-',
        plugins: [
          { use: 'test/fixtures/store-postgres-test.ts', options: { 'postgres-test': { databaseUrl: url, ...LEASE } } },
          { use: 'plugins/chunker-markdown', options: { markdown: { maxInfoTokens } } },
          'plugins/source-upload',
        ],
        sections: { slots: { store: 'postgres-test', chunkers: ['markdown'] } },
      });
      kernels.push(tk);
      return tk.kernel;
    };
    try {
      const names = ['alpha', 'beta', 'gamma'];
      const first = await node(400);
      for (const name of names) {
        mkdirSync(join(docs, name));
        writeFileSync(join(docs, name, 'README.md'), `# ${name}\n\nThe ${name} guide.\n\n## Setup\n\nRun \`${name} init\`.\n`);
        const { job } = await addLibrary(first, { source: 'upload', name, spec: { path: join(docs, name) } });
        assert.equal((await runIngestJob(first, job.id)).state, 'succeeded');
      }
      // Two nodes with another chunking start at the same moment.
      const [a, b] = [await node(300), await node(300)];
      const [pa, pb] = await Promise.all([queueRechunks(a), queueRechunks(b)]);
      const jobs = (await a.store.listJobs({ state: 'queued' })).filter((j) => j.kind === RECHUNK_JOB_KIND);
      assert.equal(jobs.length, names.length, `one rechunk job per version, not ${jobs.length}`);
      assert.deepEqual(new Set(jobs.map((j) => j.libraryId)), new Set(names.map((n) => `/docs/${n}`)));
      assert.deepEqual([...pa.queued, ...pb.queued].sort(), names.map((n) => `/docs/${n}`).sort(), 'each version reported queued by the node that queued it');
    } finally {
      for (const tk of kernels) await tk.close();
      rmSync(docs, { recursive: true, force: true });
    }
  });
});
