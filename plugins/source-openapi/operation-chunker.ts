/**
 * The chunker for the documents this source renders (format `openapi-markdown`). It relies on
 * their fixed layout instead of guessing: the `#` section is the page's info snippet, every `##`
 * section that ends in a code block is one operation (a code snippet: the heading as title, all
 * the prose before the block as description, the block as code), and a `##` section without a
 * code block (Authentication) is an info snippet. Line ranges are those of the document.
 */
import type { Chunker, DocumentFormat, Snippet, SourceDocument } from '../../core/contracts.ts';
import { citeOriginalLines } from '../../core/includes/line-map.ts';

export const OPENAPI_FORMAT = 'openapi-markdown';

export interface OperationChunkerOptions {
  /** Info snippets longer than this are split between paragraphs. */
  maxInfoTokens: number;
}

interface Block {
  /** 1-based line numbers. */
  start: number;
  end: number;
  fence?: { lang: string; code: string };
}

interface Section {
  level: number;
  heading: string;
  headingLine: number;
  endLine: number;
  blocks: Block[];
}

function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s+/g, '-');
}

/** Sections by `#`/`##` heading, each with its paragraphs (blank-line separated) and code blocks. */
function sections(lines: string[]): Section[] {
  const out: Section[] = [];
  let cur: Section = { level: 0, heading: '', headingLine: 1, endLine: lines.length, blocks: [] };
  let para: Block | null = null;
  let fence: { marker: string; start: number; lang: string; body: string[] } | null = null;
  const closePara = (line: number) => {
    if (para) {
      para.end = line;
      cur.blocks.push(para);
      para = null;
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i];
    if (fence) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1][0] === fence.marker[0] && close[1].length >= fence.marker.length) {
        cur.blocks.push({ start: fence.start, end: n, fence: { lang: fence.lang, code: fence.body.join('\n') } });
        fence = null;
      } else fence.body.push(line);
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(line);
    if (open) {
      closePara(n - 1);
      fence = { marker: open[1], start: n, lang: open[2].toLowerCase(), body: [] };
      continue;
    }
    const heading = /^(#{1,2})\s+(.+?)\s*$/.exec(line);
    if (heading) {
      closePara(n - 1);
      cur.endLine = n - 1;
      out.push(cur);
      cur = { level: heading[1].length, heading: heading[2], headingLine: n, endLine: lines.length, blocks: [] };
      continue;
    }
    if (line.trim() === '') {
      closePara(n - 1);
      continue;
    }
    if (!para) para = { start: n, end: n };
  }
  closePara(lines.length);
  if (fence) cur.blocks.push({ start: fence.start, end: lines.length, fence: { lang: fence.lang, code: fence.body.join('\n') } });
  out.push(cur);
  return out.filter((s) => s.level > 0 || s.blocks.length > 0);
}

export class OperationChunker implements Chunker {
  readonly formats: readonly DocumentFormat[] = [OPENAPI_FORMAT];

  constructor(private readonly options: OperationChunkerOptions) {}

  chunk(doc: SourceDocument): Snippet[] {
    const lines = doc.content.replace(/\r\n?/g, '\n').split('\n');
    while (lines.length > 1 && lines[lines.length - 1].trim() === '') lines.pop();
    const all = sections(lines);
    const pageTitle = all.find((s) => s.level === 1)?.heading ?? doc.title ?? doc.path;
    const text = (b: Block) => lines.slice(b.start - 1, b.end).join('\n');
    const out: Snippet[] = [];
    for (const s of all) {
      const title = s.heading || pageTitle;
      const breadcrumb = s.level === 2 ? [pageTitle, s.heading] : [pageTitle];
      const base = { breadcrumb, pageTitle, sourcePath: doc.path, ...(doc.url ? { sourceUrl: doc.url } : {}), anchor: slug(title) || undefined };
      const lastFence = [...s.blocks].reverse().find((b) => b.fence);
      if (s.level === 2 && lastFence?.fence && lastFence.fence.code.trim()) {
        const description = s.blocks.filter((b) => !b.fence && b.end < lastFence.start).map(text).join('\n\n').trim();
        const codeText = lastFence.fence.code;
        out.push({
          ...base,
          type: 'code',
          title,
          description,
          language: lastFence.fence.lang || 'bash',
          code: codeText,
          content: '',
          lineStart: s.headingLine,
          lineEnd: lastFence.end,
          tokens: estimateTokens(title) + estimateTokens(description) + estimateTokens(codeText) + 4,
        });
        continue;
      }
      this.info(s, text, base, title, out);
    }
    // Line ranges cite the original file through the document's line map (the Chunker contract).
    if (doc.lineMap) citeOriginalLines(out, doc.lineMap);
    return out;
  }

  private info(s: Section, text: (b: Block) => string, base: Omit<Snippet, 'type' | 'title' | 'description' | 'language' | 'code' | 'content' | 'lineStart' | 'lineEnd' | 'tokens'>, title: string, out: Snippet[]): void {
    const blocks = s.blocks;
    if (blocks.length === 0) return;
    const parts: Block[][] = [];
    let cur: Block[] = [];
    let tokens = 0;
    for (const b of blocks) {
      const t = estimateTokens(text(b));
      if (cur.length > 0 && tokens + t > this.options.maxInfoTokens) {
        parts.push(cur);
        cur = [];
        tokens = 0;
      }
      cur.push(b);
      tokens += t;
    }
    if (cur.length > 0) parts.push(cur);
    parts.forEach((part, i) => {
      const content = part.map((b) => (b.fence ? `\`\`\`${b.fence.lang}\n${b.fence.code}\n\`\`\`` : text(b))).join('\n\n').trim();
      if (!content) return;
      const lineStart = i === 0 ? (s.level > 0 ? s.headingLine : part[0].start) : part[0].start;
      const lineEnd = part[part.length - 1].end;
      out.push({
        ...base,
        type: 'info',
        title,
        description: '',
        language: '',
        code: '',
        content,
        lineStart,
        lineEnd,
        tokens: estimateTokens(content) + estimateTokens(base.breadcrumb.join(' > ')),
      });
    });
  }
}
