/**
 * Confluence storage format (XHTML with `ac:` macros and `ri:` resource identifiers) → plain
 * HTML that turndown understands: code macros become `<pre><code class="language-x">`, panels
 * become blockquotes with a bold label, expand macros their body, page links `<a href>` to the
 * page's URL, task lists GFM task items; navigation macros (toc, children, ...) are dropped and
 * headings move down by `headingOffset` levels so they sit below the page's breadcrumb headings.
 *
 * The storage format is XML (CDATA in code bodies, self-closing `<ri:page/>`), so it is parsed as
 * XML with the namespaces declared and HTML named entities (&nbsp;) turned into numeric ones; a
 * body that is not well-formed is parsed as HTML instead, after its CDATA sections and
 * self-closing tags were made HTML-safe.
 */
import type { JSDOM } from 'jsdom';
import { lazyModule } from '../../core/lazy-module.ts';

/** jsdom, loaded at the first page converted (importing it costs about 0.8 s of CPU at start). */
const jsdom = lazyModule<typeof import('jsdom')>('jsdom');

/** What the converter needs to know about the page and its space. */
export interface StorageContext {
  /** Levels every heading of the body moves down (h1 → h(1+offset)), capped at h6. */
  headingOffset: number;
  /** The URL of a page of the site by title (and space key when it is another space). */
  pageUrl(title: string, spaceKey: string | null): string;
  /** The URL of an attachment of this page. */
  attachmentUrl(filename: string): string;
  /** The URL of this page (for in-page anchors). */
  selfUrl: string;
}

// jsdom's DOM types come from the DOM lib, which this project does not load: a minimal view.
interface XNode {
  nodeType: number;
  nodeName: string;
  nodeValue: string | null;
  textContent: string | null;
  childNodes: ArrayLike<XNode>;
  getAttribute?(name: string): string | null;
}

const NAMESPACES =
  'xmlns:ac="http://atlassian.com/content" xmlns:ri="http://atlassian.com/resource/identifier" xmlns:at="http://atlassian.com/template"';
const XML_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos']);

let shared: { window: JSDOM['window']; parser: InstanceType<JSDOM['window']['DOMParser']> } | null = null;
function dom(): NonNullable<typeof shared> {
  if (!shared) {
    const { window } = new (jsdom().JSDOM)('');
    shared = { window, parser: new window.DOMParser() };
  }
  return shared;
}

const entityCache = new Map<string, string | null>();
/** `&mdash;` → `&#8212;`; unknown names stay as escaped text. */
function numericEntities(xml: string): string {
  const names = new Set<string>();
  for (const m of xml.matchAll(/&([A-Za-z][A-Za-z0-9]{0,31});/g)) {
    if (!XML_ENTITIES.has(m[1]) && !entityCache.has(m[1])) names.add(m[1]);
  }
  if (names.size > 0) {
    const list = [...names];
    const doc = dom().parser.parseFromString(`<body>${list.map((n) => `<i>&${n};</i>`).join('')}</body>`, 'text/html');
    const items = doc.body.children;
    list.forEach((n, i) => {
      const text = items[i]?.textContent ?? '';
      // Every named entity is one or two code points; a longer text is a legacy prefix match
      // (`&notanentity;` read as `&not` + `anentity;`), i.e. not an entity.
      const points = [...text].length;
      entityCache.set(n, points >= 1 && points <= 2 ? text : null);
    });
  }
  return xml.replace(/&([A-Za-z][A-Za-z0-9]{0,31});/g, (all, name: string) => {
    if (XML_ENTITIES.has(name)) return all;
    const text = entityCache.get(name);
    if (text == null) return `&amp;${name};`;
    return [...text].map((c) => `&#${c.codePointAt(0)};`).join('');
  });
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
function escapeAttr(s: string): string {
  return escapeHtml(s).replace(/"/g, '&quot;');
}

/** Parses a storage-format body; the returned node's children are the body's top-level nodes. */
export function parseStorage(storage: string): XNode {
  const { parser } = dom();
  const xml = parser.parseFromString(`<cf-root ${NAMESPACES}>${numericEntities(storage)}</cf-root>`, 'application/xml');
  const root = xml.documentElement as unknown as XNode;
  if (root.nodeName === 'cf-root') return root;
  // Not well-formed: parse as HTML, with CDATA turned into text and <x:y/> into <x:y></x:y>.
  const html = storage
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, body: string) => escapeHtml(body))
    .replace(/<((?:ac|ri|at):[\w-]+)((?:\s+[^<>]*?)?)\s*\/>/gi, '<$1$2></$1>');
  const doc = parser.parseFromString(`<body>${html}</body>`, 'text/html');
  return doc.body as unknown as XNode;
}

