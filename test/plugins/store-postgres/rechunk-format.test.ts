/**
 * A served build whose index segment is of another format (written by an older or newer Refdesk:
 * the PostgreSQL store cannot read it, and its snippets live only inside it) is re-chunked from
 * its stored documents when a server starts (PgBuilds.unreadableBuilds, core/rechunk.ts), on
 * Debian's PostgreSQL server.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { RECHUNK_JOB_KIND, queueRechunks } from '../../../core/rechunk.ts';
import { SEGMENT_FORMAT } from '../../../plugins/store-embedded/segment.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { openTestKernel } from '../../helpers/test-kernel.ts';
import { freshDatabaseUrl } from './helpers.ts';

describe('segments of another format on PostgreSQL', { skip: postgresSkipReason() }, () => {
  test('their versions are re-chunked from the stored documents at start; current ones are left alone', async () => {
    const url = await freshDatabaseUrl();
    const docs = mkdtempSync(join(tmpdir(), 'refdesk-format-docs-'));
    const tk = await openTestKernel({
      prefix: 'refdesk-pg-format-',
      plugins: [
        { use: 'test/fixtures/store-postgres-test.ts', options: { 'postgres-test': { databaseUrl: url, leaseMs: 4000, heartbeatMs: 300, pollMs: 200 } } },
        'plugins/chunker-markdown',
        'plugins/source-upload',
      ],
      sections: { slots: { store: 'postgres-test', chunkers: ['markdown'] } },
    });
    const { kernel } = tk;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const name of ['old', 'current']) {
        mkdirSync(join(docs, name));
        writeFileSync(join(docs, name, 'README.md'), `# ${name}\n\nThe ${name} guide.\n\n## Setup\n\nRun \`${name} init\` to start.\n`);
        const { job } = await addLibrary(kernel, { source: 'upload', name, spec: { path: join(docs, name) } });
        assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
      }
      assert.deepEqual(await kernel.store.unreadableBuilds!(), new Set(), 'every build is of this format');
      assert.deepEqual((await queueRechunks(kernel)).queued, [], 'nothing to re-chunk');

      // The served build of /docs/old as an older Refdesk would have recorded it.
      const before = (await kernel.store.listVersions('/docs/old'))[0]!.activeBuildId!;
      await client.query('UPDATE builds SET segment_format = $2 WHERE id = $1', [before, SEGMENT_FORMAT - 1]);
      assert.deepEqual(await kernel.store.unreadableBuilds!(), new Set([before]));

      const plan = await queueRechunks(kernel);
      assert.deepEqual(plan.queued, ['/docs/old']);
      const [job] = (await kernel.store.listJobs({ state: 'queued' })).filter((j) => j.kind === RECHUNK_JOB_KIND);
      assert.ok(job, 'a rechunk job is queued');
      assert.match((await kernel.store.getJobLog(job.id)).map((l) => l.message).join('\n'), /index segment is of a format this version cannot read/);
      assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');

      const after = (await kernel.store.listVersions('/docs/old'))[0]!.activeBuildId!;
      assert.notEqual(after, before, 'a new build serves the version');
      assert.deepEqual(await kernel.store.unreadableBuilds!(), new Set());
      const hits = await kernel.store.search('/docs/old', '', 'old init setup', 5);
      assert.ok(hits.some((h) => /old init/.test(h.snippet.code) || /old init/.test(h.snippet.content)), 'the re-chunked build answers');
      assert.deepEqual((await queueRechunks(kernel)).queued, [], 'and is not queued again');
    } finally {
      await client.end();
      await tk.close();
      rmSync(docs, { recursive: true, force: true });
    }
  });
});
