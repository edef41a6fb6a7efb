/**
 * Measures the foundation's speed: ingest of every corpus in ../shared/corpora through the real
 * ingest path (upload source -> markdown chunker -> embedded store), then context-query latency
 * over HTTP on the largest library.
 *
 *   npm run bench:query [-- --corpora DIR] [--rounds N]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PYTHON_QUESTIONS } from './bench/python-questions.ts';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createKernel } from '../core/kernel.ts';
import { createConsoleLogger } from '../core/services.ts';
import { addLibrary, runIngestJob } from '../core/ingest.ts';
import { createApp } from '../server/app.ts';
import { benchApiKey } from './bench/api-key.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: { corpora: { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') }, rounds: { type: 'string', default: '5' } },
});
const corporaDir = resolve(values.corpora!);
const rounds = Number(values.rounds);
const manifest = JSON.parse(readFileSync(join(corporaDir, 'MANIFEST.json'), 'utf8')) as { corpora: Array<{ name: string; bytes: number }> };


function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'refdesk-bench-'));
  const kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), {
    env: { dataDir, mode: 'server', port: 0 },
    logger: createConsoleLogger('error'),
  });
  await kernel.open();
  const rows: Array<{ name: string; ms: number; files: number; snippets: number; bytes: number }> = [];
  const t0 = performance.now();
  for (const c of manifest.corpora) {
    const t = performance.now();
    const { job } = await addLibrary(kernel, { source: 'upload', name: c.name, spec: { path: join(corporaDir, c.name) } });
    const done = await runIngestJob(kernel, job.id);
    if (done.state !== 'succeeded') throw new Error(`${c.name}: ${done.error?.message}`);
    rows.push({ name: c.name, ms: Math.round(performance.now() - t), files: done.progress.files ?? 0, snippets: done.progress.snippets ?? 0, bytes: c.bytes });
  }
  const totalMs = Math.round(performance.now() - t0);
  console.log('corpus      files  snippets     bytes   ingest ms');
  for (const r of rows) console.log(`${r.name.padEnd(10)} ${String(r.files).padStart(6)} ${String(r.snippets).padStart(9)} ${String(r.bytes).padStart(9)} ${String(r.ms).padStart(10)}`);
  const sum = (k: 'files' | 'snippets' | 'bytes') => rows.reduce((n, r) => n + r[k], 0);
  console.log(`${'total'.padEnd(10)} ${String(sum('files')).padStart(6)} ${String(sum('snippets')).padStart(9)} ${String(sum('bytes')).padStart(9)} ${String(totalMs).padStart(10)}`);

  const largest = rows.reduce((a, b) => (b.snippets > a.snippets ? b : a));
  const apiKey = await benchApiKey(kernel);
  const { app } = createApp(kernel);
  const server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const questions = largest.name === 'python' ? PYTHON_QUESTIONS : PYTHON_QUESTIONS.map((q) => `${largest.name} ${q}`);
  const ask = async (q: string) => {
    const t = performance.now();
    const res = await fetch(`${base}/api/v2/context?${new URLSearchParams({ libraryId: `/docs/${largest.name}`, query: q, type: 'json' })}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${res.status} for ${q}`);
    return performance.now() - t;
  };
  const coldStart = performance.now();
  await ask(questions[0]); // builds the lexical index of the library
  const firstMs = performance.now() - coldStart;
  const lat: number[] = [];
  for (let r = 0; r < rounds; r++) for (const q of questions) lat.push(await ask(q));
  console.log(
    `\ncontext latency over HTTP on /docs/${largest.name} (${largest.snippets} snippets, ${lat.length} queries): ` +
      `p50 ${pct(lat, 50).toFixed(2)} ms, p99 ${pct(lat, 99).toFixed(2)} ms, max ${Math.max(...lat).toFixed(2)} ms; first query (index build) ${firstMs.toFixed(0)} ms`,
  );
  console.log(`rss ${Math.round(process.memoryUsage().rss / 1024 / 1024)} MB`);
  server.close();
  await kernel.close();
  rmSync(dataDir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
