/**
 * A quick retrieval check (not the benchmark harness of issue 7): indexes the corpora that the
 * questions name, asks each question through the query pipeline (in process, not over HTTP) and
 * prints MRR@10, hit@1, hit@5 and the median answer size per corpus and their macro mean.
 *
 *   npm run check:retrieval [-- --questions FILE --corpora DIR]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createKernel } from '../core/kernel.ts';
import { createConsoleLogger } from '../core/services.ts';
import { addLibrary, runIngestJob } from '../core/ingest.ts';
import { getContext } from '../core/query.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    corpora: { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') },
    questions: { type: 'string', default: join(ROOT, '..', 'shared', 'bench', 'questions.jsonl') },
  },
});

interface Gold {
  path: string;
  lines?: [number, number];
}
interface Question {
  corpus: string;
  question: string;
  type: string;
  gold: Gold[];
}

const questions = readFileSync(resolve(values.questions!), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Question);
const dataDir = mkdtempSync(join(tmpdir(), 'refdesk-check-'));
const kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), {
  env: { dataDir, mode: 'writer' },
  logger: createConsoleLogger('error'),
});
await kernel.open();
for (const corpus of [...new Set(questions.map((q) => q.corpus))]) {
  const { job } = await addLibrary(kernel, { source: 'upload', name: corpus, spec: { path: join(resolve(values.corpora!), corpus) } });
  const done = await runIngestJob(kernel, job.id);
  if (done.state !== 'succeeded') throw new Error(`${corpus}: ${done.error?.message}`);
}

const per = new Map<string, { mrr: number; h1: number; h5: number; n: number; tokens: number[] }>();
for (const q of questions) {
  if (q.type === 'none' || q.gold.length === 0) continue;
  const r = await getContext(kernel, { libraryId: `/docs/${q.corpus}`, query: q.question });
  const hit = (i: number) => {
    const s = r.snippets[i];
    return q.gold.some((g) => g.path === s.sourcePath && (!g.lines || (s.lineEnd >= g.lines[0] && s.lineStart <= g.lines[1])));
  };
  let first = Infinity;
  for (let i = 0; i < Math.min(10, r.snippets.length); i++) {
    if (hit(i)) {
      first = i + 1;
      break;
    }
  }
  const p = per.get(q.corpus) ?? { mrr: 0, h1: 0, h5: 0, n: 0, tokens: [] };
  per.set(q.corpus, p);
  p.n++;
  p.mrr += first <= 10 ? 1 / first : 0;
  p.h1 += first === 1 ? 1 : 0;
  p.h5 += first <= 5 ? 1 : 0;
  p.tokens.push(r.totalTokens);
}

let mrr = 0;
let h5 = 0;
console.log('corpus     n   mrr@10  hit@1  hit@5  tokens p50');
for (const [corpus, p] of per) {
  const med = [...p.tokens].sort((a, b) => a - b)[p.tokens.length >> 1];
  console.log(`${corpus.padEnd(9)} ${String(p.n).padStart(3)}   ${(p.mrr / p.n).toFixed(3)}  ${(p.h1 / p.n).toFixed(2)}   ${(p.h5 / p.n).toFixed(3)}  ${med}`);
  mrr += p.mrr / p.n;
  h5 += p.h5 / p.n;
}
console.log(`macro     mrr@10 ${(mrr / per.size).toFixed(3)}  hit@5 ${(h5 / per.size).toFixed(3)}`);
await kernel.close();
rmSync(dataDir, { recursive: true, force: true });