const KEEP_TAGS = new Set([
  'p', 'br', 'hr', 'strong', 'b', 'em', 'i', 'u', 's', 'del', 'strike', 'sub', 'sup', 'code', 'pre', 'blockquote',
  'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'a', 'img', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'div', 'kbd',
]);
const VOID_TAGS = new Set(['br', 'hr', 'img']);
const TABLE_PARTS = new Set(['table', 'thead', 'tbody', 'tfoot', 'tr']);
const DROP_TAGS = new Set(['colgroup', 'col', 'script', 'style']);
const DROP_MACROS = new Set([
  'toc', 'toc-zone', 'children', 'pagetree', 'pagetreesearch', 'recently-updated', 'contentbylabel', 'livesearch',
  'attachments', 'anchor', 'space-details', 'create-from-template', 'excerpt-include', 'include', 'blog-posts',
  'popular-labels', 'related-labels', 'listlabels', 'viewfile', 'view-file', 'gallery', 'profile', 'contributors',
  'recently-updated-dashboard', 'spaces-list', 'index', 'navmap', 'roadmap', 'widget', 'multimedia', 'iframe',
]);
const PANEL_LABELS: Record<string, string> = {
  info: 'Info',
  note: 'Note',
  warning: 'Warning',
  tip: 'Tip',
  success: 'Success',
  error: 'Error',
};
/** Code macro language names that differ from the usual fence names. */
const CODE_LANGUAGES: Record<string, string> = {
  'c#': 'csharp',
  'c++': 'cpp',
  js: 'javascript',
  py: 'python',
  erl: 'erlang',
  yml: 'yaml',
  actionscript3: 'actionscript',
  jfx: 'javafx',
  vb: 'vbnet',
  shell: 'bash',
  none: '',
};

function name(n: XNode): string {
  return n.nodeName.toLowerCase();
}
function attr(n: XNode, a: string): string {
  return n.getAttribute?.(a) ?? '';
}
function children(n: XNode): XNode[] {
  return Array.from(n.childNodes);
}
function child(n: XNode, tag: string): XNode | undefined {
  return children(n).find((c) => c.nodeType === 1 && name(c) === tag);
}
function text(n: XNode | undefined): string {
  return n?.textContent ?? '';
}

/** Converts a parsed storage body (see parseStorage) to HTML. */
export function storageToHtml(root: XNode, ctx: StorageContext): string {
  return new Emitter(ctx).nodes(children(root));
}

class Emitter {
  constructor(private readonly ctx: StorageContext) {}

  nodes(list: XNode[], inTablePart = false): string {
    let out = '';
    for (const n of list) {
      if (inTablePart && n.nodeType === 3 && (n.nodeValue ?? '').trim() === '') continue;
      out += this.node(n);
    }
    return out;
  }

  node(n: XNode): string {
    if (n.nodeType === 3 || n.nodeType === 4) return escapeHtml(n.nodeValue ?? '');
    if (n.nodeType !== 1) return '';
    const tag = name(n);
    if (tag.startsWith('ac:') || tag.startsWith('ri:') || tag.startsWith('at:')) return this.confluence(n, tag);
    const h = /^h([1-6])$/.exec(tag);
    if (h) {
      const level = Math.min(6, Number(h[1]) + this.ctx.headingOffset);
      return `<h${level}>${this.nodes(children(n))}</h${level}>`;
    }
    if (DROP_TAGS.has(tag)) return '';
    if (tag === 'time') return escapeHtml(attr(n, 'datetime') || text(n));
    if (tag === 'table') return this.table(n);
    if (!KEEP_TAGS.has(tag)) return this.nodes(children(n));
    let attrs = '';
    if (tag === 'a' && attr(n, 'href')) attrs = ` href="${escapeAttr(attr(n, 'href'))}"`;
    if (tag === 'img') attrs = ` src="${escapeAttr(attr(n, 'src'))}" alt="${escapeAttr(attr(n, 'alt'))}"`;
    if (tag === 'ol' && /^\d+$/.test(attr(n, 'start'))) attrs = ` start="${attr(n, 'start')}"`;
    if (VOID_TAGS.has(tag)) return `<${tag}${attrs}>`;
    return `<${tag}${attrs}>${this.nodes(children(n), TABLE_PARTS.has(tag))}</${tag}>`;
  }

