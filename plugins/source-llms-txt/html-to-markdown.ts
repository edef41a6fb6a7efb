/**
 * A linked page that has no markdown variant is HTML: keep its main content (the `<main>` or
 * `<article>` element when there is one, else the body without navigation, scripts and styles)
 * and turn it into markdown with turndown.
 */
import type { JSDOM } from 'jsdom';
import { lazyModule } from '../../core/lazy-module.ts';

/** jsdom, loaded at the first page converted (importing it costs about 0.8 s of CPU at start). */
const jsdom = lazyModule<typeof import('jsdom')>('jsdom');
import type TurndownService from 'turndown';
/** turndown, loaded at the first page converted rather than at start. */
const turndownModule = lazyModule<typeof import('turndown')>('turndown');

const DROP = 'script, style, noscript, template, nav, header, footer, aside, iframe, svg, form, [role="navigation"], [aria-hidden="true"]';

let service: TurndownService | null = null;

function turndown(): TurndownService {
  if (service) return service;
  service = new (turndownModule())({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*' });
  // Keep the language of <pre><code class="language-x"> blocks.
  service.addRule('fencedWithLanguage', {
    filter: (node) => node.nodeName === 'PRE' && node.firstChild?.nodeName === 'CODE',
    replacement: (_content, node) => {
      const code = node.firstChild as { className?: string; textContent: string | null };
      const lang = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(code.className ?? '')?.[1] ?? '';
      const text = (code.textContent ?? '').replace(/\n$/, '');
      const fence = text.includes('```') ? '~~~' : '```';
      return `\n\n${fence}${lang}\n${text}\n${fence}\n\n`;
    },
  });
  return service;
}

/** The page's title (`<title>` or first `<h1>`) and its main content as markdown. */
export function htmlToMarkdown(html: string, url: string): { title: string; markdown: string } {
  const dom = new (jsdom().JSDOM)(html, { url });
  try {
    const doc = dom.window.document;
    const title = (doc.querySelector('h1')?.textContent ?? doc.title ?? '').replace(/\s+/g, ' ').trim();
    const root = doc.querySelector('main') ?? doc.querySelector('article') ?? doc.body;
    if (!root) return { title, markdown: '' };
    for (const el of [...root.querySelectorAll(DROP)]) el.remove();
    const markdown = turndown().turndown(root.innerHTML).replace(/\n{3,}/g, '\n\n').trim();
    return { title, markdown };
  } finally {
    dom.window.close();
  }
}
