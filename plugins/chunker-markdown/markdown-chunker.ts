import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfm } from 'micromark-extension-gfm';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { frontmatter } from 'micromark-extension-frontmatter';
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter';
import { toString } from 'mdast-util-to-string';
import { parse as parseYaml } from 'yaml';
import type { Code, Heading, Root, RootContent } from 'mdast';
import type { Chunker, DocumentFormat, Snippet, SourceDocument } from '../../core/contracts.ts';
import { originalLine } from '../../core/includes/line-map.ts';
import { pageWordsText } from '../../core/search/page-words.ts';
import { preprocess, stripInlineMarkup } from './preprocess.ts';
import { entrySignature, headingNames, qualifiedName, type EntrySignature } from './entries.ts';
import {
  estimateTokens,
  firstSentence,
  firstSentences,
  markdownToPlain,
  normalizeLanguage,
  slugify,
  splitHeadingId,
  truncate,
} from './text-utils.ts';

export interface MarkdownChunkerOptions {
  /** Info snippets longer than this are split at block boundaries. */
  maxInfoTokens: number;
  /** Longest code description kept, in characters. */
  maxDescriptionChars: number;
}

interface Section {
  /** Heading path below the page title. */
  path: string[];
  anchor?: string;
  startLine: number;
  endLine: number;
  nodes: RootContent[];
  /** An API reference entry's section (entries.ts): its signature and where it is written. */
  entry?: EntrySignature & { title: string; line: number; endLine: number };
}

interface PageMeta {
  title?: string;
  description?: string;
  signatures: string[];
  /** Words the page's authors gave readers to find it by (keywords, tags, aliases, short titles). */
  keywords: string[];
}

const MAX_HEADING_DEPTH = 6;
/** Signature paragraphs a markdown page needs to be read as reference entries (entries.ts). */
const MIN_MARKDOWN_ENTRIES = 2;
/** Longest description of an entry's snippet: its first sentences. */
const ENTRY_DESCRIPTION_CHARS = 240;

/**
 * Markdown / MDX / markdown-like text chunker. Splits by heading hierarchy; every fenced or
 * indented code block becomes one code snippet (never split), the prose of a section becomes
 * one or more info snippets split only between blocks.
 */
export class MarkdownChunker implements Chunker {
  readonly formats: readonly DocumentFormat[] = ['markdown', 'mdx', 'text'];
  /**
   * 2: API reference entries as sections and snippets of their own (entries.ts, issue 22).
   * 3: the page's front-matter description rides with its search words (page-words.ts).
   */
  readonly revision = 3;

  constructor(private readonly options: MarkdownChunkerOptions) {}

  chunk(doc: SourceDocument): Snippet[] {
    const { text } = preprocess(doc.content, doc.format);
    const tree = parseMarkdown(text);
    const src = withInlineReferences(text, tree);
    const meta = readFrontMatter(tree);
    const lastLine = lastContentLine(text);
    const pageTitle = meta.title ?? firstH1(tree) ?? doc.title ?? titleFromPath(doc.path);
    const sections = splitSections(tree, doc.format, lastLine);
    const out: Snippet[] = [];
    for (const section of sections) this.emitSection(doc, src, pageTitle, meta, section, sections[0] === section, out);
    // The page's search words and its summary ride on its first info snippet's description
    // (unused by info snippets, never shown in an answer; core/search/page-words.ts): the index
    // gives the words to every section of the page and the summary to the page-level ranking.
    const carrier = out.find((s) => s.type === 'info');
    if (carrier && (meta.keywords.length > 0 || meta.description)) carrier.description = pageWordsText(meta.keywords, meta.description);
    if (doc.lineMap) {
      // The content's lines are not the file's (includes expanded): cite the file's own lines.
      for (const s of out) {
        s.lineStart = originalLine(doc.lineMap, s.lineStart);
        s.lineEnd = Math.max(s.lineStart, originalLine(doc.lineMap, s.lineEnd));
      }
    }
    return out;
  }

