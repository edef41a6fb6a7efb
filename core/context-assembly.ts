/**
 * Context assembly: from the store's hits to the answer. Hits of one section (same file, same
 * heading path) become one answer unit, its prose with the code it explains, ranked where the
 * section first appears; units stop when relevance drops against the best one, repeated code
 * or prose is dropped, a long section keeps the parts that match the question, and the whole
 * stays within the token budget.
 */
import type { SearchHit, StoredSnippet } from './contracts.ts';
import { sectionKey } from './search/sections.ts';
import { tokenize } from './search/tokenize.ts';

/** An answer unit: a stored snippet, or a whole section made into one snippet. */
export interface ContextSnippet extends StoredSnippet {
  /** Every code block of a section unit, in document order (absent for a single snippet). */
  codeList?: Array<{ language: string; code: string }>;
}

export interface AssemblyOptions {
  /** Units scoring below this fraction of the best unit are not worth the reader's tokens. */
  relativeCutoff: number;
  /** A section longer than this keeps only its parts that match the question best. */
  maxUnitTokens: number;
  /** Most units in an answer of up to `unitsBudget` tokens; a larger budget allows proportionally more. */
  maxUnits: number;
  unitsBudget: number;
}

export const DEFAULT_ASSEMBLY: AssemblyOptions = { relativeCutoff: 0.45, maxUnitTokens: 800, maxUnits: 6, unitsBudget: 5000 };

interface Unit {
  score: number;
  members: StoredSnippet[];
  /** The heading path of a parent-section unit (absent: the members' own section). */
  breadcrumb?: readonly string[];
}

/** About four characters per token, as the chunkers estimate. */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

export function assembleContext(hits: readonly SearchHit[], query: string, budget: number, options: AssemblyOptions = DEFAULT_ASSEMBLY): ContextSnippet[] {
  const units = groupUnits(hits);
  if (units.length === 0) return [];
  const terms = new Set(tokenize(query));
  const top = units[0].score;
  const seen = new Set<string>();
  // Each member's key once (a whitespace-normalised copy of its text): asked when the unit is
  // filtered and again for what it keeps.
  const keys = new Map<StoredSnippet, string>();
  const contentKey = (s: StoredSnippet) => {
    let key = keys.get(s);
    if (key === undefined) keys.set(s, (key = contentKeyOf(s)));
    return key;
  };
  const out: ContextSnippet[] = [];
  let used = 0;
  let misses = 0;
  const maxUnits = Math.max(options.maxUnits, Math.floor((options.maxUnits * budget) / options.unitsBudget));
  for (const unit of units) {
    if (out.length >= maxUnits || unit.score < top * options.relativeCutoff) break;
    const fresh = unit.members.filter((s) => !seen.has(contentKey(s)));
    if (fresh.length === 0) continue;
    const room = out.length === 0 ? Math.min(budget, options.maxUnitTokens) : options.maxUnitTokens;
    const kept = trimToTokens(fresh, terms, room);
    const snippet = kept.length === 1 && !unit.breadcrumb ? kept[0] : mergeSection(kept, unit.breadcrumb);
    if (used + snippet.tokens > budget && out.length > 0) {
      if (++misses >= 5) break;
      continue;
    }
    for (const s of kept) seen.add(contentKey(s));
    out.push(snippet);
    used += snippet.tokens;
  }
  return out;
}

/** A search result before its snippet is read: its id, score and the key of its answer unit. */
export interface RankedHit {
  id: number;
  score: number;
  /** The unit's key: the parent or merged unit's (SearchHit.unit.key), else the section key of the snippet. */
  key: string;
  unit?: SearchHit['unit'];
}

/**
 * The same answer as assembleContext over every hit, reading (with `read`, all at once) only the
 * snippets that can be in it: units are grouped from the keys alone, and the units from the
 * first one below the relevance cut-off on are never reached by assembleContext, so their
 * snippets are not read. `read` gives the snippets of the ids in their order; undefined drops
 * the hit (as a store search would).
 */
export function assembleRanked(
  ranked: readonly RankedHit[],
  read: (ids: readonly number[]) => ReadonlyArray<StoredSnippet | undefined>,
  query: string,
  budget: number,
  options: AssemblyOptions = DEFAULT_ASSEMBLY,
): ContextSnippet[] {
  const readAll = (list: readonly RankedHit[]): SearchHit[] => {
    const hits: SearchHit[] = [];
    const snippets = read(list.map((h) => h.id));
    for (let k = 0; k < list.length; k++) {
      const h = list[k];
      const snippet = snippets[k];
      if (snippet) hits.push(h.unit ? { snippet, score: h.score, unit: h.unit } : { snippet, score: h.score });
    }
    return hits;
  };
  const wanted = reachableHits(ranked, options.relativeCutoff);
  let hits = readAll(wanted);
  // A hit dropped by `read` can change the units' order and scores: then assemble from all.
  if (hits.length < wanted.length && wanted.length < ranked.length) hits = readAll(ranked);
  return assembleContext(hits, query, budget, options);
}

