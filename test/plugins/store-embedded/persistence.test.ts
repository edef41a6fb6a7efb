import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';
import { writeFileAtomic } from '../../../plugins/store-embedded/atomic-write.ts';
import { lockFilePath, readDataLock } from '../../../core/data-lock.ts';
import { RESUMED_LOG_LINE, JOB_LOG_LIMIT } from '../../../plugins/store-embedded/embedded-store.ts';
import { loadSqlJs } from '../../../plugins/store-embedded/sqlite.ts';
import { makeStore, memoryLogger, tempDataDir, withOpenStore } from './helpers.ts';

/** How many files of the data directory's segments this process holds open (Linux /proc). */
function openSegmentFiles(dir: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir) && target.endsWith('.seg')) n++;
    } catch {
      // Closed meanwhile (the directory's own descriptor).
    }
  }
  return n;
}

const root = fileURLToPath(new URL('../../..', import.meta.url));
const DB = 'refdesk.sqlite';

/** Runs a query on the database file as it is on disk (not through the store). */
async function queryFile(file: string, sql: string): Promise<unknown[][]> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(await readFile(file));
  try {
    return db.exec(sql)[0]?.values ?? [];
  } finally {
    db.close();
  }
}

async function withDataDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const data = await tempDataDir();
  try {
    await fn(data.dir);
  } finally {
    await data.remove();
  }
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  const pid = child.pid!;
  await new Promise((resolve) => child.on('exit', resolve));
  return pid;
}