  private emitSection(
    doc: SourceDocument,
    src: Source,
    pageTitle: string,
    meta: PageMeta,
    section: Section,
    isFirst: boolean,
    out: Snippet[],
  ): void {
    const path = section.path.length > 0 && section.path[0] === pageTitle ? section.path.slice(1) : section.path;
    const breadcrumb = [pageTitle, ...path];
    const heading = path.length > 0 ? path[path.length - 1] : pageTitle;
    const base = {
      breadcrumb,
      pageTitle,
      sourcePath: doc.path,
      ...(doc.url ? { sourceUrl: section.anchor ? `${doc.url}#${section.anchor}` : doc.url } : {}),
      ...(section.anchor ? { anchor: section.anchor } : {}),
    };

    const intro: string[] = [];
    if (isFirst && path.length === 0) {
      if (meta.description) intro.push(meta.description);
      for (const s of meta.signatures) intro.push('`' + s + '`');
    }

    // Walk blocks in order: collect prose runs, emit code snippets with the prose before them.
    const blocks = sectionBlocks(section.nodes, src, this.options.maxInfoTokens);
    const codeCount = blocks.filter((b) => b.code).length;
    const prose: Array<{ md: string; start: number; end: number }> = [];
    let proseSinceCode: string[] = [];
    let sectionFirstProse = '';
    const pendingCode: Array<{ node: Code; before: string; after: string }> = [];
    blocks.forEach((block, i) => {
      if (block.code) {
        const next = blocks[i + 1];
        pendingCode.push({ node: block.code, before: proseSinceCode.join('\n\n'), after: next && EXPLAINS_AFTER.has(next.type) ? next.md : '' });
        proseSinceCode = [];
        return;
      }
      prose.push({ md: block.md, start: block.start, end: block.end });
      // A list item starts a new step: the code after it is explained by it, not by the step before.
      if (block.item) proseSinceCode = [];
      proseSinceCode.push(block.item ? block.md.replace(LEADING_MARKER, '') : block.md);
      if (!sectionFirstProse) sectionFirstProse = block.md;
    });

    if (section.entry) {
      // The entry's own snippet: its name, its signature as code, its first sentences.
      const { signature, title, line, endLine } = section.entry;
      const description = firstSentences(markdownToPlain(sectionFirstProse), ENTRY_DESCRIPTION_CHARS);
      out.push({
        ...base,
        type: 'code',
        title,
        description,
        language: normalizeLanguage('', signature),
        code: signature,
        content: '',
        lineStart: line,
        lineEnd: endLine,
        tokens: estimateTokens(title) + estimateTokens(description) + estimateTokens(signature) + 4,
      });
    }

    // Code snippets.
    pendingCode.forEach(({ node, before, after }, idx) => {
      const code = node.value;
      if (!code.trim()) return;
      let description = markdownToPlain(before) || (idx === 0 ? intro.join('\n') : '') || markdownToPlain(after) || markdownToPlain(sectionFirstProse);
      description = truncate(description, this.options.maxDescriptionChars);
      const language = normalizeLanguage(node.lang, code);
      let title = heading;
      if (codeCount > 1) {
        const hint = firstSentence(markdownToPlain(before || after), 80);
        if (hint) title = `${heading} - ${hint}`;
      }
      const fileName = fenceFileName(node.meta ?? '', node.lang ?? '');
      if (fileName && !title.includes(fileName)) title = `${title} (${fileName})`;
      out.push({
        ...base,
        type: 'code',
        title,
        description,
        language,
        code,
        content: '',
        lineStart: node.position!.start.line,
        lineEnd: node.position!.end.line,
        tokens: estimateTokens(title) + estimateTokens(description) + estimateTokens(code) + 4,
      });
    });

    // Info snippets: the section's prose, split at block boundaries when long.
    const parts: Array<{ blocks: typeof prose; tokens: number }> = [];
    let cur: { blocks: typeof prose; tokens: number } = { blocks: [], tokens: 0 };
    for (const block of prose) {
      const t = estimateTokens(block.md);
      // Split before a block that would overflow, unless what we hold is too small to stand alone.
      if (cur.blocks.length > 0 && cur.tokens + t > this.options.maxInfoTokens && cur.tokens >= this.options.maxInfoTokens / 4) {
        parts.push(cur);
        cur = { blocks: [], tokens: 0 };
      }
      cur.blocks.push(block);
      cur.tokens += t;
    }
    if (cur.blocks.length > 0) parts.push(cur);
    if (intro.length > 0 && parts.length === 0) {
      parts.push({ blocks: [], tokens: 0 });
    }
    parts.forEach((part, idx) => {
      const content = stripInlineMarkup([...(idx === 0 ? intro : []), ...part.blocks.map((b) => b.md)].join('\n\n')).trim();
      if (!content) return;
      const lineStart = idx === 0 ? section.startLine : part.blocks[0].start;
      const lineEnd = idx === parts.length - 1 ? section.endLine : parts[idx + 1].blocks[0].start - 1;
      out.push({
        ...base,
        type: 'info',
        title: heading,
        description: '',
        language: '',
        code: '',
        content,
        lineStart,
        lineEnd: Math.max(lineStart, lineEnd),
        tokens: estimateTokens(content) + estimateTokens(breadcrumb.join(' > ')),
      });
    });
  }
}

