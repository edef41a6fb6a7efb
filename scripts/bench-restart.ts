/**
 * Measures a server restart on an indexed data directory: the first context answer on the
 * largest library after the store opens, context latency over HTTP, and the process RSS after
 * every library answered once.
 *
 *   npm run bench:restart -- --data DIR [--ingest] [--rounds N]
 *
 * With --ingest, DIR is filled first (every corpus of ../shared/corpora through the real ingest
 * path) and the script exits: run it again without --ingest for a fresh process.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  options: {
    data: { type: 'string' },
    ingest: { type: 'boolean', default: false },
    corpora: { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') },
    rounds: { type: 'string', default: '5' },
  },
});
if (!values.data) throw new Error('--data DIR is required');
const dataDir = resolve(values.data);
const corporaDir = resolve(values.corpora!);
const manifest = JSON.parse(readFileSync(join(corporaDir, 'MANIFEST.json'), 'utf8')) as { corpora: Array<{ name: string }> };

/** The first 20 of bench:query's questions on the python corpus. */
const QUESTIONS = PYTHON_QUESTIONS.slice(0, 20);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

const mb = () => Math.round(process.memoryUsage().rss / 1024 / 1024);

const kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), {
  env: { dataDir, mode: 'server', port: 0 },
  logger: createConsoleLogger('warn'),
});
const tOpen = performance.now();
await kernel.open();
const openMs = performance.now() - tOpen;

if (values.ingest) {
  for (const c of manifest.corpora) {
    const { job } = await addLibrary(kernel, { source: 'upload', name: c.name, spec: { path: join(corporaDir, c.name) } });
    const done = await runIngestJob(kernel, job.id);
    if (done.state !== 'succeeded') throw new Error(`${c.name}: ${done.error?.message}`);
    console.log(`ingested ${c.name}: ${done.progress.snippets} snippets`);
  }
  await kernel.close();
  process.exit(0);
}

const apiKey = await benchApiKey(kernel);
const { app } = createApp(kernel);
const server = createServer(app.callback());
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const ask = async (lib: string, q: string) => {
  const t = performance.now();
  const res = await fetch(`${base}/api/v2/context?${new URLSearchParams({ libraryId: `/docs/${lib}`, query: q, type: 'json' })}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${res.status} for ${lib}: ${q}`);
  return performance.now() - t;
};
const rssOpen = mb();
const firstMs = await ask('python', QUESTIONS[0]);
const lat: number[] = [];
for (let r = 0; r < Number(values.rounds); r++) for (const q of QUESTIONS) lat.push(await ask('python', q));
for (const c of manifest.corpora) await ask(c.name, 'how do I configure it');
global.gc?.();
console.log(`store open ${openMs.toFixed(0)} ms, rss after open ${rssOpen} MB`);
console.log(`first answer on /docs/python after restart: ${firstMs.toFixed(0)} ms`);
console.log(`context latency on /docs/python (${lat.length} queries): p50 ${pct(lat, 50).toFixed(2)} ms, p99 ${pct(lat, 99).toFixed(2)} ms`);
console.log(`rss after all ${manifest.corpora.length} libraries answered once: ${mb()} MB`);
server.close();
await kernel.close();
