/**
 * The serving benchmark (issue 17): the real `refdesk` command and server as processes, on the
 * shared corpora, printing one JSON document:
 *
 *   - runtime: the compiled code (dist/) or the sources through tsx, as bin/refdesk.js chose;
 *   - ingest: `refdesk add <corpus> --name <name>`, one CLI call per corpus, into a fresh DATA_DIR;
 *   - startToPingMs: from spawning `refdesk serve` to the first answered /ping (every start), and
 *     startToPingCpuMs, the CPU time the server had used by then (much less load-dependent);
 *   - firstAnswerMs: the first context answer of each library after a restart;
 *   - rssMb: the server's resident memory once every library has answered once;
 *   - latency: sequential GET /api/v2/context on the largest library, a different question each
 *     time (generated from the corpus's headings, so no cache stands in), p50/p99, and the
 *     server's CPU time per question (all its threads; /proc, 10 ms ticks over the run);
 *   - throughput: the same at concurrency 16 for a fixed time, beside a bare Koa route in this
 *     process serving a real answer's bytes from memory; both rps and the share;
 *   - pingUnderIngest: /ping p50/p99/max and errors at concurrency 32 while an archive of the
 *     largest corpus is ingested through the server, with the server's event-loop delay over that
 *     window (REFDESK_DEBUG_EVENT_LOOP=1 enables a loopback-only debug route in server/main.ts);
 *   - timeout: with api.requestTimeoutMs set low, do questions past the deadline get a 504, and
 *     how long after the request did it arrive.
 *
 *   - warm: the sequential and concurrency-16 figures again after --warmup questions (default
 *     2,000, each different): the steady state, without the JIT's warm-up of a fresh server;
 *
 *   npm run bench:serve [-- --corpora koa,python] [--skip-ingest --data-dir DIR] [--requests 200]
 *                       [--seconds 10] [--timeout-ms 20] [--starts 3] [--warmup 2000]
 *
 * Before and after, alternated in one window (the serving figures only: sequential latency,
 * server CPU per request, throughput at concurrency 16 beside the bare Koa route), the other
 * checkout's bin/refdesk.js ("before", built with `npm run build` there) against this one's
 * ("after"), on one data directory, in the order before/after, after/before, ...:
 *
 *   npm run bench:serve -- --skip-ingest --data-dir DIR --compare OTHER_CHECKOUT [--rounds 4] [--warmup N]
 *
 * (with --warmup, each server answers N questions before the measured ones; default none).
 *
 * Timings depend on the machine's load: the JSON carries `uptime`'s load averages before and after.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { create as createTar } from 'tar';
import { throwawayLicenceEnv } from '../server/licence-throwaway.ts';
import { cpuMs, freePort, hammer, headingQuestions as corpusHeadings, load, percentile, round, rssMb, startBareKoa, stats, timed } from './bench-parts.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'refdesk.js');

const { values } = parseArgs({
  options: {
    corpora: { type: 'string' },
    'corpora-dir': { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') },
    questions: { type: 'string', default: join(ROOT, '..', 'shared', 'bench', 'questions.jsonl') },
    'skip-ingest': { type: 'boolean', default: false },
    'data-dir': { type: 'string' },
    requests: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    'timeout-ms': { type: 'string', default: '20' },
    starts: { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
    compare: { type: 'string' },
    rounds: { type: 'string', default: '4' },
    warmup: { type: 'string' },
  },
});

interface Corpus {
  name: string;
  libraryId: string;
  bytes: number;
  files: number;
}

const corporaDir = resolve(values['corpora-dir']!);
const manifest = JSON.parse(readFileSync(join(corporaDir, 'MANIFEST.json'), 'utf8')) as { corpora: Corpus[] };
const wanted = values.corpora ? new Set(values.corpora.split(',').map((s) => s.trim()).filter(Boolean)) : null;
const corpora = manifest.corpora.filter((c) => !wanted || wanted.has(c.name));
if (wanted) {
  const unknown = [...wanted].filter((n) => !manifest.corpora.some((c) => c.name === n));
  if (unknown.length) fail(`unknown corpora: ${unknown.join(', ')} (MANIFEST.json lists ${manifest.corpora.map((c) => c.name).join(', ')})`);
}
if (corpora.length === 0) fail('no corpora selected');
if (values.compare && !values['skip-ingest']) fail('--compare needs --skip-ingest --data-dir DIR (both checkouts serve the same data)');
if (values['skip-ingest'] && !values['data-dir']) fail('--skip-ingest needs --data-dir DIR (a data directory a previous run filled; run with --keep to keep it)');
const largest = [...corpora].sort((a, b) => b.bytes - a.bytes)[0];
const libraryIdOf = (c: Corpus) => `/docs/${c.name}`;
const REQUESTS = positiveInt('requests');
const SECONDS = positiveInt('seconds');
const TIMEOUT_MS = positiveInt('timeout-ms');
const STARTS = positiveInt('starts');
/**
 * Questions asked before the warm measurement (the full run: 2,000; --compare: none unless given).
 * Right after a start most of a question's CPU is V8 compiling the hot code (in its own threads)
 * and running it unoptimized; a server that has answered a few thousand questions no longer pays it.
 */