function parseMarkdown(text: string): Root {
  return fromMarkdown(text, {
    extensions: [gfm(), frontmatter(['yaml', 'toml'])],
    mdastExtensions: [gfmFromMarkdown(), frontmatterFromMarkdown(['yaml', 'toml'])],
  });
}

/** The page's text as the chunker slices it. */
interface Source {
  /** text.slice(start, end), with the page's reference links written inline. */
  slice(start: number, end: number): string;
}

/**
 * The text with its reference links (`[text][label]`, `[text][]`, `[label]`) written inline,
 * `[text](url)`, in every slice, when the page defines the label: the chunker drops the
 * definitions (usually at the page's end), so the prose keeps saying where each link goes. The
 * lines stay the same (a link whose reference part is on another line than its text, or a URL
 * with blanks, is left as it is); images are left too; a slice that cuts a link leaves it as it is.
 */
function withInlineReferences(text: string, tree: Root): Source {
  const urls = new Map<string, string>();
  const refs: Array<{ identifier: string; start: number; end: number; textStart: number; textEnd: number }> = [];
  const walk = (node: { type: string; children?: unknown[] } & Record<string, unknown>): void => {
    if (node.type === 'definition') {
      const id = node.identifier as string;
      if (!urls.has(id)) urls.set(id, node.url as string);
    } else if (node.type === 'linkReference') {
      const kids = (node.children ?? []) as Array<{ position?: { start: { offset?: number }; end: { offset?: number } } }>;
      const pos = node.position as { start: { offset?: number }; end: { offset?: number } } | undefined;
      const first = kids[0]?.position?.start.offset;
      const last = kids[kids.length - 1]?.position?.end.offset;
      if (pos?.start.offset !== undefined && pos.end.offset !== undefined && first !== undefined && last !== undefined)
        refs.push({ identifier: node.identifier as string, start: pos.start.offset, end: pos.end.offset, textStart: first, textEnd: last });
      return;
    }
    for (const c of node.children ?? []) walk(c as typeof node);
  };
  walk(tree as unknown as Parameters<typeof walk>[0]);
  const edits: Array<{ start: number; end: number; link: string }> = [];
  const lines = (s: string) => s.split('\n').length;
  for (const r of refs.sort((a, b) => a.start - b.start)) {
    const url = urls.get(r.identifier);
    if (!url || /\s/.test(url)) continue;
    const link = `[${text.slice(r.textStart, r.textEnd)}](${url})`;
    if (lines(link) === lines(text.slice(r.start, r.end))) edits.push({ start: r.start, end: r.end, link });
  }
  if (edits.length === 0) return { slice: (a, b) => text.slice(a, b) };
  return {
    slice(a, b) {
      // The first edit starting at or after a.
      let lo = 0;
      let hi = edits.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (edits[mid].start < a) lo = mid + 1;
        else hi = mid;
      }
      let out = '';
      let at = a;
      for (let i = lo; i < edits.length && edits[i].end <= b; i++) {
        out += text.slice(at, edits[i].start) + edits[i].link;
        at = edits[i].end;
      }
      return out + text.slice(at, b);
    },
  };
}

function sliceNode(src: Source, node: RootContent): string {
  const p = node.position;
  if (!p || p.start.offset === undefined || p.end.offset === undefined) return toString(node);
  return src.slice(p.start.offset, p.end.offset);
}

/** A list item's marker (`1.`, `2)`, `-`, `*`, `+`): with the blanks after it, or all there is. */
const MARKER = String.raw`(?:\d+[.)]|[-*+])`;
const LEADING_MARKER = new RegExp(String.raw`^${MARKER}[ \t]+`);
const ONLY_MARKER = new RegExp(`^${MARKER}$`);

