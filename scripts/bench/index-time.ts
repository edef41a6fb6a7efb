/**
 * Times buildLexicalIndex on a cached corpus of bench-out/cache (run bench:quick once so the
 * cache holds it): median and minimum wall time of several builds, their median CPU time (less
 * swayed by other work on the machine), and the memory one index keeps (heap and typed arrays).
 *
 *   npx tsx scripts/bench/index-time.ts [--corpus python] [--runs 5] [--params '{json}']
 */
import { parseArgs } from 'node:util';
import { buildLexicalIndex, DEFAULT_BM25 } from '../../core/search/lexical-index.ts';
import { cachedSnippets } from './snippet-cache.ts';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string', default: 'python' },
    runs: { type: 'string', default: '5' },
    params: { type: 'string', default: '{}' },
  },
});
const snippets = cachedSnippets(values.corpus!);
if (!snippets) {
  console.error(`No cached snippets of ${values.corpus} for the current chunking code (run bench:quick with a question of that corpus).`);
  process.exit(2);
}
const params = { ...DEFAULT_BM25, ...(JSON.parse(values.params!) as object) };
const times: number[] = [];
const cpu: number[] = [];
for (let r = 0; r < Number(values.runs); r++) {
  const t = performance.now();
  const c = process.cpuUsage();
  buildLexicalIndex(snippets, params);
  const spent = process.cpuUsage(c);
  times.push(performance.now() - t);
  cpu.push((spent.user + spent.system) / 1000);
}
times.sort((a, b) => a - b);
cpu.sort((a, b) => a - b);
// The memory one index keeps: heap and typed arrays, after collecting everything else.
const gc = (globalThis as { gc?: () => void }).gc;
const used = () => {
  for (let i = 0; i < 5; i++) gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const before = used();
const kept = buildLexicalIndex(snippets, params);
const memory = used() - before;
console.log(
  `${values.corpus}: ${kept.size} snippets; build median ${times[times.length >> 1].toFixed(0)} ms, min ${times[0].toFixed(0)} ms, CPU median ${cpu[cpu.length >> 1].toFixed(0)} ms` +
    (gc ? `; memory kept ${(memory / 1e6).toFixed(1)} MB` : ' (node --expose-gc for the memory)'),
);
