/**
 * One Confluence page as a markdown document: the page hierarchy as headings on top (space,
 * ancestors, the page), so the markdown chunker's breadcrumb reads Space > Parent > Page >
 * Section, then the body converted from the storage format with its headings moved below them.
 */
import type TurndownService from 'turndown';
import type { JSDOM } from 'jsdom';
import { lazyModule } from '../../core/lazy-module.ts';

/** jsdom, loaded at the first page converted (importing it costs about 0.8 s of CPU at start). */
const jsdom = lazyModule<typeof import('jsdom')>('jsdom');
/** turndown, loaded at the first page converted rather than at start. */
const turndownModule = lazyModule<typeof import('turndown')>('turndown');
const gfmModule = lazyModule<typeof import('turndown-plugin-gfm')>('turndown-plugin-gfm');
import { parseStorage, storageToHtml, type StorageContext } from './storage-html.ts';

/** Headings above the body: the space (h1), at most this many ancestor levels, the page. */
const MAX_TRAIL_HEADINGS = 2;
/** Joins ancestors merged into one heading when a page sits deeper than MAX_TRAIL_HEADINGS. */
export const TRAIL_JOINER = ' › ';

let service: TurndownService | null = null;
let window: JSDOM['window'] | null = null;

function turndown(): TurndownService {
  if (service) return service;
  const td = new (turndownModule())({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
    hr: '---',
  });
  td.use(gfmModule().gfm);
  // A GFM table cell holds one line: join the cell's paragraphs and escape its pipes.
  td.addRule('confluenceTableCell', {
    filter: ['th', 'td'],
    replacement(content, node) {
      const el = node as unknown as { parentNode: { childNodes: ArrayLike<unknown> } };
      const first = Array.prototype.indexOf.call(el.parentNode.childNodes, node) === 0;
      const one = content.trim().replace(/\n+/g, ' ').replace(/\|/g, '\\|');
      return `${first ? '| ' : ' '}${one} |`;
    },
  });
  // Turndown keeps a ``` fence even around code that holds ```: use a longer fence then.
  td.addRule('confluenceFencedCode', {
    filter: (node) => node.nodeName === 'PRE' && node.firstChild?.nodeName === 'CODE',
    replacement(_content, node) {
      const code = node.firstChild as unknown as { className?: string; textContent: string | null };
      const lang = /(?:^|\s)language-(\S+)/.exec(code.className ?? '')?.[1] ?? '';
      const text = (code.textContent ?? '').replace(/\n+$/, '');
      const longest = Math.max(2, ...[...text.matchAll(/^ {0,3}(`{3,})/gm)].map((m) => m[1].length));
      const fence = '`'.repeat(longest + 1);
      return `\n\n${fence}${lang}\n${text}\n${fence}\n\n`;
    },
  });
  service = td;
  return td;
}

function htmlWindow(): JSDOM['window'] {
  window ??= new (jsdom().JSDOM)('').window;
  return window;
}

/** The storage format of one body as markdown (headings moved down by ctx.headingOffset). */
export function storageToMarkdown(storage: string, ctx: StorageContext): string {
  const html = storageToHtml(parseStorage(storage), ctx);
  if (html.trim() === '') return '';
  const doc = new (htmlWindow().DOMParser)().parseFromString(`<body>${html}</body>`, 'text/html');
  return turndown()
    .turndown(doc.body as unknown as TurndownService.Node)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The heading titles above the body: [space, ...ancestors (merged when deep), page]. */
export function headingPath(space: string, trail: string[], title: string): string[] {
  let levels = trail;
  if (trail.length > MAX_TRAIL_HEADINGS) {
    const keep = MAX_TRAIL_HEADINGS - 1;
    levels = [trail.slice(0, trail.length - keep).join(TRAIL_JOINER), ...trail.slice(trail.length - keep)];
  }
  return [space, ...levels, title];
}

function headingText(s: string): string {
  // A heading is one line; a leading '#' or trailing '#'s would change its meaning.
  return s.replace(/\s+/g, ' ').trim().replace(/^#/, '\\#').replace(/#+$/, (m) => m.replace(/#/g, '\\#')) || 'Untitled';
}

/** The whole document: hierarchy headings, then the converted body. */
export function pageMarkdown(space: string, trail: string[], title: string, storage: string, ctx: Omit<StorageContext, 'headingOffset'>): string {
  const path = headingPath(space, trail, title);
  const head = path.map((t, i) => `${'#'.repeat(i + 1)} ${headingText(t)}`).join('\n\n');
  const body = storageToMarkdown(storage, { ...ctx, headingOffset: path.length });
  return body ? `${head}\n\n${body}\n` : `${head}\n`;
}
