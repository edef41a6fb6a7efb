/**
 * The PostgreSQL store's builds role, measured on a throwaway Debian PostgreSQL cluster
 * (test/helpers/postgres.ts) with a corpus of ../shared (default python, the largest):
 *
 *   - staging a build's snippets: on local disk (what PgBuilds does: a staging file, ids from
 *     the snippet_ids sequence) against in rows (the same batches inserted as jsonb into a table),
 *     alternated, CPU time of this process and wall time;
 *   - finalize: segment computed, written to segment_chunks with the switch-over;
 *   - a second node's first search (segment fetched from the rows to its disk, checked, opened)
 *     against its next searches.
 *
 *   npx tsx scripts/bench-pg-builds.ts [corpus] [rounds]
 *
 * Record `cat /proc/loadavg` beside the figures: on a shared machine wall times are inflated.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Snippet } from '../core/contracts.ts';
import { loggerFrom } from '../core/services.ts';
import { PostgresStore } from '../plugins/store-postgres/store.ts';
import { chunkedCorpus } from '../test/helpers/corpora.ts';
import { startPostgres } from '../test/helpers/postgres.ts';

const corpus = process.argv[2] ?? 'python';
const rounds = Number(process.argv[3] ?? 3);
const BATCH = 250;

const quiet = loggerFrom(() => {});
const ms = (ns: bigint) => Number(ns) / 1e6;
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

async function node(url: string): Promise<{ store: PostgresStore; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'refdesk-bench-pg-'));
  const store = new PostgresStore({}, { env: { dataDir: dir, mode: 'server' }, logger: quiet, clock: { now: () => new Date() }, databaseUrl: url });
  await store.open();
  return { store, dir };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const c = process.cpuUsage();
  const t = process.hrtime.bigint();
  const value = await fn();
  return { value, wall: ms(process.hrtime.bigint() - t), cpu: cpuMs(process.cpuUsage(c)) };
}

const snippets: Snippet[] = chunkedCorpus(corpus);
const pg = await startPostgres();
try {
  const url = await pg.createDatabase('bench');
  const a = await node(url);
  const b = await node(url);
  await a.store.upsertLibrary({ id: '/bench/lib', title: 'bench', source: { kind: 'upload', spec: {} } });
  await a.store.database.query('CREATE TABLE bench_staged (build_id text, seq int, data jsonb, PRIMARY KEY (build_id, seq))');
  console.log(`corpus ${corpus}: ${snippets.length} snippets; load ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`);

  for (let r = 0; r < rounds; r++) {
    // Staging on local disk (PgBuilds.addSnippets), then finalize.
    const buildId = await a.store.beginBuild('/bench/lib', '', null);
    const disk = await timed(async () => {
      for (let i = 0; i < snippets.length; i += BATCH) await a.store.addSnippets(buildId, snippets.slice(i, i + BATCH));
    });
    // The alternative: the same batches as rows.
    const rows = await timed(async () => {
      for (let i = 0; i < snippets.length; i += BATCH) {
        const part = snippets.slice(i, i + BATCH);
        await a.store.database.query('INSERT INTO bench_staged (build_id, seq, data) SELECT $1, * FROM unnest($2::int[], $3::jsonb[])', [
          `r${r}`,
          part.map((_, j) => i + j),
          part.map((s) => JSON.stringify(s)),
        ]);
      }
    });
    const fin = await timed(() => a.store.finalizeBuild(buildId));
    const [info] = await a.store.database.query<{ segment_bytes: string; segment_chunks: number }>('SELECT segment_bytes, segment_chunks FROM builds WHERE id = $1', [buildId]);
    // Node B: first search fetches the segment; the next ones read the open segment.
    b.store.database.changes.emit('change', 'library', '/bench/lib', 'bench');
    const first = await timed(() => b.store.search('/bench/lib', '', 'how do I read a file', 10));
    const warm = await timed(async () => {
      for (let i = 0; i < 20; i++) await b.store.search('/bench/lib', '', 'how do I read a file', 10);
    });
    console.log(
      JSON.stringify({
        round: r,
        stageDisk: { wallMs: Math.round(disk.wall), cpuMs: Math.round(disk.cpu) },
        stageRows: { wallMs: Math.round(rows.wall), cpuMs: Math.round(rows.cpu) },
        finalize: { wallMs: Math.round(fin.wall), cpuMs: Math.round(fin.cpu), segmentBytes: Number(info.segment_bytes), pieces: info.segment_chunks },
        nodeBFirstSearch: { wallMs: Math.round(first.wall), cpuMs: Math.round(first.cpu), hits: first.value.length },
        nodeBWarmSearch: { wallMsEach: +(warm.wall / 20).toFixed(2), cpuMsEach: +(warm.cpu / 20).toFixed(2) },
        fetched: b.store.builds.stats().fetched,
      }),
    );
  }
  console.log(`load ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`);
  for (const n of [a, b]) {
    await n.store.close();
    await rm(n.dir, { recursive: true, force: true });
  }
} finally {
  await pg.stop();
}
