/**
 * Event-loop stalls during an in-process ingest (issue 17): ingests corpora of ../shared/corpora
 * through the real path (upload source -> chunker -> embedded store -> segment -> library scores)
 * and prints, per corpus, the ingest time, the event loop's delay (perf_hooks
 * monitorEventLoopDelay: p99, max) and every stall over 50 ms with the job's last log line
 * before it (where in the job it happened: its stage and last line, per-document lines
 * included), the slowest synchronous calls of the chunkers and the store seen meanwhile (chunk,
 * addSnippets, addDocuments, the database export), and the main thread's garbage-collection
 * pauses over 20 ms (PerformanceObserver 'gc': scavenge, mark-compact), and for each stall how
 * long the main thread ran and how long it waited for a core (/proc/thread-self/schedstat: a
 * stall on a loaded machine is often mostly waiting).
 *
 *   npx tsx scripts/bench/ingest-stalls.ts [--corpora python,koa] [--refresh] [--chunk-worker-min-chars N] [--worker-nice N]
 *     [--search-pool N] [--profile]
 *
 * Like a server, it runs a search pool (`--search-pool`, default the server's size; 0: none),
 * started before the ingest, and the job's self-retrieval check asks its questions of it.
 * `--refresh` ingests each corpus a second time (the refresh path: reused snippets). `--profile`
 * samples the main thread's CPU (node:inspector's profiler, every millisecond) and says, for
 * each stall, which functions ran during it (`stallProfile`: the samples inside the stall's
 * window, by function, inclusive; `(garbage collector)` is V8's GC on the main thread), and over
 * all stalls. Profiling slows the main thread a little: compare runs made alike. Timings depend
 * on the machine's load: the output carries the load averages.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver, constants as perfConstants, monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { createKernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { SERVER_WORKER_NICE, setWorkerNice } from '../../core/worker-task.ts';
import { SearchPool, defaultPoolSize } from '../../server/search-pool.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({
  options: {
    corpora: { type: 'string', default: 'python' },
    'corpora-dir': { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') },
    refresh: { type: 'boolean', default: false },
    // Documents from this many characters on are chunked in a worker thread (0: none).
    'chunk-worker-min-chars': { type: 'string' },
    // The nice value of the ingest's worker threads (a server's: SERVER_WORKER_NICE; 0: as the main thread).
    'worker-nice': { type: 'string', default: String(SERVER_WORKER_NICE) },
    // Samples the main thread's CPU and attributes every stall to the functions that ran in it.
    profile: { type: 'boolean', default: false },
    // Search workers, as a server has (default its number: the cores but one); the job's self-retrieval check searches in them. 0: none.
    'search-pool': { type: 'string' },
  },
});
setWorkerNice(Number(values['worker-nice']));

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'refdesk-stalls-'));
  const kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), { env: { dataDir, mode: 'server', port: 0 }, logger: createConsoleLogger('error') });
  await kernel.open();
  const poolSize = values['search-pool'] === undefined ? defaultPoolSize() : Number(values['search-pool']);
  const pool = poolSize > 0 ? new SearchPool(kernel.store, kernel.logger, { size: poolSize }) : null;
  pool?.start(); // as a listening server does
  const load = [loadavg().map((x) => x.toFixed(2))];
  // The slowest calls, by name: where the stalls come from.
  const slow: Array<{ call: string; ms: number }> = [];
  const timed = <T extends object>(target: T, name: string, label: string) => {
    const rec = target as Record<string, unknown>;
    const original = rec[name] as (...a: unknown[]) => unknown;
    rec[name] = function (this: unknown, ...args: unknown[]) {
      const t = performance.now();
      const out = original.apply(this, args);
      const ms = performance.now() - t; // the synchronous part (a promise's later work is not counted)
      if (ms > 20) slow.push({ call: label, ms: Math.round(ms) });
      return out;
    };
  };
  for (const c of kernel.chunkers) timed(c, 'chunk', `chunk`);
  timed(kernel.store, 'addSnippets', 'store.addSnippets');
  timed(kernel.store, 'addDocuments', 'store.addDocuments');
  timed(kernel.store, 'writeNow', 'store.writeNow (export)');
  timed(kernel.store, 'finalizeBuild', 'store.finalizeBuild (sync part)');
  timed(kernel.store, 'search', 'store.search (sync part)');
  timed(kernel.store, 'loadSegment', 'store.loadSegment (open a segment)');
  timed(kernel.store, 'compactIfMostlyFree', 'store.compactIfMostlyFree (VACUUM)');
  timed(kernel.store, 'getSnippets', 'store.getSnippets');
  timed(kernel.store, 'upsertLibrary', 'store.upsertLibrary');
  try {
    const names = values.corpora!.split(',').filter(Boolean);
    const rounds = values.refresh ? 2 : 1;
    for (const name of names) {
      for (let round = 0; round < rounds; round++) {
        let last = 'start';
        const stalls: Array<{ ms: number; after: string; fromUs: number; toUs: number; runMs?: number; waitMs?: number }> = [];
        // The monotonic clock of the profiler's timestamps (microseconds).
        const nowUs = () => Number(process.hrtime.bigint() / 1000n);
        let tick = nowUs();
        let sched = mainThreadSchedstat();
        const timer = setInterval(() => {
          const now = nowUs();
          const at = mainThreadSchedstat();
          if (now - tick > 55_000) {
            stalls.push({
              ms: Math.round((now - tick) / 1000 - 5),
              after: last,
              fromUs: tick,
              toUs: now,
              // The main thread's time on a core, and runnable but waiting for one, during the stall (Linux).
              ...(sched && at ? { runMs: Math.round((at.runNs - sched.runNs) / 1e6), waitMs: Math.round((at.waitNs - sched.waitNs) / 1e6) } : {}),
            });
          }
          tick = now;
          sched = at;
        }, 5);
        const profiler = values.profile ? await startProfile() : null;
        slow.length = 0;
        // The main thread's GC pauses: are the stalls collections of its heap?
        const gcKinds: Record<number, string> = {
          [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'gc scavenge',
          [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'gc mark-compact',
          [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'gc incremental marking',
          [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'gc weak callbacks',
        };
        let gcTotalMs = 0;
        const gc = new PerformanceObserver((list) => {
          for (const e of list.getEntries()) {
            gcTotalMs += e.duration;
            const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
            if (e.duration > 20) slow.push({ call: `${gcKinds[kind] ?? 'gc'} (${last.slice(0, 40)})`, ms: Math.round(e.duration) });
          }
        });
        gc.observe({ entryTypes: ['gc'] });
        const h = monitorEventLoopDelay({ resolution: 5 });
        h.enable();
        const t = performance.now();
        const cpu = process.cpuUsage();
        const { job } = await addLibrary(kernel, { source: 'upload', name, spec: { path: join(values['corpora-dir']!, name) } });
        // The finalize and what follows it (the self-retrieval check) log nothing until the end: named here.
        const finalize = kernel.store.finalizeBuild.bind(kernel.store);
        // The main thread's time on a core from the end of finalize to the end of the job (the check, the library's meta).
        let afterFinalize: { runNs: number } | null = null;
        kernel.store.finalizeBuild = async (id) => {
          last = 'finalizing: store.finalizeBuild';
          try {
            return await finalize(id);
          } finally {
            last = 'checking: after finalizeBuild (self-retrieval check, library meta)';
            afterFinalize = mainThreadSchedstat();
          }
        };
        const logLine = kernel.store.appendJobLog.bind(kernel.store);
        kernel.store.appendJobLog = async (id, level, message) => {
          last = message.slice(0, 100);
          return logLine(id, level, message);
        };
        const minChars = values['chunk-worker-min-chars'];
        // Every line of the job's log (per-document debug lines too), with its stage.
        const onLog = (e: { stage?: string; message: string }) => {
          last = `${e.stage ?? ''}: ${e.message.slice(0, 100)}`;
        };
        const searched = pool?.stats.searched ?? 0;
        const done = await runIngestJob(kernel, job.id, {
          onLog,
          ...(pool ? { searcher: pool } : {}),
          ...(minChars === undefined ? {} : { chunkWorkerMinChars: Number(minChars) }),
        });
        const jobEnd = mainThreadSchedstat();
        const profile = profiler ? await profiler.stop() : null;
        gc.disconnect();
        kernel.store.appendJobLog = logLine;
        kernel.store.finalizeBuild = finalize;
        const ms = Math.round(performance.now() - t);
        const used = process.cpuUsage(cpu);
        h.disable();
        clearInterval(timer);
        console.log(
          JSON.stringify({
            corpus: name,
            round: round === 0 ? 'add' : 'refresh',
            state: done.state,
            ingestMs: ms,
            // The process's CPU time (all threads: main, workers, zlib): far less load-dependent.
            cpuMs: Math.round((used.user + used.system) / 1000),
            snippets: done.progress.snippets,
            loopDelayMs: { p99: +(h.percentile(99) / 1e6).toFixed(1), max: +(h.max / 1e6).toFixed(1) },
            workerNice: Number(values['worker-nice']),
            // Search workers, and the questions the job's check asked of them.
            searchPool: { size: poolSize, searched: (pool?.stats.searched ?? 0) - searched },
            stallsOver50ms: stalls.length,
            mainThreadGcMs: Math.round(gcTotalMs),
            mainThreadRunAfterFinalizeMs: afterFinalize && jobEnd ? Math.round((jobEnd.runNs - (afterFinalize as { runNs: number }).runNs) / 1e6) : null,
            // Per stage of the job (reading: documents read and chunked; finalizing; done: the self-retrieval check and after).
            stallsByStage: stalls.reduce<Record<string, { n: number; maxMs: number; runMs: number; waitMs: number }>>((acc, x) => {
              const k = x.after.split(':')[0] || 'start';
              const e = (acc[k] ??= { n: 0, maxMs: 0, runMs: 0, waitMs: 0 });
              e.n++;
              e.maxMs = Math.max(e.maxMs, x.ms);
              e.runMs += x.runMs ?? 0;
              e.waitMs += x.waitMs ?? 0;
              return acc;
            }, {}),
            // Summed over the stalls: the main thread running, and waiting for a core (the machine's load).
            stallsRunWaitMs: stalls.reduce((acc, x) => [acc[0] + (x.runMs ?? 0), acc[1] + (x.waitMs ?? 0)], [0, 0]),
            // The stalls with the most main-thread run time (the work this process did in them, whatever the machine's load).
            stallsByRun: [...stalls]
              .sort((a, b) => (b.runMs ?? 0) - (a.runMs ?? 0))
              .slice(0, 6)
              .map(({ ms, after, runMs, waitMs }) => ({ runMs, ms, waitMs, after: after.slice(0, 60) })),
            stalls: stalls
              .sort((a, b) => b.ms - a.ms)
              .slice(0, 12)
              .map(({ ms, after, runMs, waitMs }) => ({ ms, after, runMs, waitMs })),
            slowCalls: slow.sort((a, b) => b.ms - a.ms).slice(0, 12),
            ...(profile ? { stallProfile: attributeStalls(profile, stalls) } : {}),
          }),
        );
      }
    }
  } finally {
    await pool?.close();
    await kernel.close();
    rmSync(dataDir, { recursive: true, force: true });
    load.push(loadavg().map((x) => x.toFixed(2)));
    console.log(JSON.stringify({ loadavg: { before: load[0], after: load[1] } }));
  }
}

/**
 * The calling (main) thread's time on a core and waiting on a run queue so far, in ns, from
 * /proc/thread-self/schedstat (Linux; null elsewhere): tells a stall the thread spent working
 * from one it spent runnable behind other processes.
 */
