/**
 * Build vectors without pgvector (plugins/store-postgres/vectors.ts PgRowVectors), measured on a
 * throwaway Debian PostgreSQL cluster (which has no `vector` extension): `count` vectors of
 * `dims` floats written through node A (rows of `vector_chunks`), then on node B the first
 * question (record read, matrix fetched to its cache, checked, opened) against warm questions
 * (from memory). Wall time and this process's CPU time.
 *
 *   npx tsx scripts/bench-pg-vectors.ts [count] [dims] [warm questions]
 *
 * The default is python's size (11,788 snippets) at 256 dimensions. Record `cat /proc/loadavg`
 * beside the figures: on a shared machine wall times are inflated.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loggerFrom } from '../core/services.ts';
import { sampleSnippet } from '../core/testing/store-contract.ts';
import { PostgresStore } from '../plugins/store-postgres/store.ts';
import { startPostgres } from '../test/helpers/postgres.ts';

const count = Number(process.argv[2] ?? 11788);
const dims = Number(process.argv[3] ?? 256);
const warm = Number(process.argv[4] ?? 50);

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').trim();
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const c = process.cpuUsage();
  const t = performance.now();
  const value = await fn();
  return { value, wall: performance.now() - t, cpu: cpuMs(process.cpuUsage(c)) };
}

/** A deterministic vector (a small LCG). */
function vec(i: number): Float32Array {
  let s = (i + 1) * 2654435761;
  const out = new Float32Array(dims);
  for (let d = 0; d < dims; d++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out[d] = s / 2147483648 - 0.5;
  }
  return out;
}

const pg = await startPostgres();
const dirs: string[] = [];
async function node(url: string): Promise<PostgresStore> {
  const dir = await mkdtemp(join(tmpdir(), 'refdesk-bench-vec-'));
  dirs.push(dir);
  const store = new PostgresStore({}, { env: { dataDir: dir, mode: 'server' }, logger: loggerFrom(() => {}), clock: { now: () => new Date() }, databaseUrl: url });
  await store.open();
  return store;
}
try {
  const url = await pg.createDatabase('bench');
  const [a, b] = [await node(url), await node(url)];
  await a.upsertLibrary({ id: '/bench/vec', title: 'vec', source: { kind: 'upload', spec: {} } });
  const buildId = await a.beginBuild('/bench/vec', '', null);
  for (let at = 0; at < count; at += 500) {
    await a.addSnippets(buildId, Array.from({ length: Math.min(500, count - at) }, (_, i) => sampleSnippet({ content: `snippet ${at + i}` })));
  }
  await a.finalizeBuild(buildId);
  const vectors = Array.from({ length: count }, (_, i) => vec(i));
  console.log(`${count} x ${dims} vectors (${((count * dims * 4) / 1e6).toFixed(1)} MB); load ${loadavg()}`);
  const write = await timed(async () => (await a.buildVectors!())!.write(buildId, { model: 'bench', dimensions: dims, hashes: vectors.map((_, i) => String(i)), vectors }));
  console.log(`write through A: ${write.wall.toFixed(0)} ms wall, ${write.cpu.toFixed(0)} ms CPU`);
  const stored = (await b.buildVectors!())!;
  const first = await timed(async () => {
    await stored.meta(buildId);
    return stored.query(buildId, vec(7), 50);
  });
  console.log(`B's first question (record, fetch, check, open): ${first.wall.toFixed(0)} ms wall, ${first.cpu.toFixed(0)} ms CPU; top hit row ${first.value[0]?.position}`);
  const times: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < warm; i++) {
    const t = await timed(async () => {
      await stored.meta(buildId);
      return stored.query(buildId, vec(1000 + i), 50);
    });
    times.push(t.wall);
    cpus.push(t.cpu);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  console.log(`B's warm questions (${warm}): median ${median(times).toFixed(1)} ms wall, ${median(cpus).toFixed(1)} ms CPU; load ${loadavg()}`);
  await a.close();
  await b.close();
} finally {
  await pg.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
}
