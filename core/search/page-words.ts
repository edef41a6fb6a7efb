/**
 * A page's front matter as the markdown chunker hands it to the index, on the description of the
 * page's first info snippet (unused by info snippets, never shown in an answer):
 *
 * - its search words (keywords, tags, aliases, short titles), one per line: a field of every
 *   section of the page (core/search/index-data.ts);
 * - its summary (the front matter's `description`, what the page's authors wrote to tell readers
 *   and search engines what the page is about), after a line starting with PAGE_SUMMARY_MARK:
 *   evidence for the page as a whole, in the page-level index only (pageFusion), not a field of
 *   its sections.
 */

/** The mark that starts the summary's line (a control character no keyword holds). */
export const PAGE_SUMMARY_MARK = '\u0001';

/** The carrier's text for these search words and summary ('' when neither). */
export function pageWordsText(words: readonly string[], summary?: string): string {
  const clean = summary?.replace(/\s+/g, ' ').trim();
  return [...words, ...(clean ? [PAGE_SUMMARY_MARK + clean] : [])].join('\n');
}

/** The search words and the summary held by a carrier's text. */
export function readPageWords(text: string): { words: string; summary: string } {
  const at = text.indexOf(PAGE_SUMMARY_MARK);
  if (at < 0) return { words: text, summary: '' };
  return { words: text.slice(0, at), summary: text.slice(at + PAGE_SUMMARY_MARK.length) };
}
