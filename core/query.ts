/**
 * The query pipeline: library ID (+ version) -> lexical search (fused with vector search when the
 * version has vectors of the configured embedder: core/hybrid.ts) -> optional rerank (skipped
 * with `fast`, or when the reranker is inactive, e.g. no LLM in Settings) -> context
 * assembly under a token budget (relevance cut-off, deduplication) -> json or txt.
 */
import type { LibraryRecord, Reranker, SearchHit, StoredSnippet } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { RefdeskError } from './errors.ts';
import { formatLibraryId, type LibraryId } from './library-id.ts';
import { describeUnknownLibrary, resolveLibraryId } from './library-resolve.ts';
import { assembleContext, type ContextSnippet } from './context-assembly.ts';
import { startHybrid } from './hybrid.ts';

export { assembleContext, type ContextSnippet } from './context-assembly.ts';

export interface ContextRequest {
  libraryId: string;
  query: string;
  tokens?: number;
}

export interface SnippetSource {
  path: string;
  url?: string;
  lineStart: number;
  lineEnd: number;
}

export interface CodeSnippetJson {
  /** 1-based position of the snippet in the whole answer (code and info snippets together). */
  rank: number;
  codeTitle: string;
  codeDescription: string;
  codeLanguage: string;
  codeTokens: number;
  codeId: string;
  pageTitle: string;
  codeList: Array<{ language: string; code: string }>;
  breadcrumb: string;
  source: SnippetSource;
}

export interface InfoSnippetJson {
  /** 1-based position of the snippet in the whole answer (code and info snippets together). */
  rank: number;
  pageId: string;
  breadcrumb: string;
  content: string;
  contentTokens: number;
  source: SnippetSource;
}

export interface ContextResult {
  library: LibraryRecord;
  version: string;
  /** Selected snippets, best first (a whole section may be one snippet with several code blocks). */
  snippets: ContextSnippet[];
  totalTokens: number;
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
   * With `assemble`, the answer's snippets (assembleContext under that budget); without, the
   * hits. Null when it cannot serve this version (getContext then uses the store's search).
   * Rejects with RefdeskError `processing_timeout` once `signal` aborts, abandoning the work.
   */
  search(
    libraryId: string,
    version: string,
    query: string,
    limit: number,
    assemble: { budget: number } | null,
    signal?: AbortSignal,
  ): Promise<{ hits: SearchHit[] } | { snippets: ContextSnippet[] } | null>;
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
  const remote = options.searcher ? await options.searcher.search(parsed.id, version, query, CANDIDATES, reranker || hybrid ? null : { budget }, options.signal) : null;
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

function sourceOf(s: ContextSnippet): SnippetSource {
  return { path: s.sourcePath, ...(s.sourceUrl ? { url: s.sourceUrl } : {}), lineStart: s.lineStart, lineEnd: s.lineEnd };
}

/** A stable reference to a snippet: its URL if known, else path#Lstart-Lend. */
function refOf(s: StoredSnippet): string {
  return s.sourceUrl ?? `${s.sourcePath}#L${s.lineStart}-L${s.lineEnd}`;
}

export function toContextJson(result: ContextResult): { codeSnippets: CodeSnippetJson[]; infoSnippets: InfoSnippetJson[] } {
  const codeSnippets: CodeSnippetJson[] = [];
  const infoSnippets: InfoSnippetJson[] = [];
  result.snippets.forEach((s, i) => {
    const rank = i + 1;
    if (s.type === 'code') {
      codeSnippets.push({
        rank,
        codeTitle: s.title,
        codeDescription: s.description,
        codeLanguage: s.language,
        codeTokens: s.tokens,
        codeId: refOf(s),
        pageTitle: s.pageTitle,
        codeList: s.codeList ?? [{ language: s.language, code: s.code }],
        breadcrumb: s.breadcrumb.join(' > '),
        source: sourceOf(s),
      });
    } else {
      infoSnippets.push({
        rank,
        pageId: s.sourceUrl ?? s.sourcePath,
        breadcrumb: s.breadcrumb.join(' > '),
        content: s.content,
        contentTokens: s.tokens,
        source: sourceOf(s),
      });
    }
  });
  return { codeSnippets, infoSnippets };
}

const SEPARATOR = '\n\n--------------------------------\n\n';

/** The readable text format: one block per snippet, best first. */
export function toContextText(result: ContextResult): string {
  if (result.snippets.length === 0) {
    return `No documentation in ${formatLibraryId(result.library.id, result.version)} matches this query. Try other words, or one concept per query.`;
  }
  return result.snippets
    .map((s) => {
      const where = `Source: ${s.sourceUrl ?? s.sourcePath} (lines ${s.lineStart}-${s.lineEnd})`;
      if (s.type === 'code') {
        const blocks = (s.codeList ?? [{ language: s.language, code: s.code }]).map((c) => {
          const fence = c.code.includes('```') ? '````' : '```';
          return `${fence}${c.language}\n${c.code}\n${fence}`;
        });
        return [`### ${s.title}`, where, s.description, ...blocks].filter(Boolean).join('\n\n');
      }
      return [`### ${s.breadcrumb.join(' > ')}`, where, s.content].join('\n\n');
    })
    .join(SEPARATOR);
}
