/**
 * The served-build re-read of the PostgreSQL store's serving path (plugins/store-postgres/
 * segment-cache.ts), measured on a throwaway Debian PostgreSQL cluster: `libraries` small
 * libraries, requests (segmentFile, as the search workers ask, then a search) sent one after
 * another round-robin for `seconds` per round, alternating the old re-read (every `pollMs`,
 * 500 ms) and the new one (trust the change feed, re-read after 60 s). Prints this process's CPU
 * time per request and the `versions` queries made.
 *
 *   npx tsx scripts/bench-pg-served.ts [libraries] [seconds] [rounds] [requests per second]
 *
 * Without a rate, requests go as fast as they can (the re-read is then a small share of them);
 * with one (e.g. 40), they are paced as a lightly loaded node's are, where before nearly every
 * request of a version last asked more than 500 ms ago paid a query.
 *
 * Record `cat /proc/loadavg` beside the figures: on a shared machine wall times are inflated.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loggerFrom } from '../core/services.ts';
import { sampleSnippet } from '../core/testing/store-contract.ts';
import { SERVED_BUILD_REREAD_MS } from '../plugins/store-postgres/segment-cache.ts';
import { PostgresStore } from '../plugins/store-postgres/store.ts';
import { startPostgres } from '../test/helpers/postgres.ts';

const libraries = Number(process.argv[2] ?? 20);
const seconds = Number(process.argv[3] ?? 3);
const rounds = Number(process.argv[4] ?? 3);
const rate = Number(process.argv[5] ?? 0);
const OLD_REREAD_MS = 500; // the default pollMs the served build was re-read at before

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').trim();
const pg = await startPostgres();
const dir = await mkdtemp(join(tmpdir(), 'refdesk-bench-served-'));
try {
  const url = await pg.createDatabase('bench');
  const store = new PostgresStore({}, { env: { dataDir: dir, mode: 'server' }, logger: loggerFrom(() => {}), clock: { now: () => new Date() }, databaseUrl: url });
  await store.open();
  const ids: string[] = [];
  for (let i = 0; i < libraries; i++) {
    const id = `/bench/lib${i}`;
    await store.upsertLibrary({ id, title: id, source: { kind: 'upload', spec: {} } });
    const b = await store.beginBuild(id, '', null);
    await store.addSnippets(b, [sampleSnippet({ content: `the quokka number ${i} lives here` }), sampleSnippet({ content: 'other prose' })]);
    await store.finalizeBuild(b);
    ids.push(id);
  }
  const cache = store.builds.cache;
  console.log(`${libraries} libraries, ${seconds} s per round, ${rate > 0 ? `${rate} requests per second` : 'unpaced'}, load ${loadavg()}`);
  const results: Record<string, Array<{ perRequestUs: number; queriesPer1000: number; requests: number }>> = { before: [], after: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of ['before', 'after'] as const) {
      cache.servedRereadMs = mode === 'before' ? OLD_REREAD_MS : SERVED_BUILD_REREAD_MS;
      for (const id of ids) cache.forgetLibrary(id); // both modes start from a cold served-build memory
      for (const id of ids) await store.segmentFile!(id, '');
      const reads = cache.servedReads;
      const c = process.cpuUsage();
      const end = Date.now() + seconds * 1000;
      let n = 0;
      const started = Date.now();
      while (Date.now() < end) {
        if (rate > 0) {
          const wait = started + (n * 1000) / rate - Date.now();
          if (wait > 0) {
            await new Promise((r) => setTimeout(r, wait));
          }
        }
        const id = ids[n % ids.length];
        await store.segmentFile!(id, '');
        await store.search(id, '', 'quokka', 5);
        n++;
      }
      const cpu = process.cpuUsage(c);
      const q = cache.servedReads - reads;
      const row = { perRequestUs: Math.round((cpu.user + cpu.system) / n), queriesPer1000: Math.round((q * 1000) / n), requests: n };
      results[mode].push(row);
      console.log(`round ${r + 1} ${mode.padEnd(6)}: ${row.perRequestUs} µs CPU per request, ${q} versions queries for ${n} requests; load ${loadavg()}`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const mode of ['before', 'after'] as const) {
    console.log(`${mode}: median ${median(results[mode].map((x) => x.perRequestUs))} µs CPU per request, ${median(results[mode].map((x) => x.queriesPer1000))} queries per 1000 requests`);
  }
  await store.close();
} finally {
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