const WARMUP = values.warmup === undefined ? (values.compare ? 0 : 2000) : nonNegativeInt('warmup');

function nonNegativeInt(name: string): number {
  const v = String(values[name as keyof typeof values]);
  if (!/^\d+$/.test(v)) fail(`--${name} must be a whole number`);
  return Number(v);
}

function positiveInt(name: string): number {
  const v = String(values[name as keyof typeof values]);
  if (!/^\d+$/.test(v) || Number(v) < 1) fail(`--${name} must be a positive integer`);
  return Number(v);
}

function fail(message: string): never {
  process.stderr.write(`bench:serve: ${message}\n`);
  process.exit(2);
}

const log = (m: string) => process.stderr.write(`${m}\n`);

// ---------------------------------------------------------------------------------------------
// Questions
// ---------------------------------------------------------------------------------------------

/** Every heading of a corpus, with its file's name, as questions (distinct, in a fixed order). */
const headingQuestions = (c: Corpus) => corpusHeadings(corporaDir, c.name);

/** The benchmark's own questions for a corpus (questions.jsonl), if any. */
function benchQuestions(c: Corpus): string[] {
  if (!existsSync(values.questions!)) return [];
  return readFileSync(values.questions!, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { corpus: string; question: string })
    .filter((q) => q.corpus === c.name)
    .map((q) => q.question.slice(0, 480));
}

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

/** A licence from a throwaway local issuer, for every server this benchmark starts. */
const LICENCE = throwawayLicenceEnv('Refdesk benchmark', { existingIssuerKeys: process.env.LICENSE_ISSUER_KEYS });

/**
 * The config the servers (and the key's creation) run with once the ingest is done: the default
 * one plus a plan of no practical limit (`BENCH_PLAN`), so that the warm phase's thousands of
 * questions a minute measure the search and not the rate limiter (a 429 answers in microseconds).
 * The ingest runs with the defaults, as a user's would.
 */
const BENCH_PLAN = 'bench-unlimited';
let serveConfig: { file: string; config: BenchConfig } | undefined;

interface BenchConfig {
  plugins: Array<{ use: string }>;
  api: Record<string, number>;
  rateLimits: { plans: Record<string, { requests: number }> };
}

/** Writes `dir`/bench.yaml (the default config of the runtime bin/refdesk.js runs, plus BENCH_PLAN). */
function writeServeConfig(dir: string, dataDir: string): { file: string; config: BenchConfig } {
  const dist = /compiled code/.test(refdesk(['--help'], dataDir).stderr);
  const baseConfig = dist ? join(ROOT, 'dist', 'config', 'default.yaml') : join(ROOT, 'config', 'default.yaml');
  const config = parseYaml(readFileSync(baseConfig, 'utf8')) as BenchConfig;
  for (const p of config.plugins) if (p.use.startsWith('.')) p.use = resolve(dirname(baseConfig), p.use);
  config.rateLimits.plans[BENCH_PLAN] = { requests: 1_000_000_000 };
  const file = join(dir, 'bench.yaml');
  writeFileSync(file, toYaml(config));
  return { file, config };
}