/** Prose that may describe the code block right before it (a table or a rule does not). */
const EXPLAINS_AFTER: ReadonlySet<RootContent['type']> = new Set(['paragraph', 'list', 'blockquote']);

/** A block of a section: a code block, or prose (markdown) with its line span. */
interface Block {
  /** The mdast type of the block (`list` for the parts of a list, `table` for a table's). */
  type: RootContent['type'];
  code?: Code;
  /** Prose that opens a list item (with its marker). */
  item?: boolean;
  md: string;
  start: number;
  end: number;
}

/**
 * The blocks of a section in document order. A list holding code (the steps of a guide, each
 * with its snippet) is opened up so its code blocks become code snippets of their own, each item's
 * text kept as prose; a list or table bigger than `maxTokens` is cut between items or rows (a
 * table part repeats the header), so no info snippet is a whole reference table.
 */
function sectionBlocks(nodes: readonly RootContent[], src: Source, maxTokens: number): Block[] {
  const out: Block[] = [];
  for (const node of nodes) {
    if (node.type === 'code') {
      out.push({ type: 'code', code: node, md: '', start: node.position!.start.line, end: node.position!.end.line });
      continue;
    }
    if (node.type === 'html' || node.type === 'yaml' || node.type === 'definition' || (node.type as string) === 'toml') continue;
    if (node.type === 'list' && isPageToc(node)) continue;
    if (node.type === 'list' && hasCode(node)) {
      listBlocks(node, src, out);
      continue;
    }
    if (node.type === 'blockquote' && hasCode(node)) {
      quoteBlocks(node, src, out);
      continue;
    }
    const md = cleanProse(sliceNode(src, node), node.type === 'table');
    if (!md.trim()) continue;
    const start = node.position!.start.line;
    const end = node.position!.end.line;
    if (estimateTokens(md) > maxTokens && node.type === 'list') out.push(...groupParts('list', node.children, src, maxTokens, ''));
    else if (estimateTokens(md) > maxTokens && node.type === 'table' && node.children.length > 2) {
      // The header row and the delimiter row: the table's text before its first body row.
      const header = cleanProse(src.slice(node.position!.start.offset!, node.children[1].position!.start.offset!).trimEnd(), true);
      out.push(...groupParts('table', node.children.slice(1), src, maxTokens - estimateTokens(header), header));
    } else out.push({ type: node.type, md, start, end });
  }
  return out;
}

/**
 * A page's own table of contents: a list (nested or not) whose items are only links to headings
 * of the same page. It repeats the page's headings, so it would match any question about the
 * page, and the reader gets nothing from it.
 */
function isPageToc(list: Extract<RootContent, { type: 'list' }>): boolean {
  let items = 0;
  let links = 0;
  const walk = (l: Extract<RootContent, { type: 'list' }>): void => {
    for (const item of l.children) {
      items++;
      const [first, ...rest] = item.children;
      const para = first?.type === 'paragraph' ? first.children.filter((c) => c.type !== 'text' || c.value.trim()) : [];
      if (para.length === 1 && para[0].type === 'link' && para[0].url.startsWith('#')) links++;
      for (const c of rest) if (c.type === 'list') walk(c);
    }
  };
  walk(list);
  return items >= 3 && links >= 0.8 * items;
}

function hasCode(node: RootContent): boolean {
  if (node.type === 'code') return true;
  return 'children' in node && (node.children as RootContent[]).some(hasCode);
}

/** A list with code opened up: each item's prose (with its marker), its code, its nested lists. */
function listBlocks(list: Extract<RootContent, { type: 'list' }>, src: Source, out: Block[]): void {
  for (const item of list.children) {
    let pendingStart = item.position!.start.offset!;
    let pendingLine = item.position!.start.line;
    let opening = true;
    const flush = (endOffset: number, endLine: number) => {
      const md = cleanProse(dedent(src.slice(pendingStart, endOffset))).trim();
      // An item that opens with its code leaves only its marker before it.
      if (md && !ONLY_MARKER.test(md)) out.push({ type: 'list', md, start: pendingLine, end: endLine, ...(opening ? { item: true } : {}) });
      opening = false;
    };
    for (const child of item.children) {
      if (opensUp(child)) {
        flush(child.position!.start.offset!, child.position!.start.line - 1);
        openChild(child, src, out);
        pendingStart = child.position!.end.offset!;
        pendingLine = child.position!.end.line + 1;
        continue;
      }
    }
    if (pendingStart < item.position!.end.offset!) flush(item.position!.end.offset!, item.position!.end.line);
  }
}

