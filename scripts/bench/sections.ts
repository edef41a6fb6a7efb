/**
 * The sections of a documentation page as the benchmark's question format defines them: one per
 * markdown heading (ATX or setext, never inside code), from the heading's line to the line before
 * the next heading of the same or higher level (or the page's last line), with the breadcrumb of
 * the raw heading texts above and including it. A page whose title is not its one level-1 heading
 * (none, or several used as section headings) is rooted at its front matter's title, as
 * documentation sites show it, when it has one. MDX is first cleaned line for line the way the
 * markdown chunker does (JSX-only lines dropped), so its headings parse as the site renders them. Gold spans are checked against these
 * (check-questions.ts) and the plain-BM25 section baseline indexes them (baseline.ts).
 */
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfm } from 'micromark-extension-gfm';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { frontmatter } from 'micromark-extension-frontmatter';
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter';
import type { Heading, Root, Yaml } from 'mdast';
import { parse as parseYaml } from 'yaml';
import { preprocess } from '../../plugins/chunker-markdown/preprocess.ts';

export interface PageSection {
  /** Heading texts from the page's top heading down to this one, as written (markup kept). */
  heading: string[];
  depth: number;
  /** 1-based, inclusive. */
  lines: [number, number];
}

/** The page's last line that is not blank (1-based); 0 for an empty page. */
function lastLine(lines: string[]): number {
  let n = lines.length;
  while (n > 0 && lines[n - 1].trim() === '') n--;
  return n;
}

/** A heading's text as written: the line(s) without the ATX marks or the setext underline. */
function rawHeading(h: Heading, text: string): string {
  const src = text.slice(h.position!.start.offset!, h.position!.end.offset!);
  const first = src.split('\n');
  if (/^\s{0,3}#{1,6}(\s|$)/.test(first[0])) {
    return first[0].replace(/^\s{0,3}#{1,6}\s*/, '').replace(/\s+#+\s*$/, '').replace(/^#+$/, '').trim();
  }
  return first.slice(0, -1).map((l) => l.trim()).join(' ');
}

/** Every heading section of a markdown (or markdown-like text) page, in document order. */
export function pageSections(source: string, format: PageFormat = 'markdown'): PageSection[] {
  const { headings, end } = readHeadings(source, format);
  return headings.map((h, i) => {
    const next = headings.slice(i + 1).find((n) => n.depth <= h.depth);
    return { heading: h.breadcrumb, depth: h.depth, lines: [h.line, next ? next.line - 1 : end] };
  });
}

/**
 * The page cut at every heading into parts that do not overlap: the text before the first
 * heading (when there is any), then each heading with its own text up to the next heading of any
 * level. What a plain search over "the sections" indexes (section-baseline.ts).
 */
export function sectionBodies(source: string, format: PageFormat = 'markdown'): PageSection[] {
  const { headings, end, root } = readHeadings(source, format);
  const lines = source.split('\n');
  const out: PageSection[] = [];
  const first = headings.length > 0 ? headings[0].line : end + 1;
  if (first > 1 && lines.slice(0, first - 1).some((l) => l.trim() !== '')) out.push({ heading: root, depth: 0, lines: [1, first - 1] });
  headings.forEach((h, i) => out.push({ heading: h.breadcrumb, depth: h.depth, lines: [h.line, i + 1 < headings.length ? headings[i + 1].line - 1 : end] }));
  return out;
}

export type PageFormat = 'markdown' | 'mdx';

interface PageHeadings {
  headings: Array<{ depth: number; line: number; breadcrumb: string[] }>;
  /** The breadcrumb's root above the page's headings (its front matter title), or none. */
  root: string[];
  /** The page's last non-blank line. */
  end: number;
}

function readHeadings(source: string, format: PageFormat): PageHeadings {
  const text = format === 'mdx' ? preprocess(withoutJsxComments(source), 'mdx').text : source;
  const tree: Root = fromMarkdown(text, {
    extensions: [gfm(), frontmatter(['yaml', 'toml'])],
    mdastExtensions: [gfmFromMarkdown(), frontmatterFromMarkdown(['yaml', 'toml'])],
  });
  const found: Array<{ depth: number; line: number; text: string }> = [];
  const walk = (node: { type: string; children?: unknown[] }): void => {
    if (node.type === 'heading') {
      const h = node as Heading;
      found.push({ depth: h.depth, line: h.position!.start.line, text: rawHeading(h, text) });
      return;
    }
    for (const c of (node.children ?? []) as Array<{ type: string; children?: unknown[] }>) walk(c);
  };
  walk(tree);
  const root = found.filter((h) => h.depth === 1).length === 1 ? [] : frontMatterTitle(tree);
  const stack: Array<{ depth: number; text: string }> = [];
  const headings = found.map((h) => {
    while (stack.length > 0 && stack[stack.length - 1].depth >= h.depth) stack.pop();
    stack.push({ depth: h.depth, text: h.text });
    return { depth: h.depth, line: h.line, breadcrumb: [...root, ...stack.map((s) => s.text)] };
  });
  return { headings, root, end: lastLine(text.split('\n')) };
}

/** The title of the page's YAML front matter, as a one-element list, or none. */
function frontMatterTitle(tree: Root): string[] {
  const fm = tree.children.find((c): c is Yaml => c.type === 'yaml');
  if (!fm) return [];
  try {
    const data = parseYaml(fm.value) as { title?: unknown } | null;
    return typeof data?.title === 'string' && data.title.trim() ? [data.title.trim()] : [];
  } catch {
    return [];
  }
}

/** MDX comments (`{/* ... *\/}`) spanning lines, blanked line for line: what they hold is never shown. */
function withoutJsxComments(source: string): string {
  return source.replace(/\{\/\*[\s\S]*?\*\/\}/g, (c) => c.replace(/[^\n]/g, ' '));
}
