/**
 * HTML to markdown with turndown and its GFM plugin (tables, strikethrough, task lists), plus
 * rules of our own: fenced code blocks keep their language, headings keep their anchors in the
 * `## Title {#anchor}` form the markdown chunker reads, empty links vanish.
 */
import type TurndownService from 'turndown';
import { lazyModule } from '../../core/lazy-module.ts';

/** turndown, loaded at the first page converted rather than at start. */
const turndownModule = lazyModule<typeof import('turndown')>('turndown');
const gfmModule = lazyModule<typeof import('turndown-plugin-gfm')>('turndown-plugin-gfm');
import { codeLanguage } from './code-language.ts';

/** Attribute the extractor sets on headings: the anchor that links to them. */
export const ANCHOR_ATTR = 'data-refdesk-anchor';
const ANCHOR_OK = /^[\w.-]+$/;

/** The text of a <pre>, with <br> as line breaks. */
function preText(node: Node): string {
  let out = '';
  const walk = (n: Node): void => {
    if (n.nodeType === 3) out += n.nodeValue ?? '';
    else if (n.nodeName === 'BR') out += '\n';
    else n.childNodes.forEach(walk);
  };
  walk(node);
  return out.replace(/^\n+|\s+$/g, '');
}

function createService(): TurndownService {
  const { strikethrough, tables, taskListItems } = gfmModule();
  const service = new (turndownModule())({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
    hr: '---',
  });
  service.use([tables, strikethrough, taskListItems]);
  service.addRule('refdeskCode', {
    filter: (node) => node.nodeName === 'PRE',
    replacement: (_content, node) => {
      const code = preText(node as unknown as Node);
      if (!code.trim()) return '';
      const lang = codeLanguage(node as unknown as Element);
      const longest = Math.max(2, ...[...code.matchAll(/`{3,}/g)].map((m) => m[0].length));
      const fence = '`'.repeat(longest + 1);
      return `\n\n${fence}${lang}\n${code}\n${fence}\n\n`;
    },
  });
  service.addRule('refdeskHeading', {
    filter: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
    replacement: (content, node) => {
      const level = Number(node.nodeName.charAt(1));
      const text = content.replace(/\s+/g, ' ').trim();
      if (!text) return '';
      const anchor = (node as unknown as Element).getAttribute(ANCHOR_ATTR);
      const id = anchor && ANCHOR_OK.test(anchor) ? ` {#${anchor}}` : '';
      return `\n\n${'#'.repeat(level)} ${text}${id}\n\n`;
    },
  });
  service.addRule('refdeskEmptyLink', {
    filter: (node) => node.nodeName === 'A' && (node.textContent ?? '').trim() === '' && !(node as unknown as Element).querySelector('img'),
    replacement: () => '',
  });
  return service;
}

let shared: TurndownService | null = null;

/** Converts one element (already cleaned by the extractor) to markdown. */
export function htmlToMarkdown(root: Element): string {
  shared ??= createService();
  const md = shared.turndown(root as unknown as TurndownService.Node);
  return md.replace(/\n{3,}/g, '\n\n').trim() + '\n';
}