/** Whether a child of a list item or block quote is opened up: a code block, or a list or quote holding code. */
function opensUp(child: RootContent): boolean {
  return child.type === 'code' || ((child.type === 'list' || child.type === 'blockquote') && hasCode(child));
}

/** The blocks of such a child: the code block itself, or the list or quote opened up in turn. */
function openChild(child: RootContent, src: Source, out: Block[]): void {
  if (child.type === 'code') out.push({ type: 'code', code: child, md: '', start: child.position!.start.line, end: child.position!.end.line });
  else if (child.type === 'list') listBlocks(child, src, out);
  else if (child.type === 'blockquote') quoteBlocks(child, src, out);
}

/**
 * A block quote with code opened up (a note that shows a command or a config): its prose before,
 * between and after the code blocks, each part still quoted, and each code block on its own.
 */
function quoteBlocks(quote: Extract<RootContent, { type: 'blockquote' }>, src: Source, out: Block[]): void {
  let pendingStart = quote.position!.start.offset!;
  let pendingLine = quote.position!.start.line;
  const flush = (endOffset: number, endLine: number) => {
    const md = cleanProse(src.slice(pendingStart, endOffset)).trim();
    // Between two code blocks there may be nothing but the quote's markers.
    if (md && !/^[>\s]*$/.test(md)) out.push({ type: 'blockquote', md, start: pendingLine, end: endLine });
  };
  for (const child of quote.children) {
    if (!opensUp(child)) continue;
    flush(child.position!.start.offset!, child.position!.start.line - 1);
    openChild(child, src, out);
    pendingStart = child.position!.end.offset!;
    pendingLine = child.position!.end.line + 1;
  }
  if (pendingStart < quote.position!.end.offset!) flush(quote.position!.end.offset!, quote.position!.end.line);
}

/**
 * Consecutive children (list items, table rows) in parts of at most `maxTokens`, each after
 * `header`. A list item too big alone with a list inside (an `options` item and its options) is
 * opened up: its nested list is cut the same way, each part after the item's lead line when that
 * is short (so every part says whose options it lists), else after nothing, with the lead its own
 * part. (`header` carries the leads of the items it sits in.)
 */
function groupParts(type: 'list' | 'table', children: readonly RootContent[], src: Source, maxTokens: number, header: string): Block[] {
  const table = type === 'table';
  const out: Block[] = [];
  let first = -1;
  let tokens = 0;
  const flush = (last: number) => {
    if (first < 0) return;
    const a = children[first].position!;
    const b = children[last].position!;
    const body = cleanProse(dedent(src.slice(a.start.offset!, b.end.offset!)), table);
    if (body.trim()) out.push({ type, md: header ? `${header}\n${body}` : body, start: a.start.line, end: b.end.line });
    first = -1;
    tokens = 0;
  };
  children.forEach((child, i) => {
    const t = estimateTokens(cleanProse(sliceNode(src, child), table));
    if (!table && t > maxTokens && child.type === 'listItem' && openItem(child, src, maxTokens, header, out, () => flush(i - 1))) return;
    if (first >= 0 && tokens + t > maxTokens) flush(i - 1);
    if (first < 0) first = i;
    tokens += t;
  });
  flush(children.length - 1);
  return out;
}

/** The parts of one oversized list item with a nested list (false: it has none; keep it whole). */
function openItem(item: Extract<RootContent, { type: 'listItem' }>, src: Source, maxTokens: number, header: string, out: Block[], flushBefore: () => void): boolean {
  const at = item.children.findIndex((c) => c.type === 'list');
  if (at <= 0) return false;
  flushBefore();
  const nested = item.children[at] as Extract<RootContent, { type: 'list' }>;
  const start = item.position!.start;
  const lead = cleanProse(dedent(src.slice(start.offset!, nested.position!.start.offset!))).trim();
  const context = [header, lead].filter(Boolean).join('\n');
  const short = estimateTokens(context) <= maxTokens / 4;
  // Too long to repeat: the lead (after the leads above it) is a part of its own.
  if (!short && context) out.push({ type: 'list', md: context, start: start.line, end: nested.position!.start.line - 1 });
  out.push(...groupParts('list', nested.children, src, short ? maxTokens - estimateTokens(context) : maxTokens, short ? context : ''));
  const rest = item.children.slice(at + 1);
  if (rest.length > 0) out.push(...groupParts('list', rest, src, maxTokens, ''));
  return true;
}

