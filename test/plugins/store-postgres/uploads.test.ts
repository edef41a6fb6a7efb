/**
 * Raw uploads any node can read (issue 24; core/uploads.ts, plugins/store-postgres/uploads.ts,
 * migration 008), on Debian's PostgreSQL server: PgUploads' chunked rows (round trip across two
 * stores, a damaged piece refused, names refused, listing), and two kernels where node A receives
 * an upload (a documentation archive, an OpenAPI spec file), then A's disk is gone, and node B
 * runs the job from the copy in the database; the job's end removes it everywhere.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { sweepUploads, uploadsDir } from '../../../core/uploads.ts';
import { packForUpload } from '../../../server/pack.ts';
import type { PostgresStore } from '../../../plugins/store-postgres/store.ts';
import { SegmentRowsError } from '../../../plugins/store-postgres/segment-rows.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { openTestKernel, type TestKernel } from '../../helpers/test-kernel.ts';
import { freshDatabaseUrl, withStores } from './helpers.ts';

const LEASE = { leaseMs: 4000, heartbeatMs: 300, pollMs: 200 };
const FUTURE = new Date(Date.now() + 86_400_000);

const SPEC = {
  openapi: '3.0.3',
  info: { title: 'Parcel API', version: '1.0.0', description: 'Ship parcels.' },
  paths: { '/parcels': { get: { operationId: 'listParcels', summary: 'List parcels', description: 'Returns every parcel you shipped.', responses: { '200': { description: 'The parcels.' } } } } },
};

describe('raw uploads shared through PostgreSQL', { skip: postgresSkipReason() }, () => {
  test('PgUploads: a file in pieces is fetched whole by another node; unknown, removed and damaged ones are not', async () => {
    await withStores(2, async (_url, a, b) => {
      const dir = mkdtempSync(join(tmpdir(), 'refdesk-pgup-'));
      try {
        const bytes = randomBytes((5 << 19) + 123); // 2.5 MiB and a bit: three pieces
        const src = join(dir, 'in.upload');
        writeFileSync(src, bytes);
        const name = `${randomUUID()}.upload`;
        await a.uploads.putUpload(name, src);
        const [row] = await a.database.query<{ chunks: number; bytes: string }>('SELECT chunks, bytes FROM uploads WHERE name = $1', [name]);
        assert.equal(row.chunks, 3);
        assert.equal(Number(row.bytes), bytes.length);
        const out = join(dir, 'out.upload');
        assert.equal(await b.uploads.fetchUpload(name, out), true);
        assert.ok(readFileSync(out).equals(bytes), 'the same bytes on the other node');
        assert.equal(await b.uploads.fetchUpload(`${randomUUID()}.upload`, join(dir, 'none')), false);
        assert.deepEqual(await b.uploads.listUploads(FUTURE), [name]);
        assert.deepEqual(await b.uploads.listUploads(new Date(0)), []);

        // A damaged piece: refused, nothing left at the path.
        await a.database.query("UPDATE upload_chunks SET bytes = 'x'::bytea WHERE name = $1 AND seq = 1", [name]);
        await assert.rejects(b.uploads.fetchUpload(name, join(dir, 'bad')), SegmentRowsError);
        assert.equal(existsSync(join(dir, 'bad')), false);
        // Put again: replaced whole.
        await a.uploads.putUpload(name, src);
        assert.equal(await b.uploads.fetchUpload(name, join(dir, 'again')), true);
        assert.ok(readFileSync(join(dir, 'again')).equals(bytes));

        await a.uploads.removeUpload(name);
        await a.uploads.removeUpload(name);
        assert.equal(await b.uploads.fetchUpload(name, join(dir, 'gone')), false);
        assert.equal(Number((await a.database.query<{ n: string }>('SELECT count(*) AS n FROM upload_chunks'))[0].n), 0, 'its pieces went with it');
        for (const bad of ['../x', '', 'a/b', '.hidden']) {
          await assert.rejects(a.uploads.putUpload(bad, src), (e: Error & { code?: string }) => e.code === 'invalid_request', bad);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  test("an upload received by node A runs on node B after A's disk is gone; the job's end removes it from the database and B's disk", async () => {
    const url = await freshDatabaseUrl();
    const docs = mkdtempSync(join(tmpdir(), 'refdesk-pgup-docs-'));
    const open: TestKernel[] = [];
    const node = async () => {
      const tk = await openTestKernel({
        prefix: 'refdesk-pgup-node-',
        plugins: [
          { use: 'test/fixtures/store-postgres-test.ts', options: { 'postgres-test': { databaseUrl: url, ...LEASE } } },
          'plugins/chunker-markdown',
          'plugins/source-upload',
          { use: 'plugins/source-openapi', options: { openapi: {} } },
        ],
        sections: { slots: { store: 'postgres-test', chunkers: ['markdown'] } },
      });
      open.push(tk);
      return tk;
    };
    try {
      const a = await node();
      const b = await node();
      // As the upload routes save them: <uuid>.upload (an archive) and <uuid>.json (a spec file) in A's uploads folder.
      mkdirSync(join(docs, 'guide'));
      writeFileSync(join(docs, 'guide', 'README.md'), '# Courier\n\nThe courier guide.\n\n## Dispatch\n\nRun `courier dispatch` to send a parcel.\n');
      mkdirSync(uploadsDir(a.dataDir), { recursive: true });
      const archive = join(uploadsDir(a.dataDir), `${randomUUID()}.upload`);
      writeFileSync(archive, await packForUpload(join(docs, 'guide')));
      const specFile = join(uploadsDir(a.dataDir), `${randomUUID()}.json`);
      writeFileSync(specFile, JSON.stringify(SPEC));
      const up = await addLibrary(a.kernel, { source: 'upload', name: 'courier', spec: { path: archive } });
      const api = await addLibrary(a.kernel, { source: 'openapi', name: 'parcel', spec: { path: specFile } });
      assert.equal((await b.kernel.store.listJobs({ state: 'queued' })).length, 2);

      // Node A's machine is gone with its disk.
      await a.close();
      open.splice(open.indexOf(a), 1);
      assert.equal(existsSync(archive), false);

      for (const { job, library } of [up, api]) {
        const done = await runIngestJob(b.kernel, job.id);
        assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
        assert.ok((await b.kernel.store.getSnippets(library.id, '')).length > 0, `${library.id} is served`);
      }
      assert.ok((await b.kernel.store.getSnippets(up.library.id, '')).some((s) => s.content.includes('courier dispatch')));
      const store = b.kernel.store as PostgresStore;
      assert.deepEqual(await store.uploads.listUploads(FUTURE), [], 'removed from the database once their jobs ended');
      assert.deepEqual(existsSync(uploadsDir(b.dataDir)) ? readdirSync(uploadsDir(b.dataDir)) : [], [], "and from B's uploads folder");
    } finally {
      for (const tk of open) await tk.close();
      rmSync(docs, { recursive: true, force: true });
    }
  });

  test('the start-up sweep removes shared uploads no queued or running job needs, and keeps the ones a job will read', async () => {
    const url = await freshDatabaseUrl();
    const tk = await openTestKernel({
      prefix: 'refdesk-pgup-sweep-',
      plugins: [{ use: 'test/fixtures/store-postgres-test.ts', options: { 'postgres-test': { databaseUrl: url, ...LEASE } } }, 'plugins/chunker-markdown', 'plugins/source-upload'],
      sections: { slots: { store: 'postgres-test', chunkers: ['markdown'] } },
    });
    try {
      const store = tk.kernel.store as PostgresStore;
      mkdirSync(uploadsDir(tk.dataDir), { recursive: true });
      const needed = join(uploadsDir(tk.dataDir), `${randomUUID()}.upload`);
      writeFileSync(needed, 'not read here');
      await addLibrary(tk.kernel, { source: 'upload', name: 'kept', spec: { path: needed } });
      const orphan = join(tk.dataDir, 'orphan.upload');
      writeFileSync(orphan, 'left by a node that died before its add finished');
      const orphanName = `${randomUUID()}.upload`;
      await store.uploads.putUpload(orphanName, orphan);
      const removed = await sweepUploads(tk.kernel, FUTURE);
      assert.ok(removed.includes(orphanName), 'the orphan is swept');
      assert.deepEqual(await store.uploads.listUploads(FUTURE), [needed.split('/').pop()], 'the queued job keeps its upload');
    } finally {
      await tk.close();
    }
  });
});
