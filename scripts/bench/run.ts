/**
 * The retrieval benchmark (issue 7), in one run on one machine, fully offline:
 *  1. indexes every corpus of the corpora folder (MANIFEST.json) into a fresh data directory
 *     through Refdesk's ingest path (upload source -> chunker -> embedded store), timing each;
 *  2. starts the real server (server/main.ts) on that directory and asks every question through
 *     GET /api/v2/context?type=json, judging the returned snippets against the gold;
 *  3. asks the same questions of MiniSearch (default BM25) over exactly the stored snippets;
 *  4. with --baseline sections, also asks a plain BM25 over the heading sections of the same pages
 *     (section-baseline.ts: the issue 22 baseline);
 *  5. writes summary.json (and questions.json, every question's result) and prints a table.
 *
 *   npm run bench -- --questions FILE.jsonl [--corpora DIR] [--out DIR] [--only a,b] [--rounds N] [--keep] [--baseline sections]
 *                    [--llm-base-url URL --llm-model M [--llm-api-key ENV_VAR]]
 *                    [--embedder-base-url URL --embedder-model NAME [--embedder-key-env VAR] | --loopback-embedder]
 *
 * With --llm-base-url (scripts/bench/llm-flags.ts) the questions are asked twice: fast=true
 * (system `refdesk`, no LLM) and reranked by that LLM (system `reranked`, latency of the first,
 * uncached round). With an embedder (scripts/bench/embedder.ts) the libraries are embedded at
 * ingest and Refdesk answers with hybrid search (summary.json `embedder`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { StoredSnippet } from '../../core/contracts.ts';
import { defaultConfigPath } from '../../core/config.ts';
import { benchApiKey } from './api-key.ts';
import { EMBEDDER_OPTIONS, benchEmbedder, useBenchEmbedder, type BenchEmbedder } from './embedder.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { createKernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { buildBaseline } from './baseline.ts';
import { buildSectionBaseline, readSectionDocs } from './section-baseline.ts';
import { benchLlmFrom, configureBenchLlm, LLM_OPTIONS, type BenchLlm } from './llm-flags.ts';
import { readCorpora, readQuestions, type CorpusInfo } from './inputs.ts';
import { hasGold, judgeQuestion, goldRanks, percentile, type BenchQuestion, type Metrics, type RetrievedRef } from './metrics.ts';
import { startServer } from './server-process.ts';
import { formatTable, systemSummary, type IngestFigures, type Summary } from './summary.ts';
import { byHalf, formatHalves } from './halves.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Answer {
  refs: RetrievedRef[];
  tokens: number;
  ms: number;
}

interface ContextSnippetJson {
  rank?: number;
  codeTokens?: number;
  contentTokens?: number;
  source: { path: string; lineStart: number; lineEnd: number };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      questions: { type: 'string' },
      corpora: { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') },
      out: { type: 'string', default: join(ROOT, 'bench-out') },
      only: { type: 'string' },
      rounds: { type: 'string', default: '3' },
      keep: { type: 'boolean', default: false },
      baseline: { type: 'string' },
      ...LLM_OPTIONS,
      ...EMBEDDER_OPTIONS,
    },
  });
  const llm = benchLlmFrom(values, process.env);
  if (!values.questions) throw new Error('Give the questions: npm run bench -- --questions FILE.jsonl');
  if (values.baseline !== undefined && values.baseline !== 'sections') throw new Error('--baseline takes "sections" (plain BM25 over the pages\' heading sections).');
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer.');
  // Checked before anything is read (a missing key variable fails at once; main's catch exits).
  const embedder = await benchEmbedder(values);
  const only = values.only ? new Set(values.only.split(',').map((s) => s.trim())) : null;
  let corpora = readCorpora(resolve(values.corpora!));
  let questions = readQuestions(resolve(values.questions));
  if (only) {
    corpora = corpora.filter((c) => only.has(c.name));
    questions = questions.filter((q) => only.has(q.corpus));
  }
  const byName = new Map(corpora.map((c) => [c.name, c]));
  for (const q of questions) {
    const c = byName.get(q.corpus);
    if (!c) throw new Error(`Question ${q.id} names corpus "${q.corpus}", which the manifest does not list.`);
    if (c.libraryId !== q.library) throw new Error(`Question ${q.id} asks library ${q.library}, but corpus ${q.corpus} is ${c.libraryId} in the manifest.`);
  }
  const outDir = resolve(values.out!);
  mkdirSync(outDir, { recursive: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'refdesk-bench-'));
  try {
    const { ingest, snippets } = await ingestAll(dataDir, corpora, new Set(questions.map((q) => q.corpus)), llm, embedder);
    const sectionDirs = values.baseline === 'sections' ? new Map(corpora.map((c) => [c.name, c.dir])) : null;
    const summary = await askAll(dataDir, questions, snippets, ingest, rounds, outDir, sectionDirs, llm);
    if (embedder) summary.embedder = embedder.label;
    writeFileSync(join(outDir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
    console.log('\n' + formatTable(summary));
    const r = summary.systems.refdesk;
    if (r.halves) console.log(`\nrefdesk by half of the questions (A tuned on, B validates):\n${formatHalves(r.perCorpus, r.macro, r.halves)}`);
    console.log(`\nwrote ${join(outDir, 'summary.json')} and questions.json`);
  } finally {
    await embedder?.close();
    if (values.keep) console.log(`data directory kept: ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The API key the questions are asked with (made on the data directory in step 1). */
