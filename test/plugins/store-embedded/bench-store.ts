/**
 * Not a test: measures the embedded store on a large build.
 *   npx tsx test/plugins/store-embedded/bench-store.ts [snippetCount=100000] [batchSize=1000]
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Snippet } from '../../../core/contracts.ts';
import { writeFileAtomic } from '../../../plugins/store-embedded/atomic-write.ts';
import { EmbeddedStore } from '../../../plugins/store-embedded/embedded-store.ts';

const count = Number(process.argv[2] ?? 100_000);
const batch = Number(process.argv[3] ?? 1000);
const words = 'context middleware router request response stream body header cookie session error handler async await'.split(' ');

function snippet(i: number): Snippet {
  const w = (k: number) => words[(i * 7 + k * 13) % words.length];
  const code = i % 2 === 0;
  return {
    type: code ? 'code' : 'info',
    title: `Using ${w(1)} with ${w(2)} #${i}`,
    description: code ? `Shows how ${w(3)} sets the ${w(4)}.` : '',
    language: code ? 'js' : '',
    code: code ? `app.use(async (ctx, next) => {\n  ctx.${w(5)} = '${w(6)}';\n  await next();\n});` : '',
    content: code ? '' : `The ${w(7)} is passed to the ${w(8)} before the ${w(9)} runs. See also ${w(10)}.`,
    breadcrumb: ['Guide', `Page ${i % 500}`, `Section ${i}`],
    pageTitle: `Page ${i % 500}`,
    sourcePath: `docs/page-${i % 500}.md`,
    sourceUrl: `https://example.com/docs/page-${i % 500}`,
    anchor: `section-${i}`,
    lineStart: i,
    lineEnd: i + 5,
    tokens: 40,
  };
}

const dir = await mkdtemp(join(tmpdir(), 'refdesk-bench-'));
const logger = { log() {}, debug() {}, info() {}, warn() {}, error() {} };
const store = new EmbeddedStore({ flushIntervalMs: 60_000 }, { env: { dataDir: dir, mode: 'writer' }, logger, clock: { now: () => new Date() } });
try {
  await store.open();
  await store.upsertLibrary({ id: '/bench/lib', title: 'Bench', source: { kind: 'upload', spec: {} } });
  const all = Array.from({ length: count }, (_, i) => snippet(i));

  let t = performance.now();
  const buildId = await store.beginBuild('/bench/lib', '', null);
  for (let i = 0; i < all.length; i += batch) await store.addSnippets(buildId, all.slice(i, i + batch));
  const tAdd = performance.now() - t;
  t = performance.now();
  const v = await store.finalizeBuild(buildId); // includes one export + atomic write
  const tFinalize = performance.now() - t;

  t = performance.now();
  const data = store.database.requireDb().export();
  const tExport = performance.now() - t;
  t = performance.now();
  await writeFileAtomic(store.file, data);
  const tWrite = performance.now() - t;

  t = performance.now();
  const snippets = await store.getSnippets('/bench/lib', '');
  const tLoad = performance.now() - t;
  t = performance.now();
  await store.search('/bench/lib', '', 'cookie session', 10);
  const tFirstSearch = performance.now() - t;
  t = performance.now();
  const n = 50;
  for (let i = 0; i < n; i++) await store.search('/bench/lib', '', `${words[i % words.length]} middleware`, 10);
  const tSearch = (performance.now() - t) / n;

  const size = (await stat(store.file)).size;
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  console.log(`snippets: ${v.totalSnippets} (batches of ${batch}); file ${(size / 1e6).toFixed(1)} MB`);
  console.log(`addSnippets total: ${ms(tAdd)} (${Math.round(count / (tAdd / 1000))} snippets/s)`);
  console.log(`finalizeBuild (incl. persist): ${ms(tFinalize)}`);
  console.log(`db.export(): ${ms(tExport)}; writeFileAtomic: ${ms(tWrite)}`);
  console.log(`getSnippets cold (load ${snippets.length}): ${ms(tLoad)}; first search (builds index): ${ms(tFirstSearch)}; warm search avg: ${(tSearch).toFixed(2)} ms`);
  console.log(`rss: ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
} finally {
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