  /** GFM tables need a header row: a table whose first row has no th gets it promoted. */
  private table(n: XNode): string {
    const inner = this.nodes(children(n), true);
    const firstRow = /<tr>([\s\S]*?)<\/tr>/.exec(inner);
    if (!firstRow || /<th>/.test(firstRow[1])) return `<table>${inner}</table>`;
    const promoted = firstRow[0].replace(/<td>/g, '<th>').replace(/<\/td>/g, '</th>');
    return `<table>${inner.replace(firstRow[0], promoted)}</table>`;
  }

  private confluence(n: XNode, tag: string): string {
    switch (tag) {
      case 'ac:structured-macro':
      case 'ac:macro':
        return this.macro(n);
      case 'ac:link':
        return this.link(n);
      case 'ac:image':
        return this.image(n);
      case 'ac:task-list':
        return `<ul>${children(n)
          .filter((c) => c.nodeType === 1 && name(c) === 'ac:task')
          .map((t) => this.task(t))
          .join('')}</ul>`;
      case 'ac:emoticon': {
        const fallback = attr(n, 'ac:emoji-fallback');
        return fallback && !fallback.startsWith(':') ? escapeHtml(fallback) : '';
      }
      case 'ac:adf-extension':
        return this.adf(n);
      case 'ac:rich-text-body':
      case 'ac:layout':
      case 'ac:layout-section':
      case 'ac:layout-cell':
      case 'ac:inline-comment-marker':
      case 'ac:adf-content':
        return this.nodes(children(n));
      case 'ac:plain-text-body':
        return `<pre><code>${escapeHtml(text(n))}</code></pre>`;
      default:
        return ''; // parameters, placeholders, resource identifiers on their own, template variables
    }
  }

  private params(macro: XNode): Map<string, string> {
    const out = new Map<string, string>();
    for (const c of children(macro)) {
      if (c.nodeType === 1 && name(c) === 'ac:parameter') out.set(attr(c, 'ac:name').toLowerCase(), text(c).trim());
    }
    return out;
  }

