/**
 * Vector index measurement (issue 21): load and query time of vectra and of the flat Float32
 * matrix (core/vector-index.ts) over one corpus's snippets, embedded with the deterministic hash
 * embedding (test/helpers/hash-embedding.ts: not a model; what is measured is the index, not
 * the quality), plus synthetic sizes to see where each one stops being reasonable.
 *
 *   npx tsx scripts/bench/vector-index.ts [--corpus python] [--dimensions 256,1536] [--sizes 1000,5000,20000] [--queries 50]
 *
 * Timings are wall-clock on this machine and noisy on a shared one: read them as orders of magnitude.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { defaultConfigPath } from '../../core/config.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { createKernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { openVectorIndex, writeVectorIndex, type VectorIndexKind } from '../../core/vector-index.ts';
import { snippetEmbedText } from '../../core/vectors.ts';
import { hashEmbedding } from '../../test/helpers/hash-embedding.ts';
import { readCorpora, readQuestions } from './inputs.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function measure(kind: VectorIndexKind, vectors: Float32Array[], dims: number, queries: Float32Array[]) {
  const dir = mkdtempSync(join(tmpdir(), `refdesk-vi-${kind}-`));
  try {
    await mkdir(dir, { recursive: true });
    let t = performance.now();
    const checksum = await writeVectorIndex(kind, dir, dims, vectors);
    const writeMs = performance.now() - t;
    t = performance.now();
    const index = await openVectorIndex(kind, dir, dims, vectors.length, checksum);
    const loadMs = performance.now() - t;
    t = performance.now();
    for (const q of queries) await index.query(q, 50);
    const queryMs = (performance.now() - t) / queries.length;
    return { writeMs: Math.round(writeMs), loadMs: Math.round(loadMs), queryMs: Math.round(queryMs * 100) / 100 };
  } catch (e) {
    return { error: (e as Error).message.slice(0, 120) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string', default: 'python' },
      corpora: { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') },
      questions: { type: 'string', default: join(ROOT, '..', 'shared', 'bench', 'questions.jsonl') },
      dimensions: { type: 'string', default: '256,1536' },
      sizes: { type: 'string', default: '' },
      queries: { type: 'string', default: '50' },
    },
  });
  const corpus = readCorpora(resolve(values.corpora!)).find((c) => c.name === values.corpus);
  if (!corpus) throw new Error(`No corpus "${values.corpus}" in ${values.corpora}.`);
  // The corpus's own questions when the set has some, else any (only the query vectors matter here).
  const all = readQuestions(resolve(values.questions!));
  const own = all.filter((q) => q.corpus === corpus.name);
  const asked = (own.length > 0 ? own : all).slice(0, Number(values.queries));
  const dataDir = mkdtempSync(join(tmpdir(), 'refdesk-vi-data-'));
  let texts: string[];
  try {
    const kernel = await createKernel(defaultConfigPath(), { env: { dataDir, mode: 'writer' }, logger: createConsoleLogger('error') });
    await kernel.open();
    const { job } = await addLibrary(kernel, { source: 'upload', id: corpus.libraryId, title: corpus.name, spec: { path: corpus.dir } });
    const done = await runIngestJob(kernel, job.id);
    if (done.state !== 'succeeded') throw new Error(`Indexing ${corpus.name} failed: ${done.error?.message}`);
    texts = (await kernel.store.getSnippets(corpus.libraryId, '')).map(snippetEmbedText);
    await kernel.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const rows: Array<Record<string, unknown>> = [];
  for (const dims of values.dimensions!.split(',').map(Number)) {
    const vectors = texts.map((t) => hashEmbedding(t, dims));
    const queries = asked.map((q) => hashEmbedding(q.question, dims));
    for (const kind of ['vectra', 'flat'] as const) rows.push({ set: `${corpus.name}`, n: vectors.length, dims, kind, ...(await measure(kind, vectors, dims, queries)) });
    for (const n of (values.sizes ?? '').split(',').filter(Boolean).map(Number)) {
      const synthetic = Array.from({ length: n }, (_, i) => vectors[i % vectors.length]);
      for (const kind of ['vectra', 'flat'] as const) rows.push({ set: 'synthetic', n, dims, kind, ...(await measure(kind, synthetic, dims, queries)) });
    }
  }
  console.table(rows);
}

main().catch((e) => {
  console.error(`vector-index bench: ${(e as Error).message}`);
  process.exit(1);
});
