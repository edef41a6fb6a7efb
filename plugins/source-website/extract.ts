/**
 * Reads one HTML page with jsdom (scripts never run, nothing is loaded): its links, canonical
 * URL and robots meta, and its main content without the site's chrome (navigation, sidebars,
 * headers, footers, tables of contents, cookie banners, "edit this page" links, scripts and
 * styles), converted to markdown.
 */
import type { JSDOM } from 'jsdom';
import { lazyModule } from '../../core/lazy-module.ts';

/** jsdom, loaded at the first page converted (importing it costs about 0.8 s of CPU at start). */
const jsdom = lazyModule<typeof import('jsdom')>('jsdom');
import { ANCHOR_ATTR, htmlToMarkdown } from './to-markdown.ts';
import { codeLanguage } from './code-language.ts';

export interface ExtractedPage {
  /** The page title: the first <h1> of the content, else <title>. */
  title: string;
  markdown: string;
  /** Absolute http(s) URLs the page links to (rel=nofollow links left out), without fragments. */
  links: string[];
  /** The <link rel=canonical> URL, absolute, or null. */
  canonical: string | null;
  /** `<meta name=robots>` says noindex / nofollow. */
  noindex: boolean;
  nofollow: boolean;
  /**
   * The site's name for itself: `og:site_name`, else the site part of `<title>` (the last part
   * after a " | ", " – ", " — " or " · ", or the whole title); and its summary (`<meta
   * name=description>` or `og:description`). Absent for pages that are not HTML.
   */
  site?: { name?: string; description?: string };
}

const MAIN_SELECTORS = [
  '[role="main"]',
  'main',
  'article',
  '.theme-doc-markdown',
  '.markdown-body',
  '.markdown',
  '.md-content',
  '.vp-doc',
  '.rst-content',
  '.document',
  '.docs-content',
  '.doc-content',
  '.content',
  '#content',
  '#main-content',
  '.main-content',
  '.prose',
];

/** Chrome removed wherever it is. */
const ALWAYS_DROP = [
  'script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'canvas', 'svg', 'link', 'meta',
  'button', 'input', 'select', 'textarea', 'form', 'dialog',
  'nav', 'aside', 'footer',
  '[role="navigation"]', '[role="contentinfo"]', '[role="complementary"]', '[role="search"]', '[role="banner"]',
  '[hidden]',
  '.sidebar', '.side-bar', '.sidenav', '.toc', '.table-of-contents', '#toc', '#table-of-contents', '.on-this-page',
  '.breadcrumb', '.breadcrumbs', '.pagination', '.pagination-nav', '.pager', '.page-nav', '.prev-next',
  '.edit-link', '.edit-this-page', '.theme-edit-this-page', '.skip-link', '.skip-to-content',
  '.linenos', '.lineno', '.line-numbers-wrapper', '.line-numbers-rows',
];

