/**
 * `npm run bench:scale`: serving at scale on generated data (nothing is committed or downloaded).
 *
 *   npm run bench:scale [-- --snippets 1000000] [--libraries 1000] [--small-snippets 200]
 *                       [--questions 300] [--seed 1] [--chunker]
 *                       [--data-dir DIR] [--keep] [--skip-build] [--in-process] [--rounds 2]
 *                       [--build-only]
 *                       [--context-only] [--answers FILE] [--compare FILE] [--candidate-sections N]
 *
 * 1. Generates documentation: markdown pages of sections (headings two and three levels deep),
 *    prose drawn from a seeded vocabulary with a Zipf distribution (a few words very common, most
 *    rare, like real text) and fenced code blocks naming identifiers from the same vocabulary.
 * 2. Builds, in a fresh data directory: one big library (`/docs/scale-big`) of about `--snippets`
 *    snippets and `--libraries - 1` small ones (20 to `--small-snippets` snippets each, default
 *    200; fewer when it is below 20; names and titles from the vocabulary), so the catalog holds
 *    `--libraries` libraries. The snippets are generated directly in the shapes the markdown
 *    chunker makes of such pages (scale-docs.ts generatePageSnippets): chunking a million
 *    generated snippets took 45 min at load 30 and the chunker's speed is not what this bench
 *    measures (`npm run bench:serve` measures ingest). `--chunker` sends generated pages through
 *    the real markdown chunker of the configured kernel instead. The snippets go through the
 *    store's build API (beginBuild, addSnippets, finalizeBuild: the same calls an ingest job
 *    makes), not through
 *    the sources and the job runner: reading a million snippets' worth of files through the
 *    upload source adds nothing this bench measures and would take most of the run.
 * 3. Starts the real server as a process (`bin/refdesk.js serve`: dist/ when built and current)
 *    on that directory and measures over HTTP, one request at a time, with a key of the largest
 *    plan: `GET /api/v2/context` on the big library (different questions each time, drawn from
 *    the vocabulary; a first warm-up question opens its segment), `GET /api/v2/libs/search`
 *    over the catalog (names of existing libraries, prefixes of them and unknown names), the
 *    same with `fast=true`, the same names again with other questions (`librarySearchAgain`:
 *    the libraries re-ranked by their documentation were searched once already), then
 *    the server's RSS (/proc/<pid>/status) against the memory budget
 *    (`store.options.segmentCacheBytes` plus the RSS of the same server on an empty data
 *    directory, measured first).
 *
 * Prints one JSON document with the figures, the targets (context p99 <= 50 ms, library search
 * p99 <= 10 ms, RSS within the budget) and whether each was met. `--snippets 20000 --libraries 100`
 * is a quick check (well under a minute).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createKernel, type Kernel } from '../core/kernel.ts';
import { createConsoleLogger } from '../core/services.ts';
import type { Snippet } from '../core/contracts.ts';
import { launchServer, type LaunchedServer } from './bench/server-process.ts';
import { benchApiKey } from './bench/api-key.ts';
import { percentile } from './bench/metrics.ts';
import { Vocabulary, generatePage, generatePageSnippets, rng } from './bench/scale-docs.ts';
import { DEFAULT_BM25, DEFAULT_CANDIDATES } from '../core/search/lexical-index.ts';
import { assembleFromSegment, openSegment } from '../plugins/store-embedded/segment.ts';
import { searchLibraries } from '../core/library-search.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    snippets: { type: 'string', default: '1000000' },
    libraries: { type: 'string', default: '1000' },
    'small-snippets': { type: 'string', default: '200' },
    questions: { type: 'string', default: '300' },
    seed: { type: 'string', default: '1' },
    'data-dir': { type: 'string' },
    keep: { type: 'boolean', default: false },
    'skip-build': { type: 'boolean', default: false },
    'in-process': { type: 'boolean', default: false },
    'context-only': { type: 'boolean', default: false },
    answers: { type: 'string' },
    'candidate-sections': { type: 'string' },
    compare: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    chunker: { type: 'boolean', default: false },
    'build-only': { type: 'boolean', default: false },
  },
});
const count = (name: string, v: string | undefined, min: number) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number >= ${min} (got "${v}")`);
  return n;
};
const SNIPPETS = count('snippets', values.snippets, 100);
const LIBRARIES = count('libraries', values.libraries, 1);
const QUESTIONS = count('questions', values.questions, 10);
const SMALL_MAX = count('small-snippets', values['small-snippets'], 5);
const SEED = count('seed', values.seed, 0);
const BIG = '/docs/scale-big';
const dataDir = values['data-dir'] ? resolve(values['data-dir']) : mkdtempSync(join(tmpdir(), 'refdesk-scale-'));
const t0 = performance.now();
const seconds = (from: number) => Math.round((performance.now() - from) / 100) / 10;
const log = (line: string) => process.stderr.write(`[${seconds(t0)} s] ${line}\n`);

/** Adds one library through the store's build API; returns its snippet count and how long its finalizeBuild took. */
async function buildLibrary(kernel: Kernel, id: string, title: string, description: string, batches: Iterable<Snippet[]>): Promise<{ snippets: number; finalizeMs: number }> {
  const { store } = kernel;
  await store.upsertLibrary({ id, title, description, source: { kind: 'upload', spec: { path: `generated${id}` } } });
  const build = await store.beginBuild(id, '', null);
  let n = 0;
  for (const batch of batches) {
    await store.addSnippets(build, batch);
    n += batch.length;
  }
  const t = performance.now();
  await store.finalizeBuild(build);
  return { snippets: n, finalizeMs: performance.now() - t };
}

