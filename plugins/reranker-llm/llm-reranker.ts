/**
 * The reranker of the LLM in Settings: one call reorders a question's best answer units (a
 * section with its code, or a single snippet: the units context assembly answers with), or a
 * library search's best candidates. Without an LLM configured it changes nothing (and says so
 * through active(), so the query runs exactly as without a reranker).
 *
 * Any failure (timeout, refusal, a malformed or out-of-list answer, an unreachable endpoint)
 * keeps the given order and is logged without the key; after an endpoint failure the LLM is
 * left alone for a cool-down (or the vendor's Retry-After) so every query does not wait on it.
 * Answers are cached per (provider fingerprint, library version, question, candidates: their
 * section keys and snippet ids, so a new build is never answered from an old build's ranking).
 */
import { createHash } from 'node:crypto';
import type { LibraryRecord, Logger, RerankContext, Reranker, SearchHit } from '../../core/contracts.ts';
import { ProviderError, type Llm, type Providers } from '../../core/providers.ts';
import { sectionKey } from '../../core/search/sections.ts';
import { buildPrompt, LIBRARY_SYSTEM, parseRanking, SNIPPET_SYSTEM, type PromptItem } from './prompt.ts';

export interface LlmRerankerOptions {
  /** Answer units (snippet search) or libraries (library search) shown to the LLM, at most 30. */
  candidates: number;
  libraryCandidates: number;
  /** About how many tokens the candidate list may take in the prompt. */
  promptTokens: number;
  /** Characters of text shown per candidate, at most. */
  excerptChars: number;
  /** The answer's token limit (a ranking of 30 numbers needs about 100). */
  answerTokens: number;
  /** The longest a query waits for the LLM before it answers in the given order. */
  timeoutMs: number;
  /** After a failed call, the LLM is not asked again for this long (or the vendor's Retry-After). */
  cooldownMs: number;
  /** Rankings kept in memory. */
  cacheEntries: number;
}

interface Unit {
  key: string;
  hits: SearchHit[];
  score: number;
}

/** What a failed or skipped rerank leaves: the given order. */
const KEEP = null;

export class LlmReranker implements Reranker {
  private readonly cache = new Map<string, number[]>();
  /** No LLM calls before this time (ms) for this provider fingerprint. */
  private pause: { until: number; fingerprint: string } | null = null;