describe('embedded store persistence', () => {
  test('data survives close and reopen', () =>
    withDataDir(async (dir) => {
      const a = makeStore(dir);
      await a.open();
      await a.upsertLibrary({ id: '/docs/koa', title: 'Koa', description: 'Web framework', source: { kind: 'upload', spec: { n: 1 } }, stars: 3 });
      const job = await a.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      await a.updateJob(job.id, { state: 'running', progress: { files: 2 } });
      const b = await a.beginBuild('/docs/koa', '', job.id);
      await a.addSnippets(b, [
        sampleSnippet({ type: 'code', code: 'app.listen()', language: 'js', content: '', sourceUrl: 'https://koajs.com', anchor: 'listen' }),
        sampleSnippet({ content: 'second' }),
      ]);
      await a.finalizeBuild(b);
      const v1 = await a.beginBuild('/docs/koa', 'v1', null);
      await a.addSnippets(v1, [sampleSnippet({ content: 'pinned' })]);
      await a.finalizeBuild(v1);
      await a.updateJob(job.id, { state: 'succeeded' });
      await a.appendJobLog(job.id, 'info', 'done'); // batched: close() must write it
      const before = {
        libraries: await a.listLibraries(),
        versions: await a.listVersions('/docs/koa'),
        snippets: await a.getSnippets('/docs/koa', ''),
        pinned: await a.getSnippets('/docs/koa', 'v1'),
        job: await a.getJob(job.id),
        log: await a.getJobLog(job.id),
      };
      await a.close();

      const again = makeStore(dir);
      await again.open();
      try {
        assert.deepEqual(await again.listLibraries(), before.libraries);
        assert.deepEqual(await again.listVersions('/docs/koa'), before.versions);
        assert.deepEqual(await again.getSnippets('/docs/koa', ''), before.snippets);
        assert.deepEqual(await again.getSnippets('/docs/koa', 'v1'), before.pinned);
        assert.deepEqual(await again.getJob(job.id), before.job);
        assert.deepEqual(await again.getJobLog(job.id), before.log);
        assert.equal(before.log.length, 1);
        assert.equal((await again.search('/docs/koa', '', 'second', 5))[0]?.snippet.content, 'second');
      } finally {
        await again.close();
      }
    }));

  test('opening a store with nothing to recover leaves its file alone (the start does not rewrite it)', () =>
    withDataDir(async (dir) => {
      const a = makeStore(dir);
      await a.open(); // a new file: written at the open
      await a.upsertLibrary({ id: '/docs/koa', title: 'Koa', description: '', source: { kind: 'upload', spec: {} } });
      await a.close();
      const file = join(dir, DB);
      const before = await stat(file);
      const again = makeStore(dir, 'server', {}, { port: 5000 });
      await again.open();
      try {
        const after = await stat(file);
        assert.equal(after.ino, before.ino, 'not replaced');
        assert.equal(after.mtimeMs, before.mtimeMs, 'not written');
        assert.equal((await again.getLibrary('/docs/koa'))?.title, 'Koa');
      } finally {
        await again.close();
      }
    }));

  test('the database file is replaced atomically and no temporary files are left', () =>
    withDataDir(async (dir) => {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, `${DB}.tmp-999999`), 'partial write of a crashed process');
      const store = makeStore(dir);
      await store.open();
      try {
        assert.deepEqual((await readdir(dir)).sort(), ['refdesk.lock', DB], 'leftover temp file removed at open');
        await store.upsertLibrary({ id: '/docs/a', title: 'A', source: { kind: 'upload', spec: {} } });
        const first = await stat(join(dir, DB));
        assert.deepEqual(await queryFile(join(dir, DB), 'SELECT id FROM libraries'), [['/docs/a']]);
        await store.upsertLibrary({ id: '/docs/b', title: 'B', source: { kind: 'upload', spec: {} } });
        const second = await stat(join(dir, DB));
        assert.notEqual(second.ino, first.ino, 'a new file was renamed over the old one');
        assert.deepEqual(await queryFile(join(dir, DB), 'SELECT id FROM libraries ORDER BY id'), [['/docs/a'], ['/docs/b']]);
        // Concurrent durable calls are serialized and all land in the file.
        await Promise.all(Array.from({ length: 10 }, (_, i) => store.upsertLibrary({ id: `/docs/c${i}`, title: 'C', source: { kind: 'upload', spec: {} } })));
        assert.deepEqual(await queryFile(join(dir, DB), 'SELECT COUNT(*) FROM libraries'), [[12]]);
        assert.deepEqual((await readdir(dir)).sort(), ['refdesk.lock', DB]);
      } finally {
        await store.close();
      }
      assert.deepEqual(await readdir(dir), [DB]);
    }));

  test('writeFileAtomic replaces a file and cleans up when it cannot write', () =>
    withDataDir(async (dir) => {
      await mkdir(dir, { recursive: true });
      const file = join(dir, 'f.bin');
      await writeFileAtomic(file, new Uint8Array([1, 2, 3]));
      await writeFileAtomic(file, new Uint8Array([4, 5]));
      assert.deepEqual([...(await readFile(file))], [4, 5]);
      await assert.rejects(writeFileAtomic(join(dir, 'missing-dir', 'f.bin'), new Uint8Array([1])));
      assert.deepEqual(await readdir(dir), ['f.bin']);
    }));

  test('addSnippets is staged in a file, appendJobLog batched until the flush timer writes it', () =>
    withDataDir((dir) =>
      withOpenStore(makeStore(dir, 'writer', { flushIntervalMs: 200 }), async (store) => {
        await store.upsertLibrary({ id: '/docs/a', title: 'A', source: { kind: 'upload', spec: {} } });
        const job = await store.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' });
        const b = await store.beginBuild('/docs/a', '', job.id);
        await store.addSnippets(b, Array.from({ length: 50 }, () => sampleSnippet()));
        await store.appendJobLog(job.id, 'info', 'line');
        const file = join(dir, DB);
        assert.deepEqual(await queryFile(file, 'SELECT COUNT(*) FROM job_logs'), [[0]], 'not written yet');
        // The staged snippets are in the build's staging file (build-pack.ts), never in sql.js.
        assert.equal(readFileSync(join(dir, 'segments', `${b}.staging`), 'utf8').trim().split('\n').length, 50);
        const deadline = Date.now() + 3000;
        while ((await queryFile(file, 'SELECT COUNT(*) FROM job_logs'))[0][0] !== 1) {
          assert.ok(Date.now() < deadline, 'the flush timer wrote the job log line');
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.deepEqual(await queryFile(file, 'SELECT COUNT(*) FROM snippets'), [[0]]);
      }),
    ));

  test('a second writer gets store_locked naming the process that holds the data directory', () =>
    withDataDir(async (dir) => {
      const server = makeStore(dir, 'server', {}, { port: 4321 });
      await server.open();
      try {
        assert.deepEqual(await readDataLock(dir), {
          pid: process.pid,
          mode: 'server',
          port: 4321,
          startedAt: (await readDataLock(dir))!.startedAt,
        });
        const writer = makeStore(dir, 'writer');
        await assert.rejects(writer.open(), (err: Error & { code?: string }) => {
          assert.equal(err.code, 'store_locked');
          assert.match(err.message, new RegExp(`pid ${process.pid}\\b`));
          assert.match(err.message, /server/);
          assert.match(err.message, /port 4321/);
          assert.match(err.message, /HTTP API/);
          return true;
        });
        await assert.rejects(makeStore(dir, 'server', {}, { port: 9999 }).open(), { code: 'store_locked' });
      } finally {
        await server.close();
      }
      assert.equal(existsSync(lockFilePath(dir)), false, 'close() removed the lock');
      assert.equal(await readDataLock(dir), null);

      const writer = makeStore(dir, 'writer');
      await writer.open();
      try {
        const other = makeStore(dir, 'writer');
        await assert.rejects(other.open(), (err: Error & { code?: string }) => {
          assert.equal(err.code, 'store_locked');
          assert.match(err.message, new RegExp(`pid ${process.pid}\\b`));
          assert.match(err.message, /mode writer/);
          return true;
        });
      } finally {
        await writer.close();
      }
    }));

  test('a stale lock (its process has exited) is taken over', () =>
    withDataDir(async (dir) => {
      const pid = await deadPid();
      await mkdir(dir, { recursive: true });
      await writeFile(lockFilePath(dir), JSON.stringify({ pid, mode: 'server', port: 3000, startedAt: '2020-01-01T00:00:00.000Z' }));
      assert.equal(await readDataLock(dir), null, 'a stale lock is reported as no lock');
      const logger = memoryLogger();
      const store = makeStore(dir, 'writer', {}, { logger });
      await store.open();
      try {
        const lock = JSON.parse(await readFile(lockFilePath(dir), 'utf8'));
        assert.equal(lock.pid, process.pid);
        assert.equal(lock.mode, 'writer');
        assert.ok(logger.entries.some((e) => e.level === 'warn' && /stale lock/.test(e.message) && e.fields?.pid === pid));
      } finally {
        await store.close();
      }
      assert.equal(existsSync(lockFilePath(dir)), false);
    }));

  test('close() leaves a lock that is not its own', () =>
    withDataDir(async (dir) => {
      const store = makeStore(dir);
      await store.open();
      const foreign = JSON.stringify({ pid: process.pid, mode: 'writer', startedAt: 'someone else' });
      await writeFile(lockFilePath(dir), foreign);
      await store.close();
      assert.equal(await readFile(lockFilePath(dir), 'utf8'), foreign);
    }));

  test('reader mode sees the data, takes no lock and refuses writes', () =>
    withDataDir(async (dir) => {
      const writer = makeStore(dir, 'server', {}, { port: 4000 });
      await writer.open();
      await writer.upsertLibrary({ id: '/docs/koa', title: 'Koa', source: { kind: 'upload', spec: {} } });
      const b = await writer.beginBuild('/docs/koa', '', null);
      await writer.addSnippets(b, [sampleSnippet({ content: 'readable snippet' })]);
      await writer.finalizeBuild(b);
      const job = await writer.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
      const lockBefore = await readFile(lockFilePath(dir), 'utf8');
      try {
        const reader = makeStore(dir, 'reader');
        await reader.open(); // while the server holds the lock
        try {
          assert.equal((await reader.getLibrary('/docs/koa'))?.state, 'finalized');
          assert.deepEqual((await reader.getSnippets('/docs/koa', '')).map((s) => s.content), ['readable snippet']);
          assert.equal((await reader.search('/docs/koa', '', 'readable', 5)).length, 1);
          assert.equal((await reader.getJob(job.id))?.state, 'queued', 'no recovery in reader mode');
          const readOnly = { code: 'store_locked', message: /read-only/ };
          await assert.rejects(reader.upsertLibrary({ id: '/docs/x', title: 'X', source: { kind: 'upload', spec: {} } }), readOnly);
          await assert.rejects(reader.deleteLibrary('/docs/koa'), readOnly);
          await assert.rejects(reader.beginBuild('/docs/koa', '', null), readOnly);
          await assert.rejects(reader.addSnippets(b, []), readOnly);
          await assert.rejects(reader.finalizeBuild(b), readOnly);
          await assert.rejects(reader.failBuild(b), readOnly);
          await assert.rejects(reader.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' }), readOnly);
          await assert.rejects(reader.updateJob(job.id, { state: 'running' }), readOnly);
          await assert.rejects(reader.appendJobLog(job.id, 'info', 'x'), readOnly);
        } finally {
          await reader.close();
        }
        assert.equal(await readFile(lockFilePath(dir), 'utf8'), lockBefore, 'the reader left the lock alone');
      } finally {
        await writer.close();
      }
    }));

  test('reader mode on a data directory without a database sees an empty catalog and writes nothing', () =>
    withDataDir(async (dir) => {
      const reader = makeStore(dir, 'reader');
      await reader.open();
      try {
        assert.deepEqual(await reader.listLibraries(), []);
        assert.deepEqual(await reader.listJobs(), []);
        await assert.rejects(reader.getSnippets('/docs/koa', ''), { code: 'library_not_found' });
      } finally {
        await reader.close();
      }
      assert.equal(existsSync(dir), false);
    }));

  test('crash recovery: staged build discarded, served build kept, unfinished jobs queued to run again', () =>
    withDataDir(async (dir) => {
      const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/plugins/store-embedded/crash-writer.ts', dir], {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, NODE_NO_WARNINGS: '1' },
      });
      assert.equal(child.status, 137, child.stderr);
      const ids = JSON.parse(child.stdout.trim()) as { buildA: string; buildB: string; jobA: string; jobB: string; jobNever: string; pid: number };
      const file = join(dir, DB);
      // The crash left the staged build on disk, and a lock whose process is gone.
      const stagingB = join(dir, 'segments', `${ids.buildB}.staging`);
      assert.equal(readFileSync(stagingB, 'utf8').trim().split('\n').length, 3);
      assert.equal(JSON.parse(await readFile(lockFilePath(dir), 'utf8')).pid, ids.pid);
      assert.equal(await readDataLock(dir), null);

      const store = makeStore(dir, 'server', {}, { port: 5000 });
      await store.open();
      try {
        assert.deepEqual((await store.getSnippets('/docs/crash', '')).map((s) => s.content), ['alpha one', 'alpha two']);
        const version = await store.getVersion('/docs/crash', '');
        assert.equal(version?.activeBuildId, ids.buildA);
        assert.equal(version?.totalSnippets, 2);
        assert.equal((await store.getLibrary('/docs/crash'))?.state, 'finalized');

        // The running job is queued again (a runner claims it and builds anew), with a log line.
        const jobB = await store.getJob(ids.jobB);
        assert.equal(jobB?.state, 'queued');
        assert.equal(jobB?.error, null);
        assert.equal(jobB?.finishedAt, null);
        assert.deepEqual((await store.getJobLog(ids.jobB)).map((l) => l.message), ['read 3 snippets', RESUMED_LOG_LINE]);
        assert.equal((await store.getJob(ids.jobA))?.state, 'succeeded');
        assert.equal((await store.getJob(ids.jobNever))?.state, 'queued');
        assert.equal((await store.getLibrary('/docs/never'))?.state, 'processing');
        assert.equal((await store.claimJob(ids.jobB))?.state, 'running');

        // Recovery was persisted: B's snippets are gone from the file and B is marked failed.
        assert.equal(existsSync(stagingB), false, 'the staging file of the discarded build is removed');
        assert.deepEqual(await queryFile(file, `SELECT state FROM builds WHERE id = '${ids.buildB}'`), [['failed']]);
        assert.deepEqual(await queryFile(file, `SELECT state FROM jobs WHERE id = '${ids.jobB}'`), [['running']]);
        assert.equal(JSON.parse(await readFile(lockFilePath(dir), 'utf8')).pid, process.pid);
      } finally {
        await store.close();
      }
    }));

  test('job logs keep the last lines of each job', () =>
    withDataDir((dir) =>
      withOpenStore(makeStore(dir), async (store) => {
        await store.upsertLibrary({ id: '/docs/a', title: 'A', source: { kind: 'upload', spec: {} } });
        const job = await store.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' });
        const other = await store.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' });
        await store.appendJobLog(other.id, 'info', 'other job');
        for (let i = 1; i <= JOB_LOG_LIMIT + 5; i++) await store.appendJobLog(job.id, 'info', `line ${i}`);
        const log = await store.getJobLog(job.id);
        assert.equal(log.length, JOB_LOG_LIMIT);
        assert.equal(log[0].message, 'line 6');
        assert.equal(log.at(-1)?.message, `line ${JOB_LOG_LIMIT + 5}`);
        assert.equal((await store.getJobLog(other.id)).length, 1);
      }),
    ));

  test('search stays correct when the index cache holds a single build', () =>
    withDataDir((dir) =>
      withOpenStore(makeStore(dir, 'writer', { indexCacheSize: 1 }), async (store) => {
        for (const [id, word] of [['/docs/a', 'aardvark'], ['/docs/b', 'bumblebee']]) {
          await store.upsertLibrary({ id, title: id, source: { kind: 'upload', spec: {} } });
          const b = await store.beginBuild(id, '', null);
          await store.addSnippets(b, [sampleSnippet({ content: `about the ${word}` })]);
          await store.finalizeBuild(b);
        }
        for (let i = 0; i < 3; i++) {
          assert.equal((await store.search('/docs/a', '', 'aardvark', 5)).length, 1);
          assert.equal((await store.search('/docs/b', '', 'bumblebee', 5)).length, 1);
          assert.equal((await store.search('/docs/b', '', 'aardvark', 5)).length, 0);
          assert.ok(openSegmentFiles(dir) <= 1, 'the count bounds the segment files held open');
        }
        // Past the count a segment's file is closed but its decoded index kept (memory allowing):
        // each segment was read and decoded once, not at every alternation.
        assert.deepEqual(store.segmentStats, { opened: 2, rebuilt: 0 });
        // A file replaced under its name (the same bytes, another file) is opened anew, not resumed.
        for (const f of await readdir(join(dir, 'segments'))) {
          if (f.endsWith('.seg')) await writeFileAtomic(join(dir, 'segments', f), [await readFile(join(dir, 'segments', f))]);
        }
        assert.equal((await store.search('/docs/a', '', 'aardvark', 5)).length, 1);
        assert.deepEqual(store.segmentStats, { opened: 3, rebuilt: 0 });
        // A rebuild replaces the cached build.
        const b = await store.beginBuild('/docs/b', '', null);
        await store.addSnippets(b, [sampleSnippet({ content: 'now about the aardvark' })]);
        await store.finalizeBuild(b);
        assert.equal((await store.search('/docs/b', '', 'bumblebee', 5)).length, 0);
        assert.equal((await store.search('/docs/b', '', 'aardvark', 5)).length, 1);
        assert.equal((await store.search('/docs/a', '', 'aardvark', 5)).length, 1);
        assert.deepEqual(store.segmentStats, { opened: 4, rebuilt: 0 });
      }),
    ));

  test('a database written by a newer refdesk is refused', () =>
    withDataDir(async (dir) => {
      const store = makeStore(dir);
      await store.open();
      await store.close();
      const SQL = await loadSqlJs();
      const db = new SQL.Database(await readFile(join(dir, DB)));
      db.run("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
      await writeFile(join(dir, DB), db.export());
      db.close();
      await assert.rejects(makeStore(dir).open(), { code: 'config_error', message: /newer refdesk/ });
      assert.equal(existsSync(lockFilePath(dir)), false, 'a failed open releases the lock');
    }));
});
