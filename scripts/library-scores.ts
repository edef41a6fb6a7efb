/**
 * Library metadata and scores of corpora ingested through the real path (upload source ->
 * markdown chunker -> embedded store): title, description, trust score, benchmark score, and the
 * cost of the end-of-build self-retrieval check (core/self-retrieval.ts), split into the first
 * search of the build (loading its snippets and lexical index, which the first query would pay
 * anyway) and the sampled questions themselves.
 *
 *   npx tsx scripts/library-scores.ts [--corpora DIR] [--only python,zod]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createKernel } from '../core/kernel.ts';
import { createConsoleLogger } from '../core/services.ts';
import { addLibrary, runIngestJob } from '../core/ingest.ts';
import { selfRetrievalScore } from '../core/self-retrieval.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: { corpora: { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') }, only: { type: 'string' } },
});
const corporaDir = resolve(values.corpora!);
const manifest = JSON.parse(readFileSync(join(corporaDir, 'MANIFEST.json'), 'utf8')) as { corpora: Array<{ name: string }> };
const only = values.only ? new Set(values.only.split(',')) : null;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'refdesk-scores-'));
  const kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), { env: { dataDir, mode: 'writer' }, logger: createConsoleLogger('error') });
  await kernel.open();
  try {
    for (const c of manifest.corpora) {
      if (only && !only.has(c.name)) continue;
      const { job } = await addLibrary(kernel, { source: 'upload', name: c.name, spec: { path: join(corporaDir, c.name) } });
      const done = await runIngestJob(kernel, job.id);
      if (done.state !== 'succeeded') {
        console.log(`${c.name}: ${done.state} ${done.error?.message ?? ''}`);
        continue;
      }
      const id = `/docs/${c.name}`;
      const lib = (await kernel.store.getLibrary(id))!;
      const line = (await kernel.store.getJobLog(job.id)).find((l) => l.message.startsWith('library scores:'))?.message ?? '';
      // Measured again on a cold cache: the first search (load + index) apart from the questions.
      (kernel.store as unknown as { cache?: { clear(): void } }).cache?.clear();
      // Wall time and this process's CPU time (the latter is less distorted on a busy machine).
      const cpuMs = (since: NodeJS.CpuUsage) => {
        const d = process.cpuUsage(since);
        return (d.user + d.system) / 1000;
      };
      let t = performance.now();
      let c0 = process.cpuUsage();
      await kernel.store.search(id, '', 'warm up', 1);
      const warm = performance.now() - t;
      const warmCpu = cpuMs(c0);
      t = performance.now();
      c0 = process.cpuUsage();
      const bench = await selfRetrievalScore(kernel.store, id, '');
      const questions = performance.now() - t;
      const questionsCpu = cpuMs(c0);
      const top1 = await selfRetrievalScore(kernel.store, id, '', { topK: 1 });
      console.log(
        `${c.name.padEnd(8)} snippets ${String(lib.totalSnippets).padStart(6)}  sections ${String(bench.sections).padStart(5)}  trust ${lib.trustScore}  benchmark ${lib.benchmarkScore}% ` +
          `(${bench.found}/${bench.asked}; top 1: ${top1.score}%)  first search ${warm.toFixed(0)} ms (cpu ${warmCpu.toFixed(0)}), ${bench.asked} questions ${questions.toFixed(0)} ms (cpu ${questionsCpu.toFixed(0)})  title "${lib.title}"`,
      );
      if (!line) console.log(`  (no "library scores" line in the job log)`);
    }
  } finally {
    await kernel.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