let apiKey = '';

/** Step 1: every corpus through the real ingest path, timed; the stored snippets of the asked ones. */
async function ingestAll(dataDir: string, corpora: CorpusInfo[], asked: Set<string>, llm: BenchLlm | null, embedder: BenchEmbedder | null) {
  const kernel = await createKernel(defaultConfigPath(), { env: { dataDir, mode: 'writer' }, logger: createConsoleLogger('error') });
  await kernel.open();
  if (embedder) await useBenchEmbedder(kernel, embedder);
  const ingest: Record<string, IngestFigures> = {};
  const snippets = new Map<string, StoredSnippet[]>();
  const total: IngestFigures = { ms: 0, snippets: 0, bytes: 0 };
  const t0 = performance.now();
  try {
    for (const c of corpora) {
      const t = performance.now();
      const { job } = await addLibrary(kernel, { source: 'upload', id: c.libraryId, title: c.name, spec: { path: c.dir } });
      const done = await runIngestJob(kernel, job.id);
      if (done.state !== 'succeeded') throw new Error(`Indexing ${c.name} failed: ${done.error?.message}`);
      const ms = Math.round(performance.now() - t);
      ingest[c.name] = { ms, snippets: done.progress.snippets ?? 0, bytes: done.progress.bytes || c.bytes };
      total.snippets += ingest[c.name].snippets;
      total.bytes += ingest[c.name].bytes;
      process.stdout.write(`indexed ${c.name}: ${ingest[c.name].snippets} snippets in ${ms} ms\n`);
      if (asked.has(c.name)) snippets.set(c.name, await kernel.store.getSnippets(c.libraryId, ''));
    }
    total.ms = Math.round(performance.now() - t0);
    ingest.total = total;
    // Questions go with a key of the most generous plan, as a client of the service would, so
    // the anonymous rate limit does not cut the run short.
    apiKey = await benchApiKey(kernel);
    if (llm) await configureBenchLlm(kernel, llm);
  } finally {
    await kernel.close();
  }
  return { ingest, snippets };
}