function env(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {
    ...process.env,
    ...LICENCE,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    NODE_NO_WARNINGS: '1',
    REFDESK_SHOW_RUNTIME: '1',
    ...(serveConfig ? { REFDESK_CONFIG: serveConfig.file } : {}),
    ...extra,
  };
  delete e.NODE_TEST_CONTEXT;
  return e;
}

function refdesk(args: string[], dataDir: string, bin = BIN): { ms: number; stdout: string; stderr: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: ROOT, env: env(dataDir), encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = performance.now() - t0;
  if (r.status !== 0) fail(`refdesk ${args.join(' ')} failed (${r.status}):\n${r.stderr}`);
  return { ms, stdout: r.stdout, stderr: r.stderr };
}

interface Server {
  child: ChildProcess;
  base: string;
  startToPingMs: number;
  /** CPU time (user + system) the server process had used when /ping first answered. */
  startCpuMs: number;
  runtime: string;
  stop(): Promise<void>;
}

async function startServer(dataDir: string, extra: Record<string, string> = {}, bin = BIN): Promise<Server> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, 'serve'], { cwd: ROOT, env: env(dataDir, { PORT: String(port), REFDESK_DEBUG_EVENT_LOOP: '1', ...extra }), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout!.resume();
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) fail(`the server exited (${child.exitCode}):\n${stderr}`);
    if (performance.now() - t0 > 120_000) fail(`no /ping answer within 120 s:\n${stderr}`);
    const ok = await fetch(`${base}/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const startToPingMs = performance.now() - t0;
  const startCpuMs = cpuMs(child.pid!);
  const runtime = /running the compiled code/.test(stderr) ? 'dist' : /through tsx/.test(stderr) ? 'tsx' : 'unknown';
  return {
    child,
    base,
    startToPingMs,
    startCpuMs,
    runtime,
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

const contextUrl = (base: string, c: Corpus, q: string, type = 'txt') => `${base}/api/v2/context?${new URLSearchParams({ libraryId: libraryIdOf(c), query: q, type })}`;

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

interface CompareRun {
  round: number;
  sequential: ReturnType<typeof stats>;
  sequentialCpuMsPerRequest: number;
  rps16: number;
  errors16: number;
  cpuMsPerRequest16: number;
  bareKoaRps: number;
  share: number;
  load: { before: number[]; after: number[] };
}

/**
 * --compare: the serving figures of two checkouts on one data directory, alternated so that both
 * see the same load (before/after, after/before, ...), with the load average of each run.
 */
async function compareServing(dataDir: string, otherRoot: string): Promise<void> {
  const variants = { before: join(resolve(otherRoot), 'bin', 'refdesk.js'), after: BIN };
  if (!existsSync(variants.before)) fail(`--compare: no bin/refdesk.js in ${otherRoot}`);
  const key = /rdk_[A-Za-z0-9_-]+/.exec(refdesk(['keys', 'create', '--name', 'bench-serve', '--plan', 'pro'], dataDir).stdout)?.[0];
  if (!key) fail('could not create an API key');
  const auth = { authorization: `Bearer ${key}` };
  const questions = headingQuestions(largest);
  const runs: Record<'before' | 'after', CompareRun[]> = { before: [], after: [] };
  const rounds = positiveInt('rounds');
  for (let pass = 0; pass < rounds; pass++) {
    for (const name of pass % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
      const server = await startServer(dataDir, {}, variants[name]);
      try {
        for (const c of corpora) await timed(contextUrl(server.base, c, benchQuestions(c)[0] ?? headingQuestions(c)[0]), auth);
        // The same questions for both variants, a different one each request.
        let qi = 0;
        const next = () => contextUrl(server.base, largest, questions[qi++ % questions.length] + (qi > questions.length ? ` ${Math.floor(qi / questions.length)}` : ''));
        await warmUp(next, auth);
        const loadBefore = load();
        const seq: number[] = [];
        const cpu0 = cpuMs(server.child.pid!);
        let sample: { body: Buffer; type: string } | null = null;
        for (let i = 0; i < REQUESTS; i++) {
          const r = await timed(next(), auth);
          if (r.status !== 200) fail(`${name}: context ${r.status} ${r.body.toString().slice(0, 300)}`);
          seq.push(r.ms);
          sample ??= r;
        }
        const seqCpu = round((cpuMs(server.child.pid!) - cpu0) / REQUESTS, 2);
        const cpu1 = cpuMs(server.child.pid!);
        const c16 = await hammer(16, SECONDS, next, auth);
        const c16Cpu = round((cpuMs(server.child.pid!) - cpu1) / Math.max(1, c16.requests), 2);
        const bare = await bareKoaRun(sample!);
        const entry: CompareRun = { round: pass + 1, sequential: stats(seq), sequentialCpuMsPerRequest: seqCpu, rps16: c16.rps, errors16: c16.errors, cpuMsPerRequest16: c16Cpu, bareKoaRps: bare.rps, share: round(c16.rps / bare.rps, 3), load: { before: loadBefore, after: load() } };
        runs[name].push(entry);
        log(`${name} (round ${pass + 1}/${rounds}, ${server.runtime}): ${JSON.stringify(entry)}`);
      } finally {
        await server.stop();
      }
    }
  }
  const median = (name: 'before' | 'after', pick: (r: CompareRun) => number) => round(percentile(runs[name].map(pick), 50), 3);
  const summary = Object.fromEntries(
    (['before', 'after'] as const).map((n) => [
      n,
      {
        p50: median(n, (r) => r.sequential.p50),
        p99: median(n, (r) => r.sequential.p99),
        sequentialCpuMsPerRequest: median(n, (r) => r.sequentialCpuMsPerRequest),
        rps16: median(n, (r) => r.rps16),
        cpuMsPerRequest16: median(n, (r) => r.cpuMsPerRequest16),
        share: median(n, (r) => r.share),
      },
    ]),
  );
  process.stdout.write(JSON.stringify({ machine: { cpus: (await import('node:os')).cpus().length, node: process.version }, library: libraryIdOf(largest), requests: REQUESTS, seconds: SECONDS, before: variants.before, after: variants.after, summary, runs }, null, 2) + '\n');
}

/** WARMUP context questions (each different), four at a time, every answer checked. */
async function warmUp(next: () => string, auth: Record<string, string>): Promise<void> {
  let left = WARMUP;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (left-- > 0) {
        const r = await timed(next(), auth);
        if (r.status !== 200) fail(`warm-up: context ${r.status} ${r.body.toString().slice(0, 300)}`);
      }
    }),
  );
}

/** A bare Koa route serving a real answer's bytes from memory, at concurrency 16 for SECONDS. */
async function bareKoaRun(sample: { body: Buffer; type: string }) {
  const bare = await startBareKoa(sample);
  let i = 0;
  try {
    return await hammer(16, SECONDS, () => `${bare.base}/api/v2/context?q=${i++}`);
  } finally {
    await bare.close();
  }
}

async function main() {
  if (values.compare) return compareServing(resolve(values['data-dir']!), values.compare);
  const result: Record<string, unknown> = {
    machine: { cpus: (await import('node:os')).cpus().length, node: process.version, loadBefore: load() },
    corpora: corpora.map((c) => c.name),
    largest: { corpus: largest.name, libraryId: libraryIdOf(largest), bytes: largest.bytes },
  };
  const dataDir = values['data-dir'] ? resolve(values['data-dir']) : mkdtempSync(join(tmpdir(), 'refdesk-bench-serve-'));
  const scratch = mkdtempSync(join(tmpdir(), 'refdesk-bench-serve-files-'));
  try {
    // Ingest: one CLI call per corpus, no server running.
    if (!values['skip-ingest']) {
      if (values['data-dir'] && existsSync(dataDir) && readdirSync(dataDir).length > 0) fail(`${dataDir} is not empty; ingest needs a fresh data directory`);
      mkdirSync(dataDir, { recursive: true });
      const per: Record<string, number> = {};
      let runtime = '';
      const loadBefore = load();
      const t0 = performance.now();
      for (const c of corpora) {
        const r = refdesk(['add', join(corporaDir, c.name), '--name', c.name], dataDir);
        runtime ||= /running the compiled code/.test(r.stderr) ? 'dist' : 'tsx';
        per[c.name] = Math.round(r.ms);
        log(`ingest ${c.name}: ${Math.round(r.ms)} ms`);
      }
      // The load beside the figure: on a shared machine the wall time is mostly the others' work.
      result.ingest = { totalMs: Math.round(performance.now() - t0), perCorpusMs: per, runtime, load: { before: loadBefore, after: load() } };
    }

    // A key of a plan with no practical limit, so the rate limiter does not cut the run short.
    serveConfig = writeServeConfig(scratch, dataDir);
    const key = /rdk_[A-Za-z0-9_-]+/.exec(refdesk(['keys', 'create', '--name', 'bench-serve', '--plan', BENCH_PLAN], dataDir).stdout)?.[0];
    if (!key) fail('could not create an API key');
    const auth = { authorization: `Bearer ${key}` };

    // Extra starts for start-to-ping only.
    const starts: number[] = [];
    const startCpu: number[] = [];
    for (let i = 1; i < STARTS; i++) {
      const s = await startServer(dataDir);
      starts.push(Math.round(s.startToPingMs));
      startCpu.push(s.startCpuMs);
      await s.stop();
    }

    const server = await startServer(dataDir);
    starts.push(Math.round(server.startToPingMs));
    startCpu.push(server.startCpuMs);
    result.runtime = server.runtime;
    result.startToPingMs = { runs: starts, median: percentile(starts, 50) };
    result.startToPingCpuMs = { runs: startCpu, median: percentile(startCpu, 50) };
    log(`server (${server.runtime}) answered /ping after ${starts.join(', ')} ms`);
    try {
      // First answer per library after the restart.
      const first: Record<string, number> = {};
      for (const c of corpora) {
        const q = benchQuestions(c)[0] ?? headingQuestions(c)[0];
        const r = await timed(contextUrl(server.base, c, q), auth);
        if (r.status !== 200) fail(`first answer of ${c.name}: ${r.status} ${r.body.toString().slice(0, 300)}`);
        first[c.name] = round(r.ms);
      }
      result.firstAnswerMs = first;
      result.rssMbAfterAllAnswered = rssMb(server.child.pid!);
      log(`first answers: ${JSON.stringify(first)}; rss ${result.rssMbAfterAllAnswered} MB`);

      // Sequential latency on the largest library, a different question each time.
      const questions = headingQuestions(largest);
      let qi = 0;
      const nextQuestion = () => questions[qi++ % questions.length] + (qi > questions.length ? ` ${Math.floor(qi / questions.length)}` : '');
      const seq: number[] = [];
      let sample: { body: Buffer; type: string } | null = null;
      const seqCpu0 = cpuMs(server.child.pid!);
      for (let i = 0; i < REQUESTS; i++) {
        const r = await timed(contextUrl(server.base, largest, nextQuestion()), auth);
        if (r.status !== 200) fail(`context: ${r.status} ${r.body.toString().slice(0, 300)}`);
        seq.push(r.ms);
        sample ??= r;
      }
      // The server's CPU time per question (all its threads): far less load-dependent than wall time.
      const serverCpuMsPerRequest = round((cpuMs(server.child.pid!) - seqCpu0) / REQUESTS, 2);
      result.sequentialContext = { library: libraryIdOf(largest), questionsAvailable: questions.length, latencyMs: stats(seq), serverCpuMsPerRequest, load: load() };
      log(`sequential: ${JSON.stringify(stats(seq))}`);

      // Throughput at concurrency 16 beside a bare Koa route serving a real answer from memory.
      const hammerCpu0 = cpuMs(server.child.pid!);
      const refdeskRun = await hammer(16, SECONDS, () => contextUrl(server.base, largest, nextQuestion()), auth);
      const refdeskCpuMsPerRequest = round((cpuMs(server.child.pid!) - hammerCpu0) / Math.max(1, refdeskRun.requests), 2);
      const bareRun = await bareKoaRun(sample!);
      result.throughput16 = { refdesk: { ...refdeskRun, serverCpuMsPerRequest: refdeskCpuMsPerRequest }, bareKoa: bareRun, share: round(refdeskRun.rps / bareRun.rps, 3), answerBytes: sample!.body.length, load: load() };
      log(`throughput: refdesk ${refdeskRun.rps} rps, bare ${bareRun.rps} rps`);

      // The same two figures once the server has answered WARMUP more questions (steady state).
      if (WARMUP > 0) {
        const warmCpu0 = cpuMs(server.child.pid!);
        await warmUp(() => contextUrl(server.base, largest, nextQuestion()), auth);
        const warmupCpuMsPerRequest = round((cpuMs(server.child.pid!) - warmCpu0) / WARMUP, 2);
        const warmSeq: number[] = [];
        const cpu0 = cpuMs(server.child.pid!);
        for (let i = 0; i < REQUESTS; i++) {
          const r = await timed(contextUrl(server.base, largest, nextQuestion()), auth);
          if (r.status !== 200) fail(`context: ${r.status} ${r.body.toString().slice(0, 300)}`);
          warmSeq.push(r.ms);
        }
        const seqCpu = round((cpuMs(server.child.pid!) - cpu0) / REQUESTS, 2);
        const cpu1 = cpuMs(server.child.pid!);
        const warm16 = await hammer(16, SECONDS, () => contextUrl(server.base, largest, nextQuestion()), auth);
        const c16Cpu = round((cpuMs(server.child.pid!) - cpu1) / Math.max(1, warm16.requests), 2);
        const warmBare = await bareKoaRun(sample!);
        result.warm = {
          warmupQuestions: WARMUP,
          warmupCpuMsPerRequest,
          sequentialContext: { latencyMs: stats(warmSeq), serverCpuMsPerRequest: seqCpu },
          throughput16: { refdesk: { ...warm16, serverCpuMsPerRequest: c16Cpu }, bareKoa: warmBare, share: round(warm16.rps / warmBare.rps, 3) },
          load: load(),
        };
        log(`warm (after ${WARMUP} questions): sequential ${JSON.stringify(stats(warmSeq))}, ${seqCpu} ms CPU a question; concurrency 16 ${warm16.rps} rps (bare ${warmBare.rps})`);
      }

      // /ping at concurrency 32 while an archive of the largest corpus is ingested through the server.
      const archive = join(scratch, `${largest.name}.tar.gz`);
      await createTar({ gzip: true, file: archive, cwd: corporaDir }, [largest.name]);
      await fetch(`${server.base}/debug/event-loop`); // starts the window
      let ingesting = true;
      const ingestStart = performance.now();
      const add = spawn(process.execPath, [BIN, 'add', archive, '--name', `${largest.name}-archive`], { cwd: ROOT, env: env(dataDir), stdio: ['ignore', 'ignore', 'pipe'] });
      let addErr = '';
      add.stderr!.setEncoding('utf8').on('data', (c: string) => (addErr += c));
      // The CLI follows the job by polling the server; when a poll fails (the server too busy to
      // answer) the CLI gives up but the job goes on: follow it here until it ends.
      const addDone = new Promise<number | null>((r) => add.once('exit', (code) => r(code))).then(async (code) => {
        const jobId = /\(job ([0-9a-f-]{36})\)/.exec(addErr)?.[1];
        let state = code === 0 ? 'succeeded' : 'unknown';
        while (jobId && state !== 'succeeded' && state !== 'failed' && state !== 'interrupted') {
          await new Promise((r) => setTimeout(r, 500));
          const cliToken = readFileSync(join(dataDir, 'cli-token'), 'utf8').trim();
          state = await fetch(`${server.base}/api/admin/jobs/${jobId}`, { headers: { authorization: `Bearer ${cliToken}` } }).then(
            async (r) => ((await r.json()) as { job: { state: string } }).job.state,
            () => state,
          );
        }
        return { code, state };
      });
      const pingLat: number[] = [];
      let pingErrors = 0;
      const pingers = Array.from({ length: 32 }, async () => {
        while (ingesting) {
          try {
            const r = await timed(`${server.base}/ping`, {});
            if (r.status !== 200) pingErrors++;
            pingLat.push(r.ms);
          } catch {
            pingErrors++;
          }
        }
      });
      const { code: addCode, state: jobState } = await addDone;
      ingesting = false;
      await Promise.all(pingers);
      const ingestMs = performance.now() - ingestStart;
      const loop = (await (await fetch(`${server.base}/debug/event-loop`)).json()) as Record<string, number>;
      if (jobState !== 'succeeded') fail(`the archive ingest failed (${addCode}, job ${jobState}): ${addErr.slice(-1000)}`);
      const cliError = addCode === 0 ? null : addErr.trim().split('\n').filter((l) => l.startsWith('refdesk: ') && !l.includes('running the')).pop() ?? `exit ${addCode}`;
      result.pingUnderIngest = { archive: `${largest.name}.tar.gz`, ingestMs: Math.round(ingestMs), cliExit: addCode, cliError, concurrency: 32, ping: stats(pingLat), errors: pingErrors, eventLoopDelay: loop, load: load() };
      log(`ping under ingest: ${JSON.stringify(result.pingUnderIngest)}`);
    } finally {
      await server.stop();
    }

    // The deadline: a config with a small api.requestTimeoutMs, cold and warm questions.
    const cfg = structuredClone(serveConfig.config);
    cfg.api.requestTimeoutMs = TIMEOUT_MS;
    const cfgFile = join(scratch, 'timeout.yaml');
    writeFileSync(cfgFile, toYaml(cfg));
    const slow = await startServer(dataDir, { REFDESK_CONFIG: cfgFile });
    try {
      const questions = headingQuestions(largest).reverse();
      const runs: Array<{ status: number; ms: number }> = [];
      for (let i = 0; i < 20; i++) {
        const r = await timed(contextUrl(slow.base, largest, questions[i]), auth);
        runs.push({ status: r.status, ms: round(r.ms) });
      }
      const late = runs.filter((r) => r.status === 504);
      const answered = runs.filter((r) => r.status === 200);
      result.timeout = {
        requestTimeoutMs: TIMEOUT_MS,
        requests: runs.length,
        got504: late.length,
        got200: answered.length,
        other: runs.filter((r) => r.status !== 504 && r.status !== 200).map((r) => r.status),
        firstRequest: runs[0],
        ms504: late.length ? stats(late.map((r) => r.ms)) : null,
        ms200: answered.length ? stats(answered.map((r) => r.ms)) : null,
        within: late.length ? late.every((r) => r.ms <= TIMEOUT_MS * 2 + 50) : null,
      };
      log(`timeout: ${JSON.stringify(result.timeout)}`);
    } finally {
      await slow.stop();
    }
    result.loadAfter = load();
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    if (!values['data-dir'] && !values.keep) rmSync(dataDir, { recursive: true, force: true });
    else log(`data directory kept: ${dataDir}`);
  }
}

main().catch((e) => {
  process.stderr.write(`bench:serve: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