  private macro(n: XNode): string {
    const macro = attr(n, 'ac:name').toLowerCase();
    const params = this.params(n);
    const rich = child(n, 'ac:rich-text-body');
    const plain = child(n, 'ac:plain-text-body');
    const body = rich ? this.nodes(children(rich)) : '';
    const title = params.get('title') ?? '';
    const titleLine = title ? `<p><strong>${escapeHtml(title)}</strong></p>` : '';

    if (macro === 'code' || macro === 'noformat' || macro === 'code-block') {
      const raw = (params.get('language') ?? params.get('lang') ?? '').toLowerCase();
      const lang = raw in CODE_LANGUAGES ? CODE_LANGUAGES[raw] : raw.replace(/[^a-z0-9+#._-]/g, '');
      const cls = lang ? ` class="language-${escapeAttr(lang)}"` : '';
      return `${titleLine}<pre><code${cls}>${escapeHtml(text(plain ?? rich))}</code></pre>`;
    }
    if (macro in PANEL_LABELS) return this.panel(PANEL_LABELS[macro], title, body);
    if (macro === 'panel') return title ? `<blockquote><p><strong>${escapeHtml(title)}</strong></p>${body}</blockquote>` : this.panel('', '', body);
    if (macro === 'expand') return `${titleLine}${body}`;
    if (macro === 'status') return title ? `<strong>${escapeHtml(title)}</strong>` : '';
    if (macro === 'jira') return escapeHtml(params.get('key') ?? '');
    if (DROP_MACROS.has(macro)) return '';
    if (rich) return body;
    if (plain) return `<pre><code>${escapeHtml(text(plain))}</code></pre>`;
    return '';
  }

  /** `> **Warning:** Title` above the body, or `> **Note:** first paragraph...` without a title. */
  private panel(label: string, title: string, body: string): string {
    if (!label) return `<blockquote>${body}</blockquote>`;
    const head = `<strong>${escapeHtml(label)}:</strong>`;
    if (!title && body.startsWith('<p>')) return `<blockquote><p>${head} ${body.slice(3)}</blockquote>`;
    return `<blockquote><p>${head}${title ? ` ${escapeHtml(title)}` : ''}</p>${body}</blockquote>`;
  }

  /** The cloud editor's panels; other ADF extensions show their fallback. */
  private adf(n: XNode): string {
    const node = child(n, 'ac:adf-node');
    if (node && attr(node, 'type') === 'panel') {
      const kind = children(node).find((c) => c.nodeType === 1 && name(c) === 'ac:adf-attribute' && attr(c, 'key') === 'panel-type');
      const label = PANEL_LABELS[text(kind).trim().toLowerCase()] ?? 'Note';
      const content = child(node, 'ac:adf-content');
      return this.panel(label, '', content ? this.nodes(children(content)) : '');
    }
    const fallback = child(n, 'ac:adf-fallback');
    return fallback ? this.nodes(children(fallback)) : '';
  }

  private link(n: XNode): string {
    const anchor = attr(n, 'ac:anchor');
    const plainBody = child(n, 'ac:plain-text-link-body');
    const richBody = child(n, 'ac:link-body');
    const given = plainBody ? escapeHtml(text(plainBody)) : richBody ? this.nodes(children(richBody)) : '';
    const hash = anchor ? `#${encodeURIComponent(anchor)}` : '';
    const page = child(n, 'ri:page') ?? child(n, 'ri:blog-post');
    if (page) {
      const title = attr(page, 'ri:content-title');
      const space = attr(page, 'ri:space-key') || null;
      if (!title) return given;
      return `<a href="${escapeAttr(this.ctx.pageUrl(title, space) + hash)}">${given || escapeHtml(title)}</a>`;
    }
    const attachment = child(n, 'ri:attachment');
    if (attachment) {
      const file = attr(attachment, 'ri:filename');
      return file ? `<a href="${escapeAttr(this.ctx.attachmentUrl(file))}">${given || escapeHtml(file)}</a>` : given;
    }
    const url = child(n, 'ri:url');
    if (url && /^https?:\/\//i.test(attr(url, 'ri:value'))) {
      return `<a href="${escapeAttr(attr(url, 'ri:value'))}">${given || escapeHtml(attr(url, 'ri:value'))}</a>`;
    }
    if (child(n, 'ri:user') || child(n, 'ri:space')) return given;
    if (anchor) return `<a href="${escapeAttr(this.ctx.selfUrl + hash)}">${given || escapeHtml(anchor)}</a>`;
    return given;
  }

  private image(n: XNode): string {
    const alt = attr(n, 'ac:alt') || attr(n, 'ac:title');
    const attachment = child(n, 'ri:attachment');
    if (attachment) {
      const file = attr(attachment, 'ri:filename');
      if (!file) return '';
      return `<img src="${escapeAttr(this.ctx.attachmentUrl(file))}" alt="${escapeAttr(alt || file)}">`;
    }
    const url = child(n, 'ri:url');
    const src = url ? attr(url, 'ri:value') : '';
    return /^https?:\/\//i.test(src) ? `<img src="${escapeAttr(src)}" alt="${escapeAttr(alt)}">` : '';
  }

  private task(t: XNode): string {
    const done = text(child(t, 'ac:task-status')).trim().toLowerCase() === 'complete';
    const body = child(t, 'ac:task-body');
    return `<li><input type="checkbox"${done ? ' checked' : ''}>${body ? this.nodes(children(body)) : ''}</li>`;
  }
}
