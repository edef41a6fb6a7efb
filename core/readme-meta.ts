/**
 * A project's name and summary from its README (or any markdown page): the first H1 and the
 * first paragraph of prose after it. Badges, images, HTML, links' targets and emphasis marks are
 * dropped; front matter and code fences are skipped. Sources use it for `ctx.setLibraryMeta`.
 */

export interface MarkdownMeta {
  title?: string;
  description?: string;
}

/** Longest description taken from a paragraph (cut at a sentence end when one is near). */
const DESCRIPTION_MAX = 300;

/** Markdown inline text as plain text. */
export function plainInline(md: string): string {
  return md
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ') // images
    .replace(/\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)/g, ' ') // linked badges
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // links: keep their text
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1') // reference links
    .replace(/<[^>]+>/g, ' ')
    .replace(/(\*\*|__|\*|_|~~|`)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function shorten(text: string): string {
  if (text.length <= DESCRIPTION_MAX) return text;
  const cut = text.slice(0, DESCRIPTION_MAX);
  const end = cut.search(/[.!?](?=\s)[^.!?]*$/);
  return end > 80 ? cut.slice(0, end + 1) : `${cut.trimEnd()}…`;
}

/** The first H1 and the first prose paragraph after it (or the first paragraph when no H1). */
export function markdownMeta(markdown: string): MarkdownMeta {
  const lines = markdown.replace(/^\uFEFF/, '').split(/\r?\n/);
  let i = 0;
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, j) => j > 0 && (l.trim() === '---' || l.trim() === '...'));
    if (end > 0) i = end + 1;
  }
  let title: string | undefined;
  let description: string | undefined;
  let fence: string | null = null;
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0 && description === undefined) {
      const text = plainInline(paragraph.join(' '));
      // A paragraph of only badges or links leaves little text: not a description.
      if (/[A-Za-z]{2,}.*\s.*[A-Za-z]{2,}/.test(text)) description = shorten(text);
    }
    paragraph = [];
  };
  for (; i < lines.length && description === undefined; i++) {
    const line = lines[i];
    const trimmed = line.trim();
    if (fence) {
      if (trimmed.startsWith(fence)) fence = null;
      continue;
    }
    const open = /^(`{3,}|~{3,})/.exec(trimmed);
    if (open) {
      flush();
      fence = open[1];
      continue;
    }
    const h1 = /^#\s+(.+?)\s*#*\s*$/.exec(trimmed);
    const setext = title === undefined && paragraph.length === 1 && /^=+\s*$/.test(trimmed);
    if (setext) {
      title = plainInline(paragraph[0]) || undefined;
      paragraph = [];
      continue;
    }
    if (h1) {
      flush();
      if (title === undefined) title = plainInline(h1[1]) || undefined;
      continue;
    }
    if (trimmed === '' || /^#{2,6}\s/.test(trimmed) || /^(\s*[-*_]){3,}\s*$/.test(trimmed) || /^[|>]/.test(trimmed) || /^<\/?[a-z]/i.test(trimmed)) {
      flush();
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s/.test(line)) {
      flush();
      continue;
    }
    paragraph.push(trimmed);
  }
  flush();
  return { ...(title ? { title } : {}), ...(description ? { description } : {}) };
}