const BANNER_WORDS = /cookie|consent|gdpr|privacy-banner/i;
const EDIT_LINK = /^\s*(edit (this|the) page|edit on github|edit this doc|improve this (page|doc)|suggest (changes|an edit)|view (page )?source)\b/i;
const PERMALINK_TEXT = /^[\s#¶§🔗\u200b\u00a0]*$/u;
const PERMALINK_CLASS = /anchor|headerlink|hash-link|permalink|direct-link/i;

function textLengthOf(el: Element): number {
  return (el.textContent ?? '').replace(/\s+/g, ' ').trim().length;
}

function removeAll(root: ParentNode, selector: string): void {
  for (const el of [...root.querySelectorAll(selector)]) el.remove();
}

function stripChrome(doc: Document): void {
  removeAll(doc, ALWAYS_DROP.join(','));
  // Site headers: any <header> not inside the content (an <article>'s own header holds its <h1>).
  for (const h of [...doc.querySelectorAll('header')]) if (!h.closest('main, article, [role="main"]')) h.remove();
  for (const el of [...doc.querySelectorAll('[aria-hidden="true"]')]) if (!el.querySelector('pre, h1, h2, h3, table')) el.remove();
  // Cookie banners and consent dialogs: small blocks named for it.
  for (const el of [...doc.querySelectorAll('[id], [class], [aria-label]')]) {
    if (!el.isConnected) continue;
    const names = `${el.id} ${el.getAttribute('class') ?? ''} ${el.getAttribute('aria-label') ?? ''}`;
    if (BANNER_WORDS.test(names) && textLengthOf(el) < 1500 && !el.querySelector('h1, h2, pre, main, article')) el.remove();
  }
  for (const a of [...doc.querySelectorAll('a')]) if (EDIT_LINK.test(a.textContent ?? '')) a.remove();
}

/** The element holding the page's content. */
function findMain(doc: Document): Element {
  const body = doc.body ?? doc.documentElement;
  // The tree no longer changes here: each element's text length is computed once.
  const lengths = new Map<Element, number>();
  const textLength = (el: Element): number => {
    let n = lengths.get(el);
    if (n === undefined) lengths.set(el, (n = textLengthOf(el)));
    return n;
  };
  const candidates = [...doc.querySelectorAll(MAIN_SELECTORS.join(','))].filter((el) => textLength(el) > 0);
  if (candidates.length > 0) {
    let best = candidates.reduce((a, b) => (textLength(b) > textLength(a) ? b : a));
    // Prefer a tighter candidate inside it that still holds most of the text.
    for (;;) {
      const total = textLength(best);
      const inner = candidates.filter((c) => c !== best && best.contains(c) && textLength(c) >= total * 0.7);
      if (inner.length === 0) break;
      best = inner.reduce((a, b) => (textLength(b) > textLength(a) ? b : a));
    }
    return best;
  }
  // No landmark: the block whose own paragraphs, lists, code and headings hold the most text.
  let dense: Element = body;
  let bestScore = 0;
  for (const el of body.querySelectorAll('div, section, td')) {
    let score = 0;
    for (const child of el.children) if (/^(P|PRE|UL|OL|DL|TABLE|BLOCKQUOTE|H[1-6])$/.test(child.tagName)) score += textLength(child);
    if (score > bestScore) {
      bestScore = score;
      dense = el;
    }
  }
  return bestScore >= textLength(body) * 0.5 ? dense : body;
}

function headingAnchor(h: Element): string | null {
  if (h.id) return h.id;
  const named = h.querySelector('a[id], a[name]');
  if (named) return named.id || named.getAttribute('name');
  const self = h.querySelector('a[href^="#"]');
  if (self && (PERMALINK_TEXT.test(self.textContent ?? '') || PERMALINK_CLASS.test(self.getAttribute('class') ?? ''))) {
    return decodeURIComponent(self.getAttribute('href')!.slice(1)) || null;
  }
  const parent = h.parentElement;
  if (parent && parent.id && parent.firstElementChild === h && /^(SECTION|DIV)$/.test(parent.tagName)) return parent.id;
  return null;
}

function prepareContent(main: Element, pageUrl: string): void {
  const doc = main.ownerDocument;
  for (const h of main.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
    const anchor = headingAnchor(h);
    if (anchor) h.setAttribute(ANCHOR_ATTR, anchor);
    for (const a of [...h.querySelectorAll('a[href^="#"]')]) {
      if (PERMALINK_TEXT.test(a.textContent ?? '')) a.remove();
      else a.replaceWith(doc.createTextNode(a.textContent ?? ''));
    }
  }
  for (const pre of main.querySelectorAll('pre')) {
    // Labels and copy buttons beside a code block ("ts", "Copy") are not content.
    const lang = codeLanguage(pre);
    for (const sib of [...(pre.parentElement?.children ?? [])]) {
      if (sib === pre || sib.querySelector('pre')) continue;
      const t = (sib.textContent ?? '').trim().toLowerCase();
      if ((lang && t === lang) || /^(copy|copied|copy code|copied!)$/.test(t)) sib.remove();
    }
  }
  for (const a of main.querySelectorAll('a[href]')) {
    const href = a.getAttribute('href')!;
    if (href.startsWith('#')) continue;
    try {
      a.setAttribute('href', new URL(href, doc.baseURI || pageUrl).href);
    } catch {
      a.removeAttribute('href');
    }
  }
  for (const img of [...main.querySelectorAll('img')]) {
    const src = img.getAttribute('src') ?? '';
    if (!src || src.startsWith('data:')) img.remove();
    else img.setAttribute('src', new URL(src, doc.baseURI || pageUrl).href);
  }
}

function siteOf(doc: Document): ExtractedPage['site'] {
  const meta = (sel: string) => (doc.querySelector(sel)?.getAttribute('content') ?? '').replace(/\s+/g, ' ').trim();
  const title = (doc.title ?? '').replace(/\s+/g, ' ').trim();
  const name = meta('meta[property="og:site_name" i]') || title.split(/\s+[|–—·]\s+/).pop()!.trim();
  const description = meta('meta[name="description" i]') || meta('meta[property="og:description" i]');
  return { ...(name ? { name } : {}), ...(description ? { description } : {}) };
}

function titleOf(doc: Document, main: Element): string {
  const h1 = main.querySelector('h1') ?? doc.querySelector('h1');
  const fromH1 = (h1?.textContent ?? '').replace(/\s+/g, ' ').replace(/[#¶§]\s*$/u, '').trim();
  if (fromH1) return fromH1;
  return (doc.title ?? '').split(/\s+[|–—·]\s+/)[0].trim();
}

/** Extracts one HTML page fetched from `pageUrl`. */
export function extractPage(html: string, pageUrl: string): ExtractedPage {
  const dom = new (jsdom().JSDOM)(html, { url: pageUrl });
  try {
    const doc = dom.window.document;
    const robots = [...doc.querySelectorAll('meta[name="robots" i]')].map((m) => (m.getAttribute('content') ?? '').toLowerCase()).join(',');
    const canonicalHref = doc.querySelector('link[rel~="canonical" i][href]')?.getAttribute('href') ?? null;
    let canonical: string | null = null;
    if (canonicalHref) {
      try {
        canonical = new URL(canonicalHref, doc.baseURI).href;
      } catch {
        canonical = null;
      }
    }
    const site = siteOf(doc);
    const links: string[] = [];
    for (const a of doc.querySelectorAll('a[href]')) {
      if (/\bnofollow\b/i.test(a.getAttribute('rel') ?? '')) continue;
      try {
        const u = new URL(a.getAttribute('href')!, doc.baseURI);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
        u.hash = '';
        links.push(u.href);
      } catch {
        // an unusable href is no link
      }
    }
    stripChrome(doc);
    const main = findMain(doc);
    prepareContent(main, pageUrl);
    return {
      title: titleOf(doc, main),
      markdown: htmlToMarkdown(main),
      links,
      canonical,
      noindex: /\b(noindex|none)\b/.test(robots),
      nofollow: /\b(nofollow|none)\b/.test(robots),
      site,
    };
  } finally {
    dom.window.close();
  }
}
