/**
 * The benchmark score (0-100) of a library version: a self-retrieval check run when its build is
 * finalized. A deterministic sample of its sections (at most `sample`, 100, chosen by a seeded hash of
 * their keys, so the same build always gives the same sample) is asked, each by its own heading,
 * against the served build with the normal lexical search (`Store.search`); the score is the
 * share, in percent with one decimal, of sampled sections that come back among the first `topK`
 * (5) answers. Answers are counted as the query pipeline shows them: hits of one section (or of
 * one parent section answered as a unit) are one answer. Read-only: nothing served changes.
 * See docs/library-scores.md.
 */
import { createHash } from 'node:crypto';
import type { SearchHit, SnippetHead, Store } from './contracts.ts';
import type { ContextSearcher } from './query.ts';
import { sectionKey } from './search/sections.ts';
import { tokenize } from './search/tokenize.ts';
import { timeSlicer } from './yield-loop.ts';
import { snippetHead } from './store-rules.ts';

export interface SelfRetrievalOptions {
  /** Most sections asked (default 100: python, 8,760 sections, costs ~0.4-1.8 s with it). */
  sample?: number;
  /** A section counts as found when it is among this many first answers (default 5). */
  topK?: number;
  /** Seed of the sample's hash (default 'refdesk'). */
  seed?: string;
  /**
   * Where the questions are searched (a server's search pool, server/search-pool.ts: the new
   * segment is opened and searched in a worker thread, which then holds it for the library's
   * questions); the store's search when absent, when it cannot serve the version (null) or fails.
   */
  searcher?: ContextSearcher;
}

export interface SelfRetrievalResult {
  /** 0-100, one decimal; 0 when no section has a usable heading. */
  score: number;
  /** Sections asked. */
  asked: number;
  /** Sections found among the first `topK` answers. */
  found: number;
  /** Sections in the build (with a heading that has searchable words). */
  sections: number;
}

export const SELF_RETRIEVAL_SAMPLE = 100;
export const SELF_RETRIEVAL_TOP_K = 5;
/** Hits asked of the store per question: enough for `topK` distinct answers in practice. */
const HITS_PER_QUESTION = 30;

interface Section {
  key: string;
  path: string;
  breadcrumb: readonly string[];
  heading: string;
}

/**
 * The sections of a build in document order, keyed as retrieval groups them, from its snippets'
 * heads (Store.getSnippetHeads: no snippet text is read or kept for this). Sliced (a large build
 * has thousands of headings to tokenize): a server running the check keeps answering.
 */
async function sectionsOf(snippets: readonly SnippetHead[]): Promise<Section[]> {
  const seen = new Map<string, Section>();
  const pause = timeSlicer();
  for (const s of snippets) {
    await pause();
    const key = sectionKey(s);
    if (seen.has(key)) continue;
    const heading = (s.breadcrumb.at(-1) ?? s.title ?? '').trim();
    if (tokenize(heading).length === 0) continue;
    seen.set(key, { key, path: s.sourcePath, breadcrumb: s.breadcrumb, heading });
  }
  return [...seen.values()];
}

/** True when the answer `hit` stands for contains the section (its own, or a parent unit of it). */
function answers(hit: SearchHit, target: Section): boolean {
  if (sectionKey(hit.snippet) === target.key) return true;
  if (!hit.unit || hit.snippet.sourcePath !== target.path) return false;
  const parent = hit.unit.breadcrumb;
  return parent.length <= target.breadcrumb.length && parent.every((h, i) => target.breadcrumb[i] === h);
}

/** A question's hits from the searcher, or null: none, it cannot serve the version, or it failed. */
async function searchOff(searcher: ContextSearcher | undefined, libraryId: string, version: string, question: string): Promise<SearchHit[] | null> {
  if (!searcher) return null;
  try {
    const reply = await searcher.search(libraryId, version, question, HITS_PER_QUESTION, null);
    return reply && 'hits' in reply ? reply.hits : null;
  } catch {
    return null; // a worker that died or a pool shutting down: the store answers
  }
}

/** Runs the check on the served build of (libraryId, version). */
export async function selfRetrievalScore(store: Store, libraryId: string, version: string, options: SelfRetrievalOptions = {}): Promise<SelfRetrievalResult> {
  const sampleSize = Math.max(0, Math.floor(options.sample ?? SELF_RETRIEVAL_SAMPLE));
  const topK = Math.max(1, Math.floor(options.topK ?? SELF_RETRIEVAL_TOP_K));
  const seed = options.seed ?? 'refdesk';
  const heads = store.getSnippetHeads ? await store.getSnippetHeads(libraryId, version) : (await store.getSnippets(libraryId, version)).map(snippetHead);
  const sections = await sectionsOf(heads);
  const rank = (key: string) => createHash('sha1').update(seed).update('\0').update(key).digest('hex');
  const ranked: Array<{ s: Section; r: string }> = [];
  const pause = timeSlicer();
  for (const s of sections) {
    await pause();
    ranked.push({ s, r: rank(s.key) });
  }
  const sample = ranked
    .sort((a, b) => (a.r < b.r ? -1 : a.r > b.r ? 1 : 0))
    .slice(0, sampleSize)
    .map((x) => x.s);
  let found = 0;
  for (const target of sample) {
    // A store's search may resolve without I/O: give the event loop a turn between questions, so
    // a server running the check keeps answering requests (and its keep-alive sockets) meanwhile.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const hits = (await searchOff(options.searcher, libraryId, version, target.heading)) ?? (await store.search(libraryId, version, target.heading, HITS_PER_QUESTION));
    const shown = new Set<string>();
    for (const hit of hits) {
      const answer = hit.unit?.key ?? sectionKey(hit.snippet);
      if (!shown.has(answer)) {
        if (shown.size >= topK) break;
        shown.add(answer);
      }
      if (answers(hit, target)) {
        found++;
        break;
      }
    }
  }
  const score = sample.length === 0 ? 0 : Math.round((1000 * found) / sample.length) / 10;
  return { score, asked: sample.length, found, sections: sections.length };
}