/** The hits of the units before the first one below the cut-off, in their order. */
function reachableHits(ranked: readonly RankedHit[], relativeCutoff: number): RankedHit[] {
  if (relativeCutoff <= 0) return [...ranked];
  const units = new Map<string, number>();
  const order: string[] = [];
  const seen = new Set<number>();
  for (const h of ranked) {
    if (seen.has(h.id)) continue;
    seen.add(h.id);
    const score = units.get(h.key);
    if (score === undefined) order.push(h.key);
    units.set(h.key, score === undefined ? h.score : Math.max(score, h.score));
  }
  if (order.length === 0) return [];
  const top = units.get(order[0])!;
  const keep = new Set<string>();
  for (const key of order) {
    if (units.get(key)! < top * relativeCutoff) break;
    keep.add(key);
  }
  return ranked.filter((h) => keep.has(h.key));
}

/** Hits grouped by section, in the order sections first appear, members in document order. */
function groupUnits(hits: readonly SearchHit[]): Unit[] {
  const byKey = new Map<string, Unit>();
  const ids = new Set<number>();
  for (const h of hits) {
    if (ids.has(h.snippet.id)) continue;
    ids.add(h.snippet.id);
    const key = h.unit?.key ?? sectionKey(h.snippet);
    const unit = byKey.get(key);
    if (unit) {
      unit.members.push(h.snippet);
      unit.score = Math.max(unit.score, h.score);
    } else byKey.set(key, h.unit ? { score: h.score, members: [h.snippet], breadcrumb: h.unit.breadcrumb } : { score: h.score, members: [h.snippet] });
  }
  const units = [...byKey.values()];
  for (const u of units) u.members.sort((a, b) => a.seq - b.seq);
  return units;
}

function contentKeyOf(s: StoredSnippet): string {
  return s.type === 'code' ? 'c:' + s.code.replace(/\s+/g, ' ').trim() : 'i:' + s.content.replace(/\s+/g, ' ').trim();
}

/**
 * The members of a section that fit in `room` tokens: all of them when they fit, else those
 * sharing the most words with the question (the section's first prose breaks ties), back in
 * document order. Always at least one.
 */
function trimToTokens(members: StoredSnippet[], terms: Set<string>, room: number): StoredSnippet[] {
  const total = members.reduce((n, s) => n + s.tokens, 0);
  if (total <= room) return members;
  const scored = members.map((s, i) => {
    const words = new Set(tokenize(s.type === 'code' ? `${s.title}\n${s.description}\n${s.code}` : s.content));
    let overlap = 0;
    for (const t of terms) if (words.has(t)) overlap++;
    return { s, i, rank: overlap + (i === 0 ? 0.5 : 0) };
  });
  scored.sort((a, b) => b.rank - a.rank || a.i - b.i);
  const keep: typeof scored = [];
  let used = 0;
  for (const x of scored) {
    if (keep.length > 0 && used + x.s.tokens > room) continue;
    keep.push(x);
    used += x.s.tokens;
  }
  return keep.sort((a, b) => a.i - b.i).map((x) => x.s);
}

/**
 * One snippet of several members of a section (or of a parent section, under `breadcrumb`): its
 * prose as the description of its code.
 */
function mergeSection(members: StoredSnippet[], breadcrumb?: readonly string[]): ContextSnippet {
  const first = breadcrumb ? { ...members[0], breadcrumb: [...breadcrumb] } : members[0];
  const code = members.filter((s) => s.type === 'code');
  const info = members.filter((s) => s.type === 'info');
  const heading = first.breadcrumb[first.breadcrumb.length - 1] ?? first.pageTitle;
  const prose = info.map((s) => s.content).join('\n\n');
  const lineStart = Math.min(...members.map((s) => s.lineStart));
  const lineEnd = Math.max(...members.map((s) => s.lineEnd));
  const base = { ...first, lineStart, lineEnd, title: heading };
  if (code.length === 0) {
    return { ...base, type: 'info', content: prose, description: '', code: '', language: '', tokens: estimateTokens(prose) + estimateTokens(first.breadcrumb.join(' > ')) };
  }
  const description = prose || code[0].description;
  const codeList = code.map((s) => ({ language: s.language, code: s.code }));
  const tokens = estimateTokens(heading) + estimateTokens(description) + code.reduce((n, s) => n + estimateTokens(s.code), 0) + 4;
  return {
    ...base,
    type: 'code',
    title: code.length === 1 ? code[0].title : heading,
    description,
    language: code[0].language,
    code: code.map((s) => s.code).join('\n\n'),
    content: '',
    codeList,
    tokens,
  };
}