/** Steps 2-3: the questions over HTTP to a server on the data directory, and to the baseline. */
async function askAll(
  dataDir: string,
  questions: BenchQuestion[],
  snippets: Map<string, StoredSnippet[]>,
  ingest: Record<string, IngestFigures>,
  rounds: number,
  outDir: string,
  sectionDirs: Map<string, string> | null,
  llm: BenchLlm | null,
): Promise<Summary> {
  const server = await startServer(ROOT, dataDir);
  const refdesk = new Map<string, Answer>();
  const latencies: number[] = [];
  const reranked = new Map<string, Answer>();
  const rerankedLatencies: number[] = [];
  // With an LLM, `refdesk` is the lexical answer (fast=true); without, fast changes nothing.
  const fast = llm !== null;
  try {
    // The first query of a library loads its snippets and builds its index: done once, untimed.
    for (const lib of new Set(questions.map((q) => q.library))) await askRefdesk(server.baseUrl, lib, 'warm up', fast);
    for (let r = 0; r < rounds; r++) {
      for (const q of questions) {
        const a = await askRefdesk(server.baseUrl, q.library, q.question, fast);
        latencies.push(a.ms);
        if (r === 0) refdesk.set(q.id, a);
      }
    }
    // Reranked: once per question (later rounds would be answered from the reranker's cache).
    if (llm) {
      for (const q of questions) {
        const a = await askRefdesk(server.baseUrl, q.library, q.question, false);
        rerankedLatencies.push(a.ms);
        reranked.set(q.id, a);
      }
    }
  } finally {
    await server.stop();
  }

  const baselines = new Map([...snippets].map(([corpus, list]) => [corpus, buildBaseline(list)]));
  const minisearch = new Map<string, Answer>();
  const baseLatencies: number[] = [];
  for (const q of questions) {
    const t = performance.now();
    const top = baselines.get(q.corpus)!.search(q.question, 10);
    const ms = performance.now() - t;
    baseLatencies.push(ms);
    minisearch.set(q.id, { refs: top.map(refOf), tokens: top.reduce((n, s) => n + s.tokens, 0), ms });
  }

  // The section baseline: the same pages Refdesk stored snippets of, cut at their headings.
  const sectionAnswers = sectionDirs ? new Map<string, Answer>() : null;
  const sectionLatencies: number[] = [];
  if (sectionDirs && sectionAnswers) {
    const indexes = new Map([...snippets].map(([corpus, list]) => [corpus, buildSectionBaseline(readSectionDocs(sectionDirs.get(corpus)!, list.map((s) => s.sourcePath)))]));
    for (const q of questions) {
      const t = performance.now();
      const top = indexes.get(q.corpus)!.search(q.question, 10);
      const ms = performance.now() - t;
      sectionLatencies.push(ms);
      sectionAnswers.set(q.id, { refs: top.map((s) => ({ path: s.path, lineStart: s.lineStart, lineEnd: s.lineEnd })), tokens: top.reduce((n, s) => n + s.tokens, 0), ms });
    }
  }

  const judged = (answers: Map<string, Answer>) =>
    questions.filter(hasGold).map((q) => ({ id: q.id, corpus: q.corpus, metrics: judgeQuestion(answers.get(q.id)!.refs, q.gold) }));
  const tokensOf = (answers: Map<string, Answer>) => questions.map((q) => answers.get(q.id)!.tokens);
  const summary: Summary = {
    questions: questions.length,
    systems: {
      refdesk: { ...systemSummary(judged(refdesk), tokensOf(refdesk), latencies), halves: byHalf(judged(refdesk)) },
      minisearch: systemSummary(judged(minisearch), tokensOf(minisearch), baseLatencies),
      ...(sectionAnswers ? { bm25Sections: systemSummary(judged(sectionAnswers), tokensOf(sectionAnswers), sectionLatencies) } : {}),
      ...(llm ? { reranked: systemSummary(judged(reranked), tokensOf(reranked), rerankedLatencies) } : {}),
    },
    ...(llm ? { llm: { baseUrl: llm.baseUrl, model: llm.model, keyFrom: llm.keyFrom } } : {}),
    ingest,
  };
  writeFileSync(join(outDir, 'questions.json'), JSON.stringify(questions.map((q) => details(q, refdesk.get(q.id)!, minisearch.get(q.id)!, sectionAnswers?.get(q.id))), null, 1) + '\n');
  const none = questions.filter((q) => !hasGold(q));
  if (none.length > 0) {
    const t = none.map((q) => refdesk.get(q.id)!.tokens);
    const empty = none.filter((q) => refdesk.get(q.id)!.refs.length === 0).length;
    console.log(`\ntype-none questions (no answer in the docs): ${none.length}, answered with no snippet: ${empty}, tokens p50 ${percentile(t, 50)}`);
  }
  return summary;
}

async function askRefdesk(baseUrl: string, libraryId: string, query: string, fast = false): Promise<Answer> {
  const url = `${baseUrl}/api/v2/context?${new URLSearchParams({ libraryId, query, type: 'json', ...(fast ? { fast: 'true' } : {}) })}`;
  const t = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
  const body = (await res.json()) as { codeSnippets?: ContextSnippetJson[]; infoSnippets?: ContextSnippetJson[]; message?: string };
  const ms = performance.now() - t;
  if (!res.ok) throw new Error(`GET /api/v2/context for ${libraryId} answered ${res.status}: ${body.message ?? ''}`);
  const all = [...(body.codeSnippets ?? []), ...(body.infoSnippets ?? [])];
  // Snippets carry their overall rank; without it, code snippets come first, as the response lists them.
  if (all.every((s) => typeof s.rank === 'number')) all.sort((a, b) => a.rank! - b.rank!);
  return {
    refs: all.map((s) => ({ path: s.source.path, lineStart: s.source.lineStart, lineEnd: s.source.lineEnd })),
    tokens: all.reduce((n, s) => n + (s.codeTokens ?? s.contentTokens ?? 0), 0),
    ms,
  };
}

function refOf(s: StoredSnippet): RetrievedRef {
  return { path: s.sourcePath, lineStart: s.lineStart, lineEnd: s.lineEnd };
}

function details(q: BenchQuestion, r: Answer, b: Answer, sec?: Answer) {
  const one = (a: Answer) => {
    const out: { tokens: number; ms: number; goldRanks?: number[]; metrics?: Metrics; top: string[] } = {
      tokens: a.tokens,
      ms: Math.round(a.ms * 100) / 100,
      top: a.refs.slice(0, 10).map((x) => `${x.path}:${x.lineStart}-${x.lineEnd}`),
    };
    if (hasGold(q)) {
      out.goldRanks = goldRanks(a.refs, q.gold).map((x) => (Number.isFinite(x) ? x : 0));
      out.metrics = judgeQuestion(a.refs, q.gold);
    }
    return out;
  };
  return { id: q.id, corpus: q.corpus, type: q.type, question: q.question, refdesk: one(r), minisearch: one(b), ...(sec ? { bm25Sections: one(sec) } : {}) };
}

main().catch((e) => {
  console.error(`bench: ${(e as Error).message}`);
  process.exit(1);
});
