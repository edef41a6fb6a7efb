/**
 * "Full" llms files hold many documents in one file, and are split back into their pages:
 *
 * - context files (`llms-ctx.txt`, `llms-ctx-full.txt`, made by llms_txt2ctx): an XML-ish
 *   `<project title=".." summary="..">` holding section tags (`<docs>`, `<api>`, `<optional>`...)
 *   of `<doc title=".." desc="..">...</doc>` wrappers. The page URLs are not in the wrappers;
 *   some files list them before `<project>` as Python dict lines
 *   `{'title': '..', 'url': '..', 'desc': '..'}`, which we use when present.
 * - `llms-full.txt`: the pages concatenated, each starting with an H1 (outside code fences);
 *   a `Source: <url>` (or `URL: <url>`) line right below the H1, as several generators write,
 *   gives the page URL.
 */

export interface SplitPart {
  title: string;
  /** The page URL when the file says it, else ''. */
  url: string;
  description: string;
  /** The context file's section tag (docs, api, examples, optional...) or ''. */
  section: string;
  content: string;
}

export type FullKind = 'ctx' | 'full';

const DOC_OPEN = /<doc(\s[^>]*)?>/g;
const ATTR = /([A-Za-z_:][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/** Undoes the entity escaping of attribute values (&quot; &#39; &amp; &lt; &gt; &#NN;). */
export function unescapeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|quot|apos|amp|lt|gt);/gi, (m, e: string) => {
    const k = e.toLowerCase();
    if (k === 'quot') return '"';
    if (k === 'apos') return "'";
    if (k === 'amp') return '&';
    if (k === 'lt') return '<';
    if (k === 'gt') return '>';
    const n = k.startsWith('#x') ? parseInt(k.slice(2), 16) : parseInt(k.slice(1), 10);
    return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : m;
  });
}

function attributes(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of raw.matchAll(ATTR)) out[m[1].toLowerCase()] = unescapeEntities(m[2] ?? m[3] ?? '');
  return out;
}

/** Lines before <project> like `{'title': 'X', 'url': 'https://...', 'desc': '...'}`: title -> url. */
function preludeUrls(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const end = text.search(/<project[\s>]/);
  const head = end >= 0 ? text.slice(0, end) : '';
  for (const m of head.matchAll(/\{\s*['"]title['"]\s*:\s*(['"])(.*?)\1\s*,\s*['"]url['"]\s*:\s*(['"])(.*?)\3/g)) {
    if (!out.has(m[2])) out.set(m[2], m[4]);
  }
  return out;
}

/**
 * Which kind of full file this is, or null for an ordinary llms.txt index: `<doc title=..>`
 * wrappers make a context file; two H1s or more (outside code) a full file, since an index
 * has exactly one H1.
 */
export function detectFullKind(text: string): FullKind | null {
  if (/<doc\s[^>]*title\s*=/.test(text) && /<\/doc>/.test(text)) return 'ctx';
  return h1Lines(text).length >= 2 ? 'full' : null;
}

/** Splits a context file into its `<doc>` parts; text before the first doc is the project part. */
export function splitContextFile(text: string): { project: { title: string; summary: string; content: string } | null; parts: SplitPart[] } {
  const urls = preludeUrls(text);
  const parts: SplitPart[] = [];
  const projectOpen = /<project(\s[^>]*)?>/.exec(text);
  let project: { title: string; summary: string; content: string } | null = null;
  // Sequential: a doc body may itself mention "<doc ...>"; only the text after a </doc> is searched.
  const opens: RegExpExecArray[] = [];
  for (let from = 0; ; ) {
    DOC_OPEN.lastIndex = from;
    const m = DOC_OPEN.exec(text);
    if (!m) break;
    opens.push(m);
    const close = text.indexOf('</doc>', m.index + m[0].length);
    if (close < 0) break;
    from = close + 6;
  }
  if (projectOpen) {
    const attrs = attributes(projectOpen[1] ?? '');
    const start = projectOpen.index + projectOpen[0].length;
    const end = opens.length > 0 ? opens[0].index : text.length;
    const content = stripTags(text.slice(start, end)).trim();
    project = { title: attrs.title ?? '', summary: attrs.summary ?? '', content };
  }
  for (const open of opens) {
    const attrs = attributes(open[1] ?? '');
    const start = open.index + open[0].length;
    const close = text.indexOf('</doc>', start);
    const end = close >= 0 ? close : text.length;
    const title = attrs.title ?? '';
    parts.push({
      title,
      url: attrs.url ?? attrs.href ?? urls.get(title) ?? '',
      description: attrs.desc ?? attrs.description ?? '',
      section: sectionTagBefore(text, open.index),
      content: text.slice(start, end).replace(/^\s*\n/, '').trimEnd(),
    });
  }
  return { project, parts };
}

/** Removes the wrapper tags themselves (docs, api, optional...) from text between docs. */
function stripTags(s: string): string {
  return s.replace(/<\/?[a-z][\w-]*(\s[^>]*)?>/gi, '');
}

/** The innermost open section tag (not doc/project) before `pos`. */
function sectionTagBefore(text: string, pos: number): string {
  const stack: string[] = [];
  const re = /<(\/?)([a-z][\w-]*)(\s[^>]*)?>/gi;
  // Only tags outside <doc> bodies matter: walk from the project start, skipping doc bodies.
  let i = 0;
  while (i < pos) {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m || m.index >= pos) break;
    const name = m[2].toLowerCase();
    if (name === 'doc' && m[1] === '') {
      const close = text.indexOf('</doc>', m.index);
      i = close >= 0 ? close + 6 : pos;
      continue;
    }
    if (name !== 'project' && name !== 'doc') {
      if (m[1] === '') stack.push(name);
      else if (stack[stack.length - 1] === name) stack.pop();
    }
    i = m.index + m[0].length;
  }
  return stack[stack.length - 1] ?? '';
}

/** Line indexes of the H1 headings outside fenced code. */
function h1Lines(text: string): number[] {
  const lines = text.split('\n');
  const out: number[] = [];
  let fence: string | null = null;
  lines.forEach((line, i) => {
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1][0];
      else if (f[1][0] === fence) fence = null;
      return;
    }
    if (fence === null && /^#\s+\S/.test(line)) out.push(i);
  });
  return out;
}

/** Splits an llms-full.txt at its H1s; text before the first H1 is dropped when blank. */
export function splitFullFile(text: string): SplitPart[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const starts = h1Lines(lines.join('\n'));
  const parts: SplitPart[] = [];
  if (starts.length > 0 && starts[0] > 0) {
    const head = lines.slice(0, starts[0]).join('\n').trim();
    if (head) parts.push({ title: '', url: '', description: '', section: '', content: head });
  }
  starts.forEach((start, k) => {
    const end = k + 1 < starts.length ? starts[k + 1] : lines.length;
    const body = lines.slice(start, end);
    const title = body[0].replace(/^#\s+/, '').replace(/\s+#*\s*$/, '').trim();
    let url = '';
    for (let j = 1; j < Math.min(body.length, 4); j++) {
      const m = /^\s*(?:source|url)\s*:\s*(https?:\/\/\S+)\s*$/i.exec(body[j]);
      if (m) {
        url = m[1];
        break;
      }
    }
    parts.push({ title, url, description: '', section: '', content: body.join('\n').trimEnd() });
  });
  return parts;
}
