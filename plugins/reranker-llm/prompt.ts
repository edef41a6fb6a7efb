/**
 * The reranking prompts and the validation of their answers. Candidates are numbered 1..N in the
 * prompt (short, and nothing of the store's ids leaks into it); the model answers with the JSON
 * object {"ranking": [numbers]}, best first, naming only the candidates that help. An answer that
 * is not that object, or names a number not in the list, or one twice, is refused whole.
 */

/** One candidate as the prompt shows it. */
export interface PromptItem {
  title: string;
  /** Where it sits: a heading path, a library ID. */
  where: string;
  text: string;
}

export const SNIPPET_SYSTEM =
  'You rank documentation excerpts for a developer\'s question about a software library. ' +
  'Reply with a JSON object {"ranking": [n, ...]} listing the numbers of the excerpts that help answer the question, most useful first. ' +
  'Leave out excerpts that do not help. Use only numbers from the list.';

export const LIBRARY_SYSTEM =
  'You pick the software library a developer means. ' +
  'Reply with a JSON object {"ranking": [n, ...]} listing the numbers of the libraries that match the name and the question, best match first. ' +
  'Leave out libraries that do not match. Use only numbers from the list.';

const clip = (s: string, max: number): string => {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, Math.max(0, max - 1))}…` : line;
};

/**
 * The user prompt: the question, then each candidate numbered, each cut so the whole list stays
 * within about `budgetTokens` (four characters a token), at most `excerptChars` of text each.
 */
export function buildPrompt(heading: string, items: readonly PromptItem[], budgetTokens: number, excerptChars: number): string {
  const perItem = Math.max(60, Math.floor((budgetTokens * 4) / Math.max(1, items.length)));
  const lines = items.map((item, i) => {
    const head = clip(`[${i + 1}] ${item.title}${item.where ? ` (${item.where})` : ''}`, Math.min(160, perItem));
    const room = Math.min(excerptChars, perItem - head.length - 4);
    const text = room > 20 ? clip(item.text, room) : '';
    return text ? `${head}\n    ${text}` : head;
  });
  return `${heading}\n\n${lines.join('\n')}\n\nReply with {"ranking": [...]}.`;
}

/** The candidates' positions (0-based) the answer ranks, best first; null when the answer is not valid. */
export function parseRanking(text: string, count: number): number[] | null {
  let body = text.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(body);
  if (fenced) body = fenced[1]!;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const ranking = (value as { ranking?: unknown }).ranking;
  if (!Array.isArray(ranking)) return null;
  const seen = new Set<number>();
  for (const n of ranking) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > count || seen.has(n)) return null;
    seen.add(n);
  }
  return ranking.map((n: number) => n - 1);
}