/**
 * A library's snippets in batches of about 5,000, until about `snippets`: generated directly, or
 * (`--chunker`) generated pages through the markdown chunker (about one snippet a section).
 */
function* snippetsOf(kernel: Kernel, vocab: Vocabulary, random: () => number, snippets: number, sectionsPerPage: number): Generator<Snippet[]> {
  const chunker = values.chunker ? kernel.chunkerFor('markdown') : null;
  let batch: Snippet[] = [];
  let n = 0;
  for (let i = 0; n < snippets; i++) {
    const path = `guide/part-${Math.floor(i / 100)}/page-${i}.md`;
    const page = chunker ? chunker.chunk({ path, format: 'markdown', content: generatePage(vocab, random, sectionsPerPage) }) : generatePageSnippets(vocab, random, path, sectionsPerPage);
    batch.push(...page);
    n += page.length;
    if (batch.length >= 5000) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

async function build(): Promise<Record<string, unknown>> {
  const kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), { env: { dataDir, mode: 'writer', port: 0 }, logger: createConsoleLogger('warn') });
  await kernel.open();
  const vocab = new Vocabulary(SEED);
  const random = rng(SEED + 1);
  const tSmall = performance.now();
  let smallSnippets = 0;
  const finalizeMs: number[] = [];
  const used = new Set<string>([BIG]);
  for (let i = 0; i < LIBRARIES - 1; i++) {
    const name = vocab.libraryName(random, i);
    const id = `/docs/${name}`;
    if (used.has(id)) continue;
    used.add(id);
    const size = Math.min(20, SMALL_MAX) + Math.floor(random() * Math.max(0, SMALL_MAX - 20));
    const built = await buildLibrary(kernel, id, vocab.title(name), vocab.sentence(random, 12), snippetsOf(kernel, vocab, random, size, 8));
    smallSnippets += built.snippets;
    finalizeMs.push(built.finalizeMs);
    if ((i + 1) % 100 === 0) log(`${i + 1} small libraries built`);
  }
  const smallSeconds = seconds(tSmall);
  log(`building ${BIG} (about ${SNIPPETS} snippets)`);
  const tBig = performance.now();
  const cpuBig = process.cpuUsage();
  const big = await buildLibrary(kernel, BIG, 'Scale Big', 'A generated library for the scale benchmark.', snippetsOf(kernel, vocab, random, SNIPPETS, 12));
  const bigCpu = process.cpuUsage(cpuBig);
  const bigSeconds = seconds(tBig);
  log(`${BIG}: ${big.snippets} snippets in ${bigSeconds} s (finalize ${Math.round(big.finalizeMs)} ms)`);
  await kernel.close();
  // Catalog growth: a finalize persists the sql.js database; compare the first and last hundred.
  const mean = (xs: number[]) => (xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length) : null);
  const files = (ext: string) => readdirSync(join(dataDir, 'segments')).filter((f) => f.endsWith(ext)).reduce((sum, f) => sum + statSync(join(dataDir, 'segments', f)).size, 0);
  return {
    snippets: values.chunker ? 'markdown chunker over generated pages' : 'generated directly in the chunker\'s shapes (--chunker for the chunker)',
    libraries: used.size,
    smallLibrarySnippets: smallSnippets,
    smallLibrariesSeconds: smallSeconds,
    smallFinalizeMs: { first100: mean(finalizeMs.slice(0, 100)), last100: mean(finalizeMs.slice(-100)) },
    bigLibrarySnippets: big.snippets,
    bigLibrarySeconds: bigSeconds,
    bigFinalizeSeconds: round(big.finalizeMs / 1000),
    bigBuildCpuSeconds: round((bigCpu.user + bigCpu.system) / 1e6),
    buildPeakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    databaseMb: round(statSync(join(dataDir, 'refdesk.sqlite')).size / 1048576),
    segmentsMb: round(files('.seg') / 1048576),
    packsMb: round(files('.pack') / 1048576),
  };
}