/** Lines indented alike (the body of a list item) moved back to the left margin. */
function dedent(md: string): string {
  const lines = md.split('\n');
  const rest = lines.slice(1).filter((l) => l.trim());
  const indent = rest.length === 0 ? 0 : Math.min(...rest.map((l) => l.match(/^ */)![0].length));
  return indent === 0 ? md : [lines[0], ...lines.slice(1).map((l) => l.slice(Math.min(indent, l.match(/^ */)![0].length)))].join('\n');
}

/**
 * Prose without inline images' data URIs (an embedded picture is kilobytes of base64, no words);
 * a table also without the runs of spaces that align its columns in the source.
 */
function cleanProse(md: string, table = false): string {
  const out = table ? md.replace(/[ \t]{2,}/g, ' ').replace(/-{4,}/g, '---') : md;
  return out.replace(/!\[([^\]]*)\]\(data:[^)]*\)/g, (_, alt: string) => (alt.trim() ? `[image: ${alt.trim()}]` : ''));
}

/** A file name given in the fence info (`js src/App.js`, `ts [vite.config.ts]`, `{file="x"}`). */
function fenceFileName(meta: string, lang: string): string {
  const bracket = `${lang} ${meta}`.match(/\[([\w./-]+\.[\w]+)\]/);
  if (bracket) return bracket[1];
  const attr = meta.match(/(?:file|filename|title)=["']?([\w./-]+\.[\w]+)/);
  if (attr) return attr[1];
  const bare = meta.match(/(?:^|\s)((?:[\w-]+\/)*[\w-]+\.(?:js|jsx|ts|tsx|mjs|cjs|json|css|html|py|go|rs|toml|yaml|yml|vue|md))(?:\s|$)/);
  return bare ? bare[1] : '';
}

function headingText(h: Heading): { text: string; anchor?: string } {
  const split = splitHeadingId(toString(h, { includeHtml: false }).replace(/\s+/g, ' '));
  const text = stripInlineMarkup(split.text).trim();
  return { text, anchor: split.anchor ?? (slugify(text) || undefined) };
}

function splitSections(tree: Root, format: DocumentFormat, lastLine: number): Section[] {
  const sections: Section[] = [];
  const stack: Array<{ depth: number; text: string }> = [];
  let cur: Section = { path: [], startLine: 1, endLine: lastLine, nodes: [] };
  let lastRealDepth = 1;
  // In markdown, a lone signature paragraph is often an example: a page is read as reference
  // entries only when it holds several (markdown-like text pages are reference pages).
  const entries = tree.children.map((n) => entrySignature(n));
  const useEntries = format === 'text' || entries.filter(Boolean).length >= MIN_MARKDOWN_ENTRIES;
  /** The type the last entry declared under the current heading (its members follow unqualified). */
  let owner: string | undefined;

  const open = (depth: number, text: string, anchor: string | undefined, line: number) => {
    cur.endLine = Math.max(cur.startLine, line - 1);
    sections.push(cur);
    while (stack.length > 0 && stack[stack.length - 1].depth >= depth) stack.pop();
    stack.push({ depth, text });
    cur = { path: stack.map((s) => s.text), anchor, startLine: line, endLine: lastLine, nodes: [] };
  };

  tree.children.forEach((node, i) => {
    const line = node.position?.start.line ?? 1;
    if (node.type === 'heading') {
      const { text, anchor } = headingText(node);
      if (!text) return;
      lastRealDepth = node.depth;
      owner = undefined;
      open(node.depth, text, anchor, line);
      return;
    }
    const entry = entries[i];
    const endLine = node.position?.end.line ?? line;
    if (entry && cur.nodes.length === 0 && !cur.entry && headingNames(cur.path[cur.path.length - 1], entry.name)) {
      // The signature right under a heading naming it (javadoc, TypeDoc, Sphinx with headings):
      // the heading's section is the entry.
      cur.entry = { ...entry, title: qualifiedName(entry.name, owner), line, endLine };
      return;
    }
    if (entry && useEntries) {
      const name = qualifiedName(entry.name, owner);
      if (cur.entry && cur.nodes.length === 0 && cur.entry.title === name) {
        // An overload right after its first signature (`lru_cache(user_function)`, then
        // `lru_cache(maxsize=128)`): one entry with both signatures and the description after them.
        cur.entry = { ...cur.entry, signature: `${cur.entry.signature}\n${entry.signature}`, endLine };
        return;
      }
      if (entry.declaresType) owner = name;
      open(Math.min(lastRealDepth + 1, MAX_HEADING_DEPTH + 1), name, slugify(name) || undefined, line);
      cur.entry = { ...entry, title: name, line, endLine };
      return;
    }
    cur.nodes.push(node);
  });
  cur.endLine = Math.max(cur.startLine, lastLine);
  sections.push(cur);
  // Trim trailing blank lines of each section is implicit: endLine is the line before the next heading.
  return sections.filter((s) => s.nodes.length > 0 || s.path.length > 0);
}

function readFrontMatter(tree: Root): PageMeta {
  const meta: PageMeta = { signatures: [], keywords: [] };
  const first = tree.children[0];
  if (!first || (first.type !== 'yaml' && (first.type as string) !== 'toml')) return meta;
  if (first.type !== 'yaml') return meta;
  let data: unknown;
  try {
    data = parseYaml(first.value);
  } catch {
    return meta;
  }
  if (!data || typeof data !== 'object') return meta;
  const d = data as Record<string, unknown>;
  if (typeof d.title === 'string' && d.title.trim()) meta.title = d.title.trim();
  const desc = d.description ?? d.summary;
  if (typeof desc === 'string' && desc.trim()) meta.description = desc.trim();
  collectSignatures(d, meta.signatures, 0);
  collectKeywords(d, meta.keywords, 0);
  meta.keywords = [...new Set(meta.keywords)];
  return meta;
}

/**
 * Front-matter keys (any depth, any case: Hugo's `params.functions_and_methods.aliases`) whose
 * values are words readers find the page by: its search keywords and tags, its other names and
 * former URLs, its short title in menus.
 */
const KEYWORD_KEYS: ReadonlySet<string> = new Set(['keywords', 'tags', 'tag', 'aliases', 'linktitle', 'sidebar_label', 'short_title', 'nav_title']);

/** The strings of the keyword keys (a string or a list); a URL or site path gives its path words. */
function collectKeywords(v: unknown, out: string[], depth: number): void {
  if (depth > 4 || !v || typeof v !== 'object' || Array.isArray(v)) return;
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (!KEYWORD_KEYS.has(k.toLowerCase())) {
      collectKeywords(val, out, depth + 1);
      continue;
    }
    for (const item of Array.isArray(val) ? val : [val]) {
      if (typeof item !== 'string' || !item.trim() || item.length > 200) continue;
      const word = item.trim();
      const words = /^(\/|https?:\/\/)/.test(word) ? word.replace(/^https?:\/\/[^/]+/, '').replace(/[/_.#-]+/g, ' ').trim() : word;
      if (words) out.push(words);
    }
  }
}

function collectSignatures(v: unknown, out: string[], depth: number): void {
  if (depth > 4 || !v || typeof v !== 'object') return;
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (k === 'signatures' && Array.isArray(val)) {
      for (const s of val) if (typeof s === 'string' && s.length < 300) out.push(s);
    } else collectSignatures(val, out, depth + 1);
  }
}

function firstH1(tree: Root): string | undefined {
  for (const n of tree.children) {
    if (n.type === 'heading' && n.depth === 1) return headingText(n).text || undefined;
  }
  return undefined;
}

function titleFromPath(path: string): string {
  const base = path.split('/').pop() ?? path;
  const name = base.replace(/\.[^.]+$/, '');
  if (name.toLowerCase() === 'index' || name.toLowerCase() === 'readme') {
    const parts = path.split('/');
    if (parts.length > 1) return parts[parts.length - 2];
  }
  return name;
}

function lastContentLine(text: string): number {
  const lines = text.split('\n');
  let n = lines.length;
  while (n > 1 && lines[n - 1].trim() === '') n--;
  return n;
}