function mainThreadSchedstat(): { runNs: number; waitNs: number } | null {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ').map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? { runNs: run, waitNs: wait } : null;
  } catch {
    return null;
  }
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Starts sampling the main thread's CPU (every millisecond); `stop` gives the profile. */
async function startProfile(): Promise<{ stop(): Promise<CpuProfile> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
      session.disconnect();
      return profile;
    },
  };
}

/**
 * The functions that ran during each stall (the profile's samples inside its window), inclusive
 * (a function counts for every sample it is on the stack of), the project's own frames and
 * V8's GC named first; and the same over all stalls.
 */
function attributeStalls(profile: CpuProfile, stalls: ReadonlyArray<{ ms: number; after: string; fromUs: number; toUs: number; runMs?: number; waitMs?: number }>) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (id: number) => {
    const { functionName, url } = byId.get(id)!.callFrame;
    const file = url.startsWith('file://') ? fileURLToPath(url).slice(ROOT.length) : url.split('/').slice(-2).join('/');
    return file ? `${functionName || '(anonymous)'} ${file}` : functionName;
  };
  const times: number[] = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) times.push((t += d));
  const own = (name: string) => /^\S+ (core|plugins|server)\//.test(name) || name === '(garbage collector)';
  const overall = new Map<string, number>();
  const per = [...stalls]
    .sort((a, b) => b.ms - a.ms)
    .map((s) => {
      const inclusive = new Map<string, number>();
      let sampled = 0;
      for (let i = 0; i < times.length; i++) {
        if (times[i] <= s.fromUs || times[i] > s.toUs) continue;
        const leaf = byId.get(profile.samples[i])!.callFrame.functionName;
        if (leaf === '(idle)' || leaf === '(root)') continue;
        sampled++;
        const seen = new Set<string>();
        for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
          const name = label(id);
          if (name === '(root)' || seen.has(name)) continue;
          seen.add(name);
          inclusive.set(name, (inclusive.get(name) ?? 0) + 1);
        }
      }
      for (const [k, v] of inclusive) if (own(k)) overall.set(k, (overall.get(k) ?? 0) + v);
      const top = [...inclusive].filter(([k]) => own(k)).sort((a, b) => b[1] - a[1]);
      return { ms: s.ms, after: s.after.slice(0, 60), runMs: s.runMs, waitMs: s.waitMs, busySamples: sampled, top: top.slice(0, 8).map(([k, v]) => `${v} ${k}`) };
    });
  return {
    overBusySamplesOfAllStalls: [...overall]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([k, v]) => `${v} ${k}`),
    stalls: per.slice(0, 15),
  };
}

await main();
