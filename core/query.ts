/**
 * The query pipeline: library ID (+ version) -> lexical search (fused with vector search when the
 * version has vectors of the configured embedder: core/hybrid.ts) -> optional rerank (skipped
 * with `fast`, or when the reranker is inactive, e.g. no LLM in Settings) -> context
 * assembly under a token budget (relevance cut-off, deduplication) -> json or txt.
 */
import type { LibraryRecord, Reranker, SearchHit } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { RefdeskError } from './errors.ts';
import { formatLibraryId, type LibraryId } from './library-id.ts';
import { describeUnknownLibrary, resolveLibraryId } from './library-resolve.ts';
import { assembleContext, type ContextSnippet } from './context-assembly.ts';
import { startHybrid } from './hybrid.ts';
import { contextJson, contextText, type ContextFormat, type ContextJson } from './context-format.ts';

export { assembleContext, type ContextSnippet } from './context-assembly.ts';
export type { CodeSnippetJson, ContextFormat, ContextJson, InfoSnippetJson, SnippetSource } from './context-format.ts';

export interface ContextRequest {
  libraryId: string;
  query: string;
  tokens?: number;
}

export interface ContextResult {
  library: LibraryRecord;
  version: string;
  /** Selected snippets, best first (a whole section may be one snippet with several code blocks). */
  snippets: ContextSnippet[];
  totalTokens: number;
  /**
   * Only when `ContextOptions.encode` asked for it and the searcher (a search worker) formatted
   * the answer itself: the answer's bytes in that format (core/context-format.ts
   * encodeContextAnswer), and `snippets` is then empty. Never set for an empty answer.
   */
  encoded?: Uint8Array;
}

export const QUERY_MAX_LENGTH = 500;
/** Hits asked of the store for one question (sections come with all their snippets). */
export const CANDIDATES = 200;

export function tokenBudget(kernel: Kernel, tokens: number | undefined): number {
  const { defaultTokens, minTokens, maxTokens } = kernel.config.query;
  if (tokens === undefined) return defaultTokens;
  return Math.min(maxTokens, Math.max(minTokens, Math.floor(tokens)));
}

/**
 * Runs a version's search somewhere other than the calling thread (server/search-pool.ts: a
 * worker thread), given what getContext has checked.
 */
export interface ContextSearcher {
  /**
   * With `assemble`, the answer's snippets (assembleContext under that budget), or, when
   * `assemble.encode` names a format and the answer is not empty, its bytes in that format
   * (encodeContextAnswer) with its token count; without `assemble`, the hits. Null when it
   * cannot serve this version (getContext then uses the store's search). Rejects with
   * RefdeskError `processing_timeout` once `signal` aborts, abandoning the work.
   */
  search(
    libraryId: string,
    version: string,
    query: string,
    limit: number,
    assemble: { budget: number; encode?: ContextFormat } | null,
    signal?: AbortSignal,
  ): Promise<{ hits: SearchHit[] } | { snippets: ContextSnippet[] } | { encoded: Uint8Array; totalTokens: number } | null>;
}

export interface ContextOptions {
  /** Where the search runs (default: the store's search, in this thread). */
  searcher?: ContextSearcher;
  /** Aborted when the caller stops waiting (the request deadline). */
  signal?: AbortSignal;
  /** Skip the reranker (the API's `fast=true`): the lexical order is answered directly. */
  fast?: boolean;
  /**
   * The library and version `req.libraryId` names, when the caller has just read them (the API
   * service does, to check the policy): the ID is not resolved and the record not read again.
   */
  resolved?: { id: LibraryId; library: LibraryRecord };
  /**
   * The format the caller will send the answer in (the HTTP API): a searcher that assembles the
   * answer may return it encoded (`ContextResult.encoded`) instead of its snippets.
   */
  encode?: ContextFormat;
}

/** The kernel's reranker when it would change anything now (an LLM reranker with no LLM set changes nothing). */
export async function activeReranker(kernel: Kernel): Promise<Reranker | null> {
  const r = kernel.reranker;
  if (!r) return null;
  try {
    return (await (r.active?.() ?? true)) ? r : null;
  } catch (e) {
    kernel.logger.warn('reranker unavailable: answering in lexical order', { error: (e as Error).message });
    return null;
  }
}

export async function getContext(kernel: Kernel, req: ContextRequest, options: ContextOptions = {}): Promise<ContextResult> {
  const parsed = options.resolved ? options.resolved.id : await resolveLibraryId(kernel.store, req.libraryId);
  const query = req.query.trim();
  if (!query) throw new RefdeskError('invalid_request', 'The query must not be empty.');
  if (query.length > QUERY_MAX_LENGTH) throw new RefdeskError('invalid_request', `The query is longer than ${QUERY_MAX_LENGTH} characters.`);
  const library = options.resolved ? options.resolved.library : await kernel.store.getLibrary(parsed.id);
  if (!library) {
    throw new RefdeskError(
      'library_not_found',
      `Library ${describeUnknownLibrary(req.libraryId, parsed)} not found. Check the library ID (search with /api/v2/libs/search) or your access permissions.`,
    );
  }
  const version = parsed.version;
  if (version && !library.versions.includes(version)) {
    throw new RefdeskError('version_not_found', `Version "${version}" of library "${parsed.id}" not found (available: ${library.versions.join(', ') || 'none'}).`);
  }
  if (!version && library.state !== 'finalized') {
    throw new RefdeskError('library_not_finalized', `Library "${parsed.id}" is still being processed (state: ${library.state}). Retry in a moment.`);
  }
  const budget = tokenBudget(kernel, req.tokens);
  const reranker = options.fast ? null : await activeReranker(kernel);
  // With vectors of the configured embedder: the question is embedded while the lexical search runs (core/hybrid.ts).
  const hybrid = await startHybrid(kernel, parsed.id, version, query);
  const assemble = reranker || hybrid ? null : options.encode ? { budget, encode: options.encode } : { budget };
  const remote = options.searcher ? await options.searcher.search(parsed.id, version, query, CANDIDATES, assemble, options.signal) : null;
  if (remote && 'encoded' in remote) return { library, version, snippets: [], totalTokens: remote.totalTokens, encoded: remote.encoded };
  let snippets: ContextSnippet[];
  if (remote && 'snippets' in remote) snippets = remote.snippets;
  else {
    let hits = remote ? remote.hits : await kernel.store.search(parsed.id, version, query, CANDIDATES);
    if (hybrid) hits = await hybrid.fuse(hits, CANDIDATES);
    if (reranker && hits.length > 1) {
      // Reranking runs here, after the (worker's) lexical search; a failing reranker keeps the lexical order.
      hits = await reranker.rerank(query, hits, CANDIDATES, { libraryId: parsed.id, version, signal: options.signal }).catch((e: unknown) => {
        kernel.logger.warn('reranking failed: answering in lexical order', { error: (e as Error).message });
        return hits;
      });
    }
    snippets = assembleContext(hits, query, budget);
  }
  return { library, version, snippets, totalTokens: snippets.reduce((n, s) => n + s.tokens, 0) };
}

/** The JSON format of an answer (the API's `type=json`). */
export function toContextJson(result: ContextResult): ContextJson {
  return contextJson(result.snippets);
}

/** The readable text format: one block per snippet, best first. */
export function toContextText(result: ContextResult): string {
  if (result.snippets.length === 0) {
    return `No documentation in ${formatLibraryId(result.library.id, result.version)} matches this query. Try other words, or one concept per query.`;
  }
  return contextText(result.snippets);
}
