/** The benchmark's summary (summary.json's shape) and its printed table. */
import { aggregate, percentile, type Metrics } from './metrics.ts';
import type { HalvesFigures } from './halves.ts';

export interface SystemSummary {
  macro: Metrics;
  perCorpus: Record<string, Metrics>;
  tokens: { p50: number; p90: number };
  latencyMs: { p50: number; p95: number; p99: number };
  /** The figures of each fixed half of the questions (scripts/bench/halves.ts). */
  halves?: HalvesFigures;
}

export interface IngestFigures {
  ms: number;
  snippets: number;
  bytes: number;
}

export interface Summary {
  questions: number;
  /**
   * bm25Sections: plain BM25 over the pages' heading sections (npm run bench -- --baseline sections).
   * `reranked`: with --llm-base-url, the answers reranked by that LLM (`refdesk` is then fast=true).
   */
  systems: { refdesk: SystemSummary; minisearch: SystemSummary; bm25Sections?: SystemSummary; reranked?: SystemSummary };
  ingest: Record<string, IngestFigures>;
  /** The LLM of a reranked run (the environment variable its key came from, never the key). */
  llm?: { baseUrl: string; model: string; keyFrom: string | null };
  /** The embedder Refdesk searched with (hybrid), when the run had one: `model @ host`. */
  embedder?: string;
}

/** One system's figures from its judged questions, answer sizes and latencies. */
export function systemSummary(judged: ReadonlyArray<{ corpus: string; metrics: Metrics }>, tokens: readonly number[], latencies: readonly number[]): SystemSummary {
  const { macro, perCorpus } = aggregate(judged);
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    macro: roundMetrics(macro),
    perCorpus: Object.fromEntries(Object.entries(perCorpus).map(([k, m]) => [k, roundMetrics(m)])),
    tokens: { p50: percentile(tokens, 50), p90: percentile(tokens, 90) },
    latencyMs: { p50: round(percentile(latencies, 50)), p95: round(percentile(latencies, 95)), p99: round(percentile(latencies, 99)) },
  };
}

function roundMetrics(m: Metrics): Metrics {
  const out = { ...m };
  for (const k of Object.keys(out) as Array<keyof Metrics>) if (k !== 'n') out[k] = Math.round(out[k] * 1000) / 1000;
  return out;
}

const COLS = ['hit@1', 'hit@5', 'hit@10', 'recall@5', 'mrr@10', 'ndcg@10'] as const;

/** The printed table: per corpus and macro, both systems side by side, then sizes and speed. */
export function formatTable(s: Summary): string {
  const { refdesk: r, minisearch: b } = s.systems;
  const lines: string[] = s.embedder ? [`refdesk: hybrid search with ${s.embedder}`] : [];
  const head = 'corpus      n  ' + COLS.map((c) => c.padStart(9)).join('') + '   | minisearch ' + ['hit@5', 'mrr@10', 'ndcg@10'].map((c) => c.padStart(8)).join('');
  lines.push(head, '-'.repeat(head.length));
  const row = (name: string, m: Metrics, base: Metrics) =>
    name.padEnd(10) +
    String(m.n).padStart(4) +
    '  ' +
    COLS.map((c) => m[c].toFixed(3).padStart(9)).join('') +
    '   |            ' +
    [base['hit@5'], base['mrr@10'], base['ndcg@10']].map((x) => x.toFixed(3).padStart(8)).join('');
  for (const corpus of Object.keys(r.perCorpus)) lines.push(row(corpus, r.perCorpus[corpus], b.perCorpus[corpus]));
  lines.push('-'.repeat(head.length), row('macro', r.macro, b.macro));
  lines.push('');
  lines.push(`answer size (tokens)  refdesk p50 ${r.tokens.p50}, p90 ${r.tokens.p90}   minisearch top-10 p50 ${b.tokens.p50}, p90 ${b.tokens.p90}`);
  if (s.systems.reranked && s.llm) {
    const x = s.systems.reranked;
    lines.push(
      `reranked (${s.llm.model} at ${s.llm.baseUrl})  ` + COLS.map((c) => `${c} ${x.macro[c].toFixed(3)}`).join(', '),
      `reranked latency (ms)  p50 ${x.latencyMs.p50}, p95 ${x.latencyMs.p95} (uncached; lexical fast=true p50 ${r.latencyMs.p50}: +${Math.round((x.latencyMs.p50 - r.latencyMs.p50) * 100) / 100} per query)`,
    );
  }
  lines.push(`latency (ms)          refdesk over HTTP p50 ${r.latencyMs.p50}, p95 ${r.latencyMs.p95}, p99 ${r.latencyMs.p99}   minisearch in process p50 ${b.latencyMs.p50}, p99 ${b.latencyMs.p99}`);
  const ingest = Object.entries(s.ingest)
    .filter(([k]) => k !== 'total')
    .map(([k, v]) => `${k} ${(v.ms / 1000).toFixed(1)}s/${v.snippets}`)
    .join(', ');
  const t = s.ingest.total;
  if (s.systems.bm25Sections) lines.push('', formatSystem('bm25 over sections', s.systems.bm25Sections));
  lines.push(`ingest                total ${(t.ms / 1000).toFixed(1)} s, ${t.snippets} snippets, ${(t.bytes / 1e6).toFixed(1)} MB (${ingest})`);
  return lines.join('\n');
}

/** One system's figures alone: per corpus and macro. */
export function formatSystem(name: string, sys: SystemSummary): string {
  const head = name.padEnd(20) + '   n' + COLS.map((c) => c.padStart(9)).join('');
  const row = (corpus: string, m: Metrics) => corpus.padEnd(20) + String(m.n).padStart(4) + COLS.map((c) => m[c].toFixed(3).padStart(9)).join('');
  const lines = [head, '-'.repeat(head.length), ...Object.entries(sys.perCorpus).map(([c, m]) => row(c, m)), row('macro', sys.macro)];
  lines.push(`answer size (tokens)  top-10 p50 ${sys.tokens.p50}, p90 ${sys.tokens.p90}`);
  return lines.join('\n');
}
