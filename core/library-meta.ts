/**
 * Library metadata from the source: what a source reports through `ctx.setLibraryMeta` while it
 * reads (title, description, branch, stars...) stored on the library when the build of its
 * default version is finalized, with the trust score (core/trust-score.ts) and the benchmark
 * score (core/self-retrieval.ts) of that build. A title or description the user gave when adding
 * the library wins over the source's; the kernel remembers which ones the user gave in the
 * setting `library.userFields` (so a refresh does not overwrite them).
 */
import type { LibraryMeta, LogLevel, Store } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { selfRetrievalScore } from './self-retrieval.ts';
import { trustScore } from './trust-score.ts';

export const TITLE_MAX = 200;
export const DESCRIPTION_MAX = 2000;

/** Which descriptive fields of a library the user gave (they win over the source's). */
export interface UserFields {
  title?: boolean;
  description?: boolean;
}

/** One setting holds the marks of every library, by library ID. */
const FIELDS_SETTING = 'library.userFields';

async function allUserFields(store: Store): Promise<Record<string, UserFields>> {
  const v = await store.getSetting(FIELDS_SETTING);
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, UserFields>) : {};
}

export async function getUserFields(store: Store, libraryId: string): Promise<UserFields> {
  const v = (await allUserFields(store))[libraryId];
  return v && typeof v === 'object' ? v : {};
}

/**
 * Records which fields the user gave when adding a library: given ones are marked, and for a new
 * library (`existed` false) the others are cleared; a re-add that gives none keeps the marks.
 */
export async function rememberUserFields(store: Store, libraryId: string, given: { title?: string; description?: string }, existed: boolean): Promise<void> {
  const all = await allUserFields(store);
  const before = existed ? (all[libraryId] ?? {}) : {};
  const next: UserFields = { ...before };
  if (given.title !== undefined) next.title = true;
  if (given.description !== undefined) next.description = true;
  const had = all[libraryId];
  if (next.title || next.description) all[libraryId] = next;
  else delete all[libraryId];
  if (JSON.stringify(had) === JSON.stringify(all[libraryId])) return;
  await store.setSetting(FIELDS_SETTING, Object.keys(all).length > 0 ? all : undefined);
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
 * the build of its default version was finalized. Never throws: the build is already served,
 * so a failure here is a warning in the job log and the library keeps its previous fields.
 */
export async function recordLibraryMeta(kernel: Kernel, libraryId: string, meta: LibraryMeta, facts: BuildFacts, log: (level: LogLevel, message: string) => void): Promise<void> {
  const { store } = kernel;
  try {
    const started = Date.now();
    const bench = await selfRetrievalScore(store, libraryId, '');
    const benchMs = Date.now() - started;
    const library = await store.getLibrary(libraryId);
    if (!library) return;
    const user = await getUserFields(store, libraryId);
    const stars = meta.stars ?? library.stars;
    const trust = trustScore({
      sourceKind: library.source.kind,
      official: meta.official,
      stars,
      updatedAt: meta.updatedAt,
      now: kernel.clock.now(),
      documents: facts.documents,
      skippedDocuments: facts.skippedDocuments,
      snippets: facts.snippets,
    });
    await store.upsertLibrary({
      id: library.id,
      title: (!user.title && meta.title) || library.title,
      description: (!user.description && meta.description) || library.description,
      branch: meta.branch ?? library.branch,
      source: library.source,
      stars,
      trustScore: trust,
      benchmarkScore: bench.score,
    });
    log(
      'info',
      `library scores: trust ${trust}/10, benchmark ${bench.score}% (${bench.found} of ${bench.asked} sections found by their own heading in the top 5, ${benchMs} ms)`,
    );
  } catch (e) {
    log('warn', `the library's metadata and scores were not updated: ${(e as Error).message}`);
  }
}