/**
 * CPU time (user + system) the process has used, in ms, from /proc/<pid>/stat: on this shared
 * machine wall times are inflated by the load, the server's own CPU per request is not.
 */
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** timed(), with the server's mean CPU ms per request beside the wall times. */
async function timedWithCpu(pid: number, base: string, key: string, urls: string[]): Promise<{ ms: number[]; serverCpuMsPerRequest: number }> {
  const before = cpuMs(pid);
  const ms = await timed(base, key, urls);
  return { ms, serverCpuMsPerRequest: round((cpuMs(pid) - before) / urls.length) };
}

/**
 * The parts of the largest segment file (the big library's), from its header: the index part is
 * read whole when the segment is opened, the snippet and postings parts (format 2) by record and
 * by term.
 */
function bigSegmentParts(): Record<string, number> | null {
  const dir = join(dataDir, 'segments');
  const segs = readdirSync(dir)
    .filter((f) => f.endsWith('.seg'))
    .map((f) => ({ f, size: statSync(join(dir, f)).size }))
    .sort((a, b) => b.size - a.size);
  if (segs.length === 0) return null;
  const fd = openSync(join(dir, segs[0].f), 'r');
  try {
    const header = Buffer.alloc(256);
    readSync(fd, header, 0, 256, 0);
    const mb = (n: number) => round(n / 1048576);
    return {
      format: header.readUInt32LE(8),
      fileMb: mb(segs[0].size),
      indexPartMb: mb(header.readDoubleLE(16)),
      snippetPartMb: mb(header.readDoubleLE(24)),
      postingsPartMb: header.readUInt32LE(8) >= 2 ? mb(header.readDoubleLE(144)) : 0,
      snippets: header.readUInt32LE(32),
      sections: header.readUInt32LE(36),
      terms: header.readUInt32LE(40),
    };
  } finally {
    closeSync(fd);
  }
}

