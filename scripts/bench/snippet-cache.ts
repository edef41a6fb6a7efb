/**
 * The snippets the in-process benchmark tools work on: each corpus ingested once through the real
 * ingest path (upload source, markdown chunker) and cached in bench-out/cache under a key of the
 * code that makes them, so a change to the chunker or the upload source re-ingests instead of
 * reading stale snippets. Shared by bench:quick, bench:explain and index-time.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SearchHit, StoredSnippet } from '../../core/contracts.ts';
import { defaultConfigPath } from '../../core/config.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { createKernel } from '../../core/kernel.ts';
import type { LexicalIndex } from '../../core/search/lexical-index.ts';
import { createConsoleLogger } from '../../core/services.ts';
import type { CorpusInfo } from './inputs.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE_DIR = join(ROOT, 'bench-out', 'cache');
/** The code whose files decide what snippets a corpus gives. */
const CHUNKING_CODE = ['plugins/chunker-markdown', 'plugins/source-upload', 'core/includes'];

let key: string | undefined;
function cacheFile(corpus: string): string {
  if (!key) {
    const hash = createHash('sha256');
    for (const dir of CHUNKING_CODE) for (const f of readdirSync(join(ROOT, dir)).sort()) hash.update(f).update(readFileSync(join(ROOT, dir, f)));
    key = hash.digest('hex').slice(0, 16);
  }
  return join(CACHE_DIR, `${corpus}-${key}.json`);
}

/** The cached snippets of a corpus made by the current code; undefined when not cached (run bench:quick). */
export function cachedSnippets(corpus: string): StoredSnippet[] | undefined {
  const f = cacheFile(corpus);
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as StoredSnippet[]) : undefined;
}

/** Stored snippets of each corpus: from the cache, the missing ones ingested now and cached. */
export async function loadSnippets(list: CorpusInfo[]): Promise<Map<string, StoredSnippet[]>> {
  const out = new Map<string, StoredSnippet[]>();
  const missing = list.filter((c) => {
    const cached = cachedSnippets(c.name);
    if (cached) out.set(c.name, cached);
    return !cached;
  });
  if (missing.length === 0) return out;
  mkdirSync(CACHE_DIR, { recursive: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'refdesk-quick-'));
  const kernel = await createKernel(defaultConfigPath(), { env: { dataDir, mode: 'writer' }, logger: createConsoleLogger('error') });
  await kernel.open();
  try {
    for (const c of missing) {
      const { job } = await addLibrary(kernel, { source: 'upload', id: c.libraryId, spec: { path: c.dir } });
      const done = await runIngestJob(kernel, job.id);
      if (done.state !== 'succeeded') throw new Error(`${c.name}: ${done.error?.message}`);
      const stored = await kernel.store.getSnippets(c.libraryId, '');
      writeFileSync(cacheFile(c.name), JSON.stringify(stored));
      out.set(c.name, stored);
    }
  } finally {
    await kernel.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return out;
}

/** An index's results as the store's search hits (what context assembly takes). */
export function searchHits(index: LexicalIndex, byId: ReadonlyMap<number, StoredSnippet>, query: string, limit: number): SearchHit[] {
  return index.search(query, limit).map((r) => ({ snippet: byId.get(r.id)!, score: r.score, ...(r.unit ? { unit: r.unit } : {}) }));
}
