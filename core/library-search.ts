/**
 * Library search (`/api/v2/libs/search`): libraries matching a name, best first.
 *
 * Two stages. The first scores every library by how well its ID and title match the name
 * (exact, prefix, substring, shared words; punctuation-insensitive so `nextjs` finds `next.js`)
 * plus a small prior from its quality signals (trust score, benchmark score, stars, snippet
 * count, served or not). The second (skipped when `fast` is set) re-ranks the best candidates by
 * the question: how many of its words the library's description and its own documentation
 * (the top hits of the library's lexical index) contain.
 */
import type { LibraryRecord } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { tokenize } from './search/tokenize.ts';

export interface LibrarySearchOptions {
  /** Skip the question re-ranking stage. */
  fast?: boolean;
  /** Only these libraries are considered (e.g. what the policy allows); all when absent. */
  filter?: (lib: LibraryRecord) => boolean;
  /** At most this many results (default 20). */
  limit?: number;
  /** The catalog as the caller already read it (store.listLibraries()); read here when absent. */
  libraries?: readonly LibraryRecord[];
}

export interface ScoredLibrary {
  library: LibraryRecord;
  score: number;
}

/** How many first-stage candidates the question re-ranks. */
const RERANK_CANDIDATES = 10;
/** Libraries below this name score are not a match. */
const MIN_NAME_SCORE = 0.25;

const squash = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '');

/** True when the name is the library's ID or the ID's last part (punctuation-insensitive). */
export function isExactIdMatch(lib: LibraryRecord, name: string): boolean {
  const wanted = squash(name);
  return wanted !== '' && (squash(lib.id.split('/').pop() ?? '') === wanted || squash(lib.id) === wanted);
}

/**
 * 0..1: how well the library's ID and title match the name. The title is the project's own name
 * as its source gives it (a README's H1, a package name, a site name: core/library-meta.ts), so
 * a library is found by its real name as well as by its ID.
 */
export function nameScore(lib: LibraryRecord, name: string): number {
  const wanted = squash(name);
  if (!wanted) return 0;
  const last = lib.id.split('/').pop() ?? '';
  const forms = [squash(last), squash(lib.title), squash(lib.id)];
  let best = 0;
  for (const f of forms) {
    if (!f) continue;
    if (f === wanted) best = Math.max(best, 1);
    else if (f.startsWith(wanted) || wanted.startsWith(f)) best = Math.max(best, 0.75 * (Math.min(f.length, wanted.length) / Math.max(f.length, wanted.length)) + 0.1);
    else if (f.includes(wanted)) best = Math.max(best, 0.5);
  }
  const nameTokens = new Set(tokenize(name));
  if (nameTokens.size > 0) {
    const libTokens = new Set(tokenize(`${lib.id.replace(/\//g, ' ')} ${lib.title}`));
    let shared = 0;
    for (const t of nameTokens) if (libTokens.has(t)) shared++;
    best = Math.max(best, 0.6 * (shared / nameTokens.size));
    const descTokens = new Set(tokenize(lib.description));
    let inDesc = 0;
    for (const t of nameTokens) if (descTokens.has(t)) inDesc++;
    best = Math.max(best, 0.3 * (inDesc / nameTokens.size));
  }
  return best;
}

/** 0..0.25: the library's quality signals, so that among equal names the better library wins. */
export function qualityPrior(lib: LibraryRecord): number {
  const clamp = (x: number) => Math.max(0, Math.min(1, x));
  let q = 0;
  q += 0.08 * clamp(lib.trustScore / 10);
  q += 0.05 * clamp(lib.benchmarkScore / 100);
  q += 0.04 * clamp(Math.log10(1 + Math.max(0, lib.stars)) / 5);
  q += 0.04 * clamp(Math.log10(1 + lib.totalSnippets) / 4);
  if (lib.state === 'finalized') q += 0.04;
  return q;
}

/** 0..1: the share of the question's words found in `text`. */
function coverage(questionTokens: Set<string>, text: string): number {
  if (questionTokens.size === 0) return 0;
  const have = new Set(tokenize(text));
  let n = 0;
  for (const t of questionTokens) if (have.has(t)) n++;
  return n / questionTokens.size;
}

/**
 * Libraries whose ID is the name come first (a title equal to the name does not outrank them),
 * then by score, snippet count and ID.
 */
function byRank(a: ScoredLibrary & { exactId: boolean }, b: ScoredLibrary & { exactId: boolean }): number {
  return Number(b.exactId) - Number(a.exactId) || b.score - a.score || b.library.totalSnippets - a.library.totalSnippets || (a.library.id < b.library.id ? -1 : 1);
}

/** Libraries matching `libraryName`, best first, with their scores. */
export async function searchLibraries(kernel: Kernel, libraryName: string, query: string, options: LibrarySearchOptions = {}): Promise<ScoredLibrary[]> {
  const libs = options.libraries ?? (await kernel.store.listLibraries());
  const first = libs
    // Only libraries with documentation to serve (a failed or unfinished first build has none).
    .filter((lib) => lib.state === 'finalized' && (!options.filter || options.filter(lib)))
    .map((library) => ({ library, name: nameScore(library, libraryName) }))
    .filter((x) => x.name >= MIN_NAME_SCORE)
    .map((x) => ({ library: x.library, score: x.name + qualityPrior(x.library), exactId: isExactIdMatch(x.library, libraryName) }))
    .sort(byRank);

  if (!options.fast && first.length > 1) {
    const questionTokens = new Set(tokenize(query));
    const head = first.slice(0, RERANK_CANDIDATES);
    for (const c of head) {
      let docs = '';
      if (c.library.state === 'finalized') {
        const hits = await kernel.store.search(c.library.id, '', query, 5).catch(() => []);
        docs = hits.map((h) => `${h.snippet.breadcrumb.join(' ')} ${h.snippet.title} ${h.snippet.content} ${h.snippet.code} ${h.snippet.description}`).join(' ');
      }
      c.score += 0.1 * coverage(questionTokens, `${c.library.title} ${c.library.description}`) + 0.2 * coverage(questionTokens, docs);
    }
    head.sort(byRank);
    first.splice(0, head.length, ...head);
  }
  return first.slice(0, options.limit ?? 20).map(({ library, score }) => ({ library, score }));
}
