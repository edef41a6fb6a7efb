/**
 * Library metadata from the source: what a source reports through `ctx.setLibraryMeta` while it
 * reads (title, description, branch, stars...) stored on the library when the build of its
 * default version is finalized, with the trust score (core/trust-score.ts) and the benchmark
 * score (core/self-retrieval.ts) of that build. A title or description the user gave when adding
 * the library wins over the source's; the kernel remembers which ones the user gave, and the
 * source's last `official` and `updatedAt`, in the setting `library.facts` (LibraryFacts).
 */
import type { LibraryMeta, LogLevel, Store } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import type { ContextSearcher } from './query.ts';
import { selfRetrievalScore } from './self-retrieval.ts';
import { trustScore } from './trust-score.ts';

export const TITLE_MAX = 200;
export const DESCRIPTION_MAX = 2000;

/**
 * What the kernel keeps about a library beside its record: which descriptive fields the user
 * gave (they win over the source's), and the source's last `official` and `updatedAt` (a refresh
 * whose source reports nothing new, e.g. an unchanged commit or package, scores the same).
 */
export interface LibraryFacts {
  userTitle?: boolean;
  userDescription?: boolean;
  official?: boolean;
  updatedAt?: string;
}

/** One setting holds the facts of every library, by library ID. */
const FACTS_SETTING = 'library.facts';

async function allFacts(store: Store): Promise<Record<string, LibraryFacts>> {
  const v = await store.getSetting(FACTS_SETTING);
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, LibraryFacts>) : {};
}

export async function getLibraryFacts(store: Store, libraryId: string): Promise<LibraryFacts> {
  const v = (await allFacts(store))[libraryId];
  return v && typeof v === 'object' ? v : {};
}

/** Replaces (or with `undefined` removes) the facts of one library. */
async function setLibraryFacts(store: Store, libraryId: string, facts: LibraryFacts | undefined): Promise<void> {
  const all = await allFacts(store);
  const had = all[libraryId];
  const next = facts && Object.values(facts).some((v) => v !== undefined) ? facts : undefined;
  if (JSON.stringify(had) === JSON.stringify(next)) return;
  if (next) all[libraryId] = next;
  else delete all[libraryId];
  await store.setSetting(FACTS_SETTING, Object.keys(all).length > 0 ? all : undefined);
}

/**
 * Records which fields the user gave when adding a library: given ones are marked; a new library
 * (`existed` false) starts with no facts; a re-add that gives none keeps the marks.
 */
export async function rememberUserFields(store: Store, libraryId: string, given: { title?: string; description?: string }, existed: boolean): Promise<void> {
  const next: LibraryFacts = existed ? { ...(await getLibraryFacts(store, libraryId)) } : {};
  if (given.title !== undefined) next.userTitle = true;
  if (given.description !== undefined) next.userDescription = true;
  await setLibraryFacts(store, libraryId, next);
}

/** One line of plain text: control characters and runs of white space made single spaces. */
function cleanText(v: unknown, max: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  const s = v.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  if (!s) return undefined;
  return s.length > max ? `${s.slice(0, max - 1).trimEnd()}…` : s;
}

/** Merges a source's report over the earlier ones, keeping only well-formed fields. */
export function mergeLibraryMeta(into: LibraryMeta, meta: LibraryMeta): void {
  if (!meta || typeof meta !== 'object') return;
  const title = cleanText(meta.title, TITLE_MAX);
  if (title) into.title = title;
  const description = cleanText(meta.description, DESCRIPTION_MAX);
  if (description) into.description = description;
  const branch = cleanText(meta.branch, 250);
  if (branch) into.branch = branch;
  const homepage = cleanText(meta.homepage, 2000);
  if (homepage) into.homepage = homepage;
  if (typeof meta.stars === 'number' && Number.isFinite(meta.stars) && meta.stars >= 0) into.stars = Math.floor(meta.stars);
  if (typeof meta.official === 'boolean') into.official = meta.official;
  if (typeof meta.updatedAt === 'string' && Number.isFinite(Date.parse(meta.updatedAt))) into.updatedAt = meta.updatedAt;
}

export interface BuildFacts {
  /** Documents in the build. */
  documents: number;
  /** Documents skipped by the source or the kernel (job log lines "skipped ..."). */
  skippedDocuments: number;
  snippets: number;
}

/**
 * Stores the source's metadata, the trust score and the benchmark score on the library after
 * the build of its default version was finalized (its questions searched by `searcher` when given:
 * a server's search pool). Never throws: the build is already served,
 * so a failure here is a warning in the job log and the library keeps its previous fields.
 */
export async function recordLibraryMeta(
  kernel: Kernel,
  libraryId: string,
  meta: LibraryMeta,
  facts: BuildFacts,
  log: (level: LogLevel, message: string) => void,
  searcher?: ContextSearcher,
): Promise<void> {
  const { store } = kernel;
  try {
    const started = Date.now();
    const bench = await selfRetrievalScore(store, libraryId, '', searcher ? { searcher } : {});
    const benchMs = Date.now() - started;
    const library = await store.getLibrary(libraryId);
    if (!library) return;
    const kept = await getLibraryFacts(store, libraryId);
    const official = meta.official ?? kept.official;
    const updatedAt = meta.updatedAt ?? kept.updatedAt;
    const stars = meta.stars ?? library.stars;
    const trust = trustScore({
      localFiles: kernel.sources.get(library.source.kind)?.def.addPayload === 'files',
      official,
      stars,
      updatedAt,
      now: kernel.clock.now(),
      documents: facts.documents,
      skippedDocuments: facts.skippedDocuments,
      snippets: facts.snippets,
    });
    await store.upsertLibrary({
      id: library.id,
      title: (!kept.userTitle && meta.title) || library.title,
      description: (!kept.userDescription && meta.description) || library.description,
      branch: meta.branch ?? library.branch,
      source: library.source,
      stars,
      trustScore: trust,
      benchmarkScore: bench.score,
    });
    await setLibraryFacts(store, libraryId, { ...kept, official, updatedAt });
    log(
      'info',
      `library scores: trust ${trust}/10, benchmark ${bench.score}% (${bench.found} of ${bench.asked} sections found by their own heading in the top 5, ${benchMs} ms)`,
    );
  } catch (e) {
    log('warn', `the library's metadata and scores were not updated: ${(e as Error).message}`);
  }
}