  constructor(
    private readonly options: LlmRerankerOptions,
    private readonly providers: Providers,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async active(): Promise<boolean> {
    return (await this.currentLlm()) !== null;
  }

  async rerank(query: string, hits: SearchHit[], n: number, context?: RerankContext): Promise<SearchHit[]> {
    const units = groupUnits(hits);
    if (units.length < 2) return hits.slice(0, n);
    const head = units.slice(0, this.options.candidates);
    const items: PromptItem[] = head.map(unitItem);
    const scope = context ? `${context.libraryId}@${context.version}` : '';
    const ranking = await this.rank('snippets', scope, query, head.map((u) => `${u.key}#${u.hits[0]!.snippet.id}`), () => buildPrompt(`Question: ${query}\n\nExcerpts:`, items, this.options.promptTokens, this.options.excerptChars), SNIPPET_SYSTEM, context?.signal);
    if (ranking === KEEP || ranking.length === 0) return hits.slice(0, n);
    return reorderUnits(units, ranking).slice(0, n);
  }

  async rerankLibraries(query: string, libraryName: string, candidates: LibraryRecord[], signal?: AbortSignal): Promise<LibraryRecord[]> {
    if (candidates.length < 2) return candidates;
    const head = candidates.slice(0, this.options.libraryCandidates);
    const items: PromptItem[] = head.map((l) => ({ title: l.title, where: l.id, text: l.description }));
    const heading = `Library name: ${libraryName}\nQuestion: ${query}\n\nLibraries:`;
    const ranking = await this.rank('libraries', '', `${libraryName}\n${query}`, head.map((l) => l.id), () => buildPrompt(heading, items, this.options.promptTokens, this.options.excerptChars), LIBRARY_SYSTEM, signal);
    if (ranking === KEEP || ranking.length === 0) return candidates;
    const picked = ranking.map((i) => head[i]!);
    const rest = candidates.filter((l) => !picked.includes(l));
    return [...picked, ...rest];
  }

  /** The LLM's ranking of `keys` (0-based positions), from the cache or one call; KEEP on any failure. */
  private async rank(what: string, scope: string, question: string, keys: string[], prompt: () => string, system: string, signal?: AbortSignal): Promise<number[] | null> {
    const llm = await this.currentLlm();
    if (!llm) return KEEP;
    const fingerprint = await this.providers.fingerprint();
    const cacheKey = createHash('sha256').update(JSON.stringify([fingerprint, what, scope, question, keys])).digest('base64url');
    const cached = this.cache.get(cacheKey);
    if (cached) {
      this.cache.delete(cacheKey); // most recently used last
      this.cache.set(cacheKey, cached);
      return cached;
    }
    if (this.pause && this.pause.fingerprint === fingerprint && this.now() < this.pause.until) return KEEP;
    // The deadline covers the call, not the first load of the vendor's SDK.
    await llm.ready?.().catch(() => {});
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    const started = this.now();
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
    let text: string;
    try {
      // Raced with the deadline too: an SDK waiting out a long Retry-After between its retries
      // does not always watch the signal, and a question must not wait for it.
      const answer = await Promise.race([
        llm.complete({ system, prompt: prompt(), json: true, maxTokens: this.options.answerTokens, temperature: 0, signal: stop }),
        untilAborted(stop),
      ]);
      text = answer.text;
    } catch (e) {
      const err = e instanceof ProviderError ? e : new ProviderError(deadline.aborted ? 'timeout' : 'unavailable', deadline.aborted ? 'the LLM did not answer in time' : 'the LLM call failed');
      const wait = err.kind === 'bad_request' ? 0 : Math.max(this.options.cooldownMs, err.retryAfterMs ?? 0);
      if (wait > 0) this.pause = { until: this.now() + wait, fingerprint };
      this.logger.warn(`LLM reranking of ${what} skipped: ${err.message}`, { kind: err.kind, provider: llm.provider, model: llm.model, ms: this.now() - started, ...(wait > 0 ? { pausedMs: wait } : {}) });
      return KEEP;
    }
    const ranking = parseRanking(text, keys.length);
    if (!ranking) {
      this.logger.warn(`LLM reranking of ${what} skipped: the answer is not {"ranking": [...]} over the ${keys.length} candidates`, { kind: 'bad_response', provider: llm.provider, model: llm.model });
      return KEEP;
    }
    if (this.options.cacheEntries > 0) {
      if (this.cache.size >= this.options.cacheEntries) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(cacheKey, ranking);
    }
    return ranking;
  }

  private async currentLlm(): Promise<Llm | null> {
    try {
      return await this.providers.llm();
    } catch (e) {
      this.logger.warn('LLM reranking off: the provider settings could not be read', { error: (e as Error).message });
      return null;
    }
  }
}

/** Rejects when `signal` aborts. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** Hits grouped into the answer units context assembly makes (core/context-assembly.ts), in order of first appearance. */
function groupUnits(hits: readonly SearchHit[]): Unit[] {
  const byKey = new Map<string, Unit>();
  for (const h of hits) {
    const key = h.unit?.key ?? sectionKey(h.snippet);
    const unit = byKey.get(key);
    if (unit) {
      unit.hits.push(h);
      unit.score = Math.max(unit.score, h.score);
    } else byKey.set(key, { key, hits: [h], score: h.score });
  }
  return [...byKey.values()];
}

/** A unit as the prompt shows it: its title, heading path, and the start of its best hit's text. */
function unitItem(u: Unit): PromptItem {
  const s = u.hits[0]!.snippet;
  const breadcrumb = u.hits[0]!.unit?.breadcrumb ?? s.breadcrumb;
  const text = s.type === 'code' ? `${s.description} ${s.code}` : s.content;
  return { title: s.title || breadcrumb[breadcrumb.length - 1] || s.pageTitle || s.sourcePath, where: breadcrumb.join(' > '), text };
}

/**
 * The hits with the ranked units first, in the LLM's order, then every other unit in its given
 * order. Scores are rewritten so context assembly keeps that order and every ranked unit passes
 * its relevance cut-off (ranked units within 0.5-1 of the top score; the others below 0.45 of it).
 */
function reorderUnits(units: Unit[], ranking: number[]): SearchHit[] {
  const top = Math.max(...units.map((u) => u.score));
  if (!(top > 0)) return units.flatMap((u) => u.hits);
  const ranked = ranking.map((i) => units[i]!);
  const out: SearchHit[] = [];
  ranked.forEach((u, i) => {
    const score = top * (1 - (0.5 * i) / ranked.length);
    for (const h of u.hits) out.push({ ...h, score });
  });
  for (const u of units) if (!ranked.includes(u)) for (const h of u.hits) out.push({ ...h, score: 0.4 * h.score });
  return out;
}
