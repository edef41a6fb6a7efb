/**
 * The quick, in-process form of the benchmark for tuning: the same snippets (ingested once and
 * cached in bench-out/cache until the chunker changes), the same lexical index and context
 * assembly as the server, judged with the same metrics; no HTTP, no baseline. Prints the figures
 * of the two fixed halves of the questions (scripts/bench/halves.ts: A is tuned on, B validates)
 * side by side per corpus, and the worst corpora, so a change that only helps the half it was
 * tuned on shows.
 *
 *   npm run bench:quick [-- --questions FILE --corpora DIR --verbose]
 *   npm run bench:quick -- --params JSON --moves   also the default run, and which questions
 *        moved: half A's by id (rank of the first gold unit, before -> after), half B's counted
 *        only (the validation half's rankings are not read while tuning)
 */
import { parseArgs } from 'node:util';
import { DEFAULT_ASSEMBLY } from '../../core/context-assembly.ts';
import { DEFAULT_BM25 } from '../../core/search/lexical-index.ts';
import { buildIndexes, DEFAULT_CORPORA, DEFAULT_QUESTIONS, formatMetrics as fmt, loadRun, mergeParams, movesAgainst, runQuestions } from './quick-run.ts';
import { formatHalves } from './halves.ts';

const { values } = parseArgs({
  options: {
    questions: { type: 'string', default: DEFAULT_QUESTIONS },
    corpora: { type: 'string', default: DEFAULT_CORPORA },
    verbose: { type: 'boolean', default: false },
    /** JSON merged into DEFAULT_BM25 (for sweeps), e.g. '{"k1":1.5}'. */
    params: { type: 'string', default: '{}' },
    /** JSON merged into DEFAULT_ASSEMBLY, e.g. '{"relativeCutoff":0.4}'. */
    assembly: { type: 'string', default: '{}' },
    /** Compare with the defaults: half A's moved questions by id, half B's counted. */
    moves: { type: 'boolean', default: false },
  },
});

const { questions, snippets } = await loadRun(values.questions!, values.corpora!);

const params = mergeParams(DEFAULT_BM25, JSON.parse(values.params!));
const assembly = mergeParams(DEFAULT_ASSEMBLY, JSON.parse(values.assembly!));
const r = runQuestions(questions, buildIndexes(snippets, params), assembly);
if (values.verbose) for (const m of r.misses) console.log(m);

for (const [c, m] of Object.entries(r.perCorpus)) console.log(`${c.padEnd(9)} ${fmt(m)}`);
console.log(`half A   ${fmt(r.tuning)}\nhalf B   ${fmt(r.heldOut)}\nmacro    ${fmt(r.macro)}\n`);
console.log(formatHalves(r.perCorpus, r.macro, r.halves));
console.log(`gold file among the first 5: ${r.fileHits5} of ${r.judged} questions; gold section: ${r.sectionHits5}`);
console.log(`tokens p50 ${r.tokensP50} p90 ${r.tokensP90}; search+assembly p50 ${r.searchP50.toFixed(2)} ms p99 ${r.searchP99.toFixed(2)} ms`);

if (values.moves) {
  const m = movesAgainst(runQuestions(questions, buildIndexes(snippets, DEFAULT_BM25), DEFAULT_ASSEMBLY), r);
  const shown = (rank: number | null) => (rank === null ? '-' : String(rank));
  for (const q of m.movedA) console.log(`moved ${q.id}: ${shown(q.before)} -> ${shown(q.after)}`);
  console.log(`moves against the defaults (rank within the first 10): half A ${m.A.up} up, ${m.A.down} down; half B ${m.B.up} up, ${m.B.down} down`);
}