function rssMb(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

async function serve(dir: string): Promise<LaunchedServer> {
  return launchServer(ROOT, dir, [join(ROOT, 'bin', 'refdesk.js'), 'serve']);
}

async function stop(s: LaunchedServer): Promise<void> {
  if (s.child.exitCode !== null) return;
  await new Promise<void>((r) => {
    s.child.once('exit', () => r());
    s.child.kill('SIGTERM');
  });
}

/** Timed sequential GETs; every answer must be 200. */
async function timed(base: string, key: string, urls: string[]): Promise<number[]> {
  const ms: number[] = [];
  for (const u of urls) {
    const t = performance.now();
    const res = await fetch(base + u, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${res.status} for ${u}`);
    ms.push(performance.now() - t);
  }
  return ms;
}

const summary = (ms: number[]) => ({ n: ms.length, p50Ms: round(percentile(ms, 50)), p90Ms: round(percentile(ms, 90)), p99Ms: round(percentile(ms, 99)), maxMs: round(Math.max(...ms)) });
const round = (x: number) => Math.round(x * 100) / 100;

async function measure(): Promise<Record<string, unknown>> {
  // The baseline: the same server on an empty data directory, after a few answers.
  const emptyDir = mkdtempSync(join(tmpdir(), 'refdesk-scale-empty-'));
  const empty = await serve(emptyDir);
  await fetch(`${empty.baseUrl}/api/v2/libs/search?libraryName=x&query=y`).then((r) => r.arrayBuffer());
  const baselineRssMb = rssMb(empty.child.pid!);
  await stop(empty);
  rmSync(emptyDir, { recursive: true, force: true });

  const kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), { env: { dataDir, mode: 'writer', port: 0 }, logger: createConsoleLogger('warn') });
  await kernel.open();
  const key = await benchApiKey(kernel);
  const libraries = (await kernel.store.listLibraries()).map((l) => l.id);
  const budgetBytes = (kernel.store as unknown as { options?: { segmentCacheBytes?: number } }).options?.segmentCacheBytes ?? 128 * 1024 * 1024;
  await kernel.close();

  const tStart = performance.now();
  const server = await serve(dataDir);
  const pid = server.child.pid!;
  try {
    const base = server.baseUrl;
    const vocab = new Vocabulary(SEED);
    const random = rng(SEED + 7);
    const q = (words: number) => vocab.question(random, words);
    const context = (query: string) => `/api/v2/context?${new URLSearchParams({ libraryId: BIG, query, type: 'json' })}`;
    const tFirst = performance.now();
    await timed(base, key, [context(q(4))]);
    const firstAnswerMs = round(performance.now() - tFirst);
    const startToFirstAnswerS = seconds(tStart);
    const contextRun = await timedWithCpu(pid, base, key, Array.from({ length: QUESTIONS }, (_, i) => context(q(2 + (i % 5)))));
    const contextMs = contextRun.ms;
    const asked: string[] = [];
    const names = Array.from({ length: QUESTIONS }, (_, i) => {
      const lib = libraries[Math.floor(random() * libraries.length)].split('/').pop()!;
      const name = i % 3 === 0 ? lib : i % 3 === 1 ? lib.slice(0, Math.max(3, lib.length >> 1)) : vocab.libraryName(random, 1_000_000 + i);
      asked.push(name);
      return `/api/v2/libs/search?${new URLSearchParams({ libraryName: name, query: q(3) })}`;
    });
    const searchRun = await timedWithCpu(pid, base, key, names);
    const searchMs = searchRun.ms;
    const searchFastRun = await timedWithCpu(pid, base, key, names.map((u) => `${u}&fast=true`));
    // The same names again with other questions: the libraries' segments were each read once.
    const again = asked.map((name) => `/api/v2/libs/search?${new URLSearchParams({ libraryName: name, query: q(3) })}`);
    const searchAgainRun = await timedWithCpu(pid, base, key, again);
    const rss = rssMb(pid);
    const budgetMb = Math.round(budgetBytes / 1024 / 1024);
    const context99 = percentile(contextMs, 99);
    const search99 = percentile(searchMs, 99);
    return {
      bigSegment: bigSegmentParts(),
      server: { startToFirstAnswerS, firstContextAnswerMs: firstAnswerMs },
      context: { ...summary(contextMs), serverCpuMsPerRequest: contextRun.serverCpuMsPerRequest },
      librarySearch: { ...summary(searchMs), serverCpuMsPerRequest: searchRun.serverCpuMsPerRequest },
      librarySearchFast: { ...summary(searchFastRun.ms), serverCpuMsPerRequest: searchFastRun.serverCpuMsPerRequest },
      librarySearchAgain: { ...summary(searchAgainRun.ms), serverCpuMsPerRequest: searchAgainRun.serverCpuMsPerRequest },
      memory: { rssMb: rss, baselineRssMb, segmentCacheMb: budgetMb, budgetMb: baselineRssMb + budgetMb },
      targets: {
        contextP99Under50Ms: context99 <= 50,
        librarySearchP99Under10Ms: search99 <= 10,
        rssWithinBudget: rss <= baselineRssMb + budgetMb,
      },
    };
  } finally {
    await stop(server);
  }
}

/**
 * `--in-process` (with `--skip-build` on a built directory): library search first
 * (librarySearchInProcess; not with `--context-only`, which also leaves the small libraries'
 * segments as they are), then the big library's segment opened in
 * this process (the store rebuilds it first when its format is not this code's), then `--questions`
 * generated context questions asked `--rounds` times (`assembleFromSegment`, limit 200, as a
 * context request), with the CPU time of each question (process.cpuUsage: no HTTP, no other
 * process) and the process's memory. On this shared machine the CPU per question is the figure
 * that compares two versions of the reading code; the wall times are the load's.
 */
async function measureInProcess(): Promise<Record<string, unknown>> {
  const librarySearch = values['context-only'] ? { skipped: true } : await librarySearchInProcess();
  const kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), { env: { dataDir, mode: 'writer', port: 0 }, logger: createConsoleLogger('warn') });
  await kernel.open();
  const tRebuild = performance.now();
  await kernel.store.search(BIG, '', 'warm up', 1);
  const storeFirstSearchMs = round(performance.now() - tRebuild);
  const ref = await kernel.store.segmentFile!(BIG, '');
  await kernel.close();
  if (!ref) throw new Error(`${BIG} has no segment file`);
  const rssBefore = process.memoryUsage().rss;
  const tOpen = performance.now();
  const cpuOpen = process.cpuUsage();
  // `--candidate-sections N`: another candidate limit for large indexes (CandidateLimits), to measure it.
  if (values['candidate-sections']) DEFAULT_CANDIDATES.sections = count('candidate-sections', values['candidate-sections'], 1);
  const segment = openSegment(ref.path, ref.buildId, DEFAULT_BM25, ref.checksum);
  const openCpu = process.cpuUsage(cpuOpen);
  const openMs = round(performance.now() - tOpen);
  const rssOpen = process.memoryUsage().rss;
  const vocab = new Vocabulary(SEED);
  const random = rng(SEED + 7);
  const questions = Array.from({ length: QUESTIONS }, (_, i) => vocab.question(random, 2 + (i % 5)));
  const rounds: Array<Record<string, unknown>> = [];
  /** Each question's answer: its snippets' ids in order (the first round's). */
  const answers: number[][] = [];
  try {
    for (let r = 0; r < count('rounds', values.rounds, 1); r++) {
      const cpu: number[] = [];
      const wall: number[] = [];
      for (const q of questions) {
        const c = process.cpuUsage();
        const t = performance.now();
        const answer = assembleFromSegment(segment, q, 200, 5000);
        wall.push(performance.now() - t);
        const d = process.cpuUsage(c);
        cpu.push((d.user + d.system) / 1000);
        if (r === 0) answers.push(answer.map((s) => s.id));
      }
      const mean = cpu.reduce((a, b) => a + b, 0) / cpu.length;
      rounds.push({ cpuMs: { mean: round(mean), p50: round(percentile(cpu, 50)), p90: round(percentile(cpu, 90)), p99: round(percentile(cpu, 99)) }, wallMs: summary(wall), rssMb: round(process.memoryUsage().rss / 1048576) });
    }
  } finally {
    segment.close();
  }
  if (values.answers) writeFileSync(values.answers, JSON.stringify({ questions, answers }));
  return {
    bigSegment: bigSegmentParts(),
    librarySearch,
    storeFirstSearchMs,
    ...(values.compare ? { answersOverlap: compareAnswers(questions, answers, values.compare) } : {}),
    open: { ms: openMs, cpuMs: round((openCpu.user + openCpu.system) / 1000), rssAddedMb: round((rssOpen - rssBefore) / 1048576) },
    candidates: { ...DEFAULT_CANDIDATES },
    rounds,
  };
}

/**
 * `--compare FILE` (with `--in-process`): how this run's answers compare with another run's
 * (`--answers FILE` of it: the same questions, another version of the code): answers identical
 * (the same snippets in the same order), the same first snippet, and the share of this run's
 * snippets the other answer holds too (mean over questions). The generated questions have no
 * relevance judgements: this says how much the answers moved, not whether they got better.
 */
function compareAnswers(questions: string[], answers: number[][], file: string): Record<string, number> {
  const other = JSON.parse(readFileSync(file, 'utf8')) as { questions: string[]; answers: number[][] };
  if (JSON.stringify(other.questions) !== JSON.stringify(questions)) throw new Error(`--compare ${file}: its questions are not this run's`);
  let identical = 0;
  let sameFirst = 0;
  let shared = 0;
  answers.forEach((mine, i) => {
    const theirs = other.answers[i];
    if (JSON.stringify(mine) === JSON.stringify(theirs)) identical++;
    if (mine.length > 0 && mine[0] === theirs[0]) sameFirst++;
    const held = new Set(theirs);
    shared += mine.length === 0 ? (theirs.length === 0 ? 1 : 0) : mine.filter((id) => held.has(id)).length / mine.length;
  });
  return { questions: answers.length, identical, sameFirst, meanSharedSnippets: round(shared / answers.length) };
}

/**
 * `--in-process`, first: `--questions` library searches (`searchLibraries`, the re-ranking
 * included, as `GET /api/v2/libs/search` without HTTP) over the catalog, names drawn as the server
 * run draws them (existing names, prefixes, unknown names), then the same names again with
 * other questions. CPU per search (process.cpuUsage), the store's searches of a library's
 * documentation it made and how many of those opened a segment file (the embedded store's
 * segmentStats). The store's segments are those of the directory (an old format is rebuilt first
 * by a search of each library, not counted).
 */
async function librarySearchInProcess(): Promise<Record<string, unknown>> {
  const open = async () => {
    const k = await createKernel(join(ROOT, 'config', 'default.yaml'), { env: { dataDir, mode: 'writer', port: 0 }, logger: createConsoleLogger('warn') });
    await k.open();
    return k;
  };
  const warm = await open();
  for (const l of await warm.store.listLibraries()) await warm.store.search(l.id, '', 'warm up', 1);
  await warm.close();
  // Start with no segment open, as a server started on the directory does.
  const kernel = await open();
  const catalog = await kernel.store.listLibraries();
  const stats = () => (kernel.store as unknown as { segmentStats?: { opened: number; rebuilt: number } }).segmentStats ?? { opened: NaN, rebuilt: NaN };
  const store = kernel.store;
  const search = store.search.bind(store);
  let docSearches = 0;
  store.search = (...args) => {
    docSearches++;
    return search(...args);
  };
  const vocab = new Vocabulary(SEED);
  const random = rng(SEED + 11);
  const names = Array.from({ length: QUESTIONS }, (_, i) => {
    const lib = catalog[Math.floor(random() * catalog.length)].id.split('/').pop()!;
    return i % 3 === 0 ? lib : i % 3 === 1 ? lib.slice(0, Math.max(3, lib.length >> 1)) : vocab.libraryName(random, 1_000_000 + i);
  });
  const pass = async (fast: boolean) => {
    const cpu: number[] = [];
    const opened = stats().opened;
    const searches = docSearches;
    for (const name of names) {
      const question = vocab.question(random, 3);
      const c = process.cpuUsage();
      await searchLibraries(kernel, name, question, { fast, libraries: catalog });
      const d = process.cpuUsage(c);
      cpu.push((d.user + d.system) / 1000);
    }
    const mean = cpu.reduce((a, b) => a + b, 0) / cpu.length;
    return { cpuMs: { mean: round(mean), p50: round(percentile(cpu, 50)), p90: round(percentile(cpu, 90)), p99: round(percentile(cpu, 99)) }, documentationSearches: docSearches - searches, segmentOpens: stats().opened - opened };
  };
  try {
    return { first: await pass(false), fast: await pass(true), again: await pass(false), rssMb: round(process.memoryUsage().rss / 1048576) };
  } finally {
    store.search = search;
    await kernel.close();
  }
}

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loadBefore = load();
log(`data directory ${dataDir}`);
const built = values['skip-build'] ? { skipped: true } : await build();
// `--build-only`: stop after the build (its peak RSS and times), no server started.
const measured = values['build-only'] ? {} : values['in-process'] ? await measureInProcess() : await measure();
process.stdout.write(
  `${JSON.stringify({ options: { snippets: SNIPPETS, libraries: LIBRARIES, questions: QUESTIONS, seed: SEED }, loadAverage: { before: loadBefore, after: load() }, build: built, ...measured, totalSeconds: seconds(t0) }, null, 2)}\n`,
);
if (!values.keep && !values['data-dir']) rmSync(dataDir, { recursive: true, force: true });
