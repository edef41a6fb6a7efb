/**
 * Library search (`/api/v2/libs/search`): libraries matching a name, best first.
 *
 * Two stages. The first scores every library by how well its ID and title match the name
 * (exact, prefix, substring, shared words; punctuation-insensitive so `nextjs` finds `next.js`)
 * plus a small prior from its quality signals (trust score, benchmark score, stars, snippet
 * count, served or not). The second (skipped when `fast` is set) re-ranks the best candidates by
 * the question: how many of its words the library's description and its own documentation
 * (the top hits of the library's lexical index; searched only for the candidates that can still
 * come first, best first, until none left can: see contenders and rerankByDocs) contain; then,
 * with an LLM in Settings (the
 * reranker-llm plugin), one LLM call reorders the best candidates. With an embedder, the first
 * stage is fused with the libraries' vectors (core/library-vectors.ts).
 */
import type { LibraryRecord, SearchHit } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { activeReranker } from './query.ts';
import { tokenize } from './search/tokenize.ts';
import { fuseLibraryVectors } from './library-vectors.ts';

export interface LibrarySearchOptions {
  /** Skip the question re-ranking stages (the documentation coverage and the LLM's). */
  fast?: boolean;
  /** Aborted when the caller stops waiting (bounds the LLM call). */
  signal?: AbortSignal;
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

/** What a library's name score reads of it, computed once per (id, title, description). */
interface LibraryForms {
  /** The ID's last part, the title and the whole ID, squashed. */
  forms: string[];
  /** Words of the ID and title. */
  nameTokens: Set<string>;
  /** Words of the description. */
  descTokens: Set<string>;
}

/** A library name as asked, prepared once per request. */
interface PreparedName {
  wanted: string;
  tokens: Set<string>;
}

/**
 * Forms of libraries seen recently, keyed by id, title and description: a search over a catalog
 * of 1,000 libraries tokenizes each library's fields once, not at every request. Emptied when it
 * grows past its bound (libraries renamed or re-described leave old keys behind).
 */
const formsCache = new Map<string, LibraryForms>();
const FORMS_CACHE_MAX = 20_000;

/**
 * Forms of frozen records (the embedded store's catalog, plugins/store-embedded/catalog-cache.ts,
 * hands out the same frozen record until the library changes): found by the record itself, with
 * no key string built per library and request.
 */
const formsOfRecord = new WeakMap<LibraryRecord, LibraryForms>();

function libraryForms(lib: LibraryRecord): LibraryForms {
  const frozen = Object.isFrozen(lib);
  let f = frozen ? formsOfRecord.get(lib) : undefined;
  if (f) return f;
  f = formsByText(lib);
  if (frozen) formsOfRecord.set(lib, f);
  return f;
}

function formsByText(lib: LibraryRecord): LibraryForms {
  const key = `${lib.id}\0${lib.title}\0${lib.description}`;
  let f = formsCache.get(key);
  if (!f) {
    if (formsCache.size >= FORMS_CACHE_MAX) formsCache.clear();
    const last = lib.id.split('/').pop() ?? '';
    f = {
      forms: [squash(last), squash(lib.title), squash(lib.id)],
      nameTokens: new Set(tokenize(`${lib.id.replace(/\//g, ' ')} ${lib.title}`)),
      descTokens: new Set(tokenize(lib.description)),
    };
    formsCache.set(key, f);
  }
  return f;
}

function prepareName(name: string): PreparedName {
  return { wanted: squash(name), tokens: new Set(tokenize(name)) };
}

function exactId(forms: LibraryForms, wanted: string): boolean {
  return wanted !== '' && (forms.forms[0] === wanted || forms.forms[2] === wanted);
}

/** True when the name is the library's ID or the ID's last part (punctuation-insensitive). */
export function isExactIdMatch(lib: LibraryRecord, name: string): boolean {
  return exactId(libraryForms(lib), squash(name));
}

/**
 * 0..1: how well the library's ID and title match the name. The title is the project's own name
 * as its source gives it (a README's H1, a package name, a site name: core/library-meta.ts), so
 * a library is found by its real name as well as by its ID.
 */
export function nameScore(lib: LibraryRecord, name: string): number {
  return scoreName(libraryForms(lib), prepareName(name));
}

function scoreName(lib: LibraryForms, name: PreparedName): number {
  const { wanted, tokens } = name;
  if (!wanted) return 0;
  let best = 0;
  for (const f of lib.forms) {
    if (!f) continue;
    if (f === wanted) best = Math.max(best, 1);
    else if (f.startsWith(wanted) || wanted.startsWith(f)) best = Math.max(best, 0.75 * (Math.min(f.length, wanted.length) / Math.max(f.length, wanted.length)) + 0.1);
    else if (f.includes(wanted)) best = Math.max(best, 0.5);
  }
  if (tokens.size > 0) {
    let shared = 0;
    for (const t of tokens) if (lib.nameTokens.has(t)) shared++;
    best = Math.max(best, 0.6 * (shared / tokens.size));
    let inDesc = 0;
    for (const t of tokens) if (lib.descTokens.has(t)) inDesc++;
    best = Math.max(best, 0.3 * (inDesc / tokens.size));
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
  const asked = prepareName(libraryName);
  // Only libraries with documentation to serve (a failed or unfinished first build has none).
  const pool = libs.filter((lib) => lib.state === 'finalized' && (!options.filter || options.filter(lib)));
  // One pass, objects only for the matches (1,000 libraries a request).
  const first: Array<ScoredLibrary & { exactId: boolean }> = [];
  for (const library of pool) {
    const forms = libraryForms(library);
    const name = scoreName(forms, asked);
    if (name >= MIN_NAME_SCORE) first.push({ library, score: name + qualityPrior(library), exactId: exactId(forms, asked.wanted) });
  }
  first.sort(byRank);
  // With an embedder: fused with the libraries' vectors (core/library-vectors.ts); unchanged without.
  const fused = await fuseLibraryVectors(kernel, `${libraryName}\n${query}`, first, pool);
  if (fused !== first) first.splice(0, first.length, ...fused.sort(byRank));

  if (!options.fast && first.length > 1) {
    const questionTokens = new Set(tokenize(query));
    const head = first.slice(0, RERANK_CANDIDATES);
    // The record's words first (no store read), then the documentation: searched only for the
    // candidates that can still win (see contenders), not for all ten.
    for (const c of head) c.score += DESCRIPTION_WEIGHT * coverage(questionTokens, `${c.library.title} ${c.library.description}`);
    await rerankByDocs(kernel, query, questionTokens, head);
    head.sort(byRank);
    first.splice(0, head.length, ...head);
    await rerankWithLlm(kernel, libraryName, query, first, options.signal);
  }
  return first.slice(0, options.limit ?? 20).map(({ library, score }) => ({ library, score }));
}

const DESCRIPTION_WEIGHT = 0.1;
/** The most the documentation coverage adds to a candidate's score. */
const DOCS_WEIGHT = 0.2;

/**
 * The candidates whose documentation is searched: those that can still come first once it is.
 * The coverage adds at most DOCS_WEIGHT, and an exact ID match ranks before any other, so a
 * candidate of another exactness than the best, or more than DOCS_WEIGHT below it, cannot
 * overtake it: searching its documentation (opening its index segment: over 1,000 libraries the
 * most of a request's time) cannot change which library wins. The winner is the one the search
 * of all ten would give; only the order below it may differ. A best candidate with no contender
 * (the asked name is one library's ID) searches nothing.
 */
function contenders(head: Candidate[]): Candidate[] {
  const best = head.reduce((a, b) => (byRank(a, b) <= 0 ? a : b));
  const close = head.filter((c) => c.exactId === best.exactId && c.score + DOCS_WEIGHT >= best.score);
  return close.length > 1 ? close : [];
}

/** How many of the first places the documentation re-ranking gives as searching every contender would (see rerankByDocs). */
const EXACT_PLACES = 1;

type Candidate = ScoredLibrary & { exactId: boolean };

/**
 * Adds the documentation coverage to the contenders (see contenders), searching their
 * documentation best first and stopping at the first whose best possible score (its score plus
 * DOCS_WEIGHT, a coverage of 1) cannot reach the EXACT_PLACES-th best of those searched: no later
 * contender can either (they are in rank order), so the first EXACT_PLACES places are those
 * searching every contender gives. The contenders not searched keep their score, so the order
 * below those places may differ. A name shared by many libraries (a prefix of ten generated names
 * of one length) left ten contenders, each searched (over 1,000 libraries, opening each one's
 * index segment: 24 - 80 ms of CPU); once the leader's documentation covers the question, the
 * others within DOCS_WEIGHT of it are not searched.
 */
async function rerankByDocs(kernel: Kernel, query: string, questionTokens: Set<string>, head: Candidate[]): Promise<void> {
  const close = contenders(head).sort(byRank);
  const searched: Candidate[] = [];
  for (const c of close) {
    if (c.library.state !== 'finalized') continue;
    const place = searched[EXACT_PLACES - 1];
    if (place && byRank({ ...c, score: c.score + DOCS_WEIGHT }, place) > 0) break;
    const hits = await kernel.store.search(c.library.id, '', query, 5).catch(() => []);
    c.score += DOCS_WEIGHT * hitsCoverage(questionTokens, hits);
    searched.push(c);
    searched.sort(byRank);
  }
}

/**
 * coverage() of the hits' text (heading path, title, content, code, description of each), read
 * field by field and stopping once every word of the question is found: the tokens of texts
 * joined by a space are the tokens of each text, so the share is the same as that of the joined
 * text (a field missing reads as "undefined", as in a template string). A field that cannot hold
 * any word still missing (mayHold) is not tokenized.
 */
export function hitsCoverage(questionTokens: ReadonlySet<string>, hits: readonly SearchHit[]): number {
  if (questionTokens.size === 0) return 0;
  const missing = new Set(questionTokens);
  for (const { snippet: s } of hits) {
    for (const text of [s.breadcrumb.join(' '), `${s.title}`, `${s.content}`, `${s.code}`, `${s.description}`]) {
      if (!mayHold(text, missing)) continue;
      for (const t of tokenize(text)) if (missing.delete(t) && missing.size === 0) return 1;
    }
  }
  return (questionTokens.size - missing.size) / questionTokens.size;
}

/**
 * False when tokenize(text) cannot give any of `tokens`. Every token of a text, less its last
 * character, is in the text lower-cased: tokenize's words are ASCII runs of the text (or their
 * parts), lower-cased, and its stemmer only cuts a word's end or changes its last letter.
 */
function mayHold(text: string, tokens: ReadonlySet<string>): boolean {
  const lower = text.toLowerCase();
  for (const t of tokens) if (lower.includes(t.slice(0, -1))) return true;
  return false;
}

/** How many of the best candidates the reranker (an LLM in Settings) may reorder. */
const LLM_RERANK_CANDIDATES = 30;

/** With an active reranker that ranks libraries: one call reorders the best candidates in place; any failure keeps them. */
async function rerankWithLlm(kernel: Kernel, libraryName: string, query: string, ranked: ScoredLibrary[], signal?: AbortSignal): Promise<void> {
  const reranker = await activeReranker(kernel);
  if (!reranker?.rerankLibraries) return;
  const head = ranked.slice(0, LLM_RERANK_CANDIDATES);
  try {
    const order = await reranker.rerankLibraries(query, libraryName, head.map((c) => c.library), signal);
    const byId = new Map(head.map((c) => [c.library.id, c]));
    const picked = order.map((l) => byId.get(l.id)).filter((c): c is ScoredLibrary => c !== undefined && byId.delete(c.library.id));
    ranked.splice(0, head.length, ...picked, ...byId.values());
  } catch (e) {
    kernel.logger.warn('library reranking failed: answering in the fused order', { error: (e as Error).message });
  }
}
