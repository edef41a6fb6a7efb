/**
 * Where a linked page is looked for, and the document path it is stored under.
 */

/** File extensions that already name a readable text file (fetched as they are). */
const TEXT_EXT = /\.(md|mdx|markdown|txt|rst|py|js|mjs|cjs|ts|tsx|jsx|json|yaml|yml|toml|sh|rs|go|java|rb|php|c|h|cpp|cs|swift|kt)$/i;

/**
 * URLs to try for a page, best first. The llms.txt convention: a page offers a clean markdown
 * copy at its URL with `.md` appended, and a URL without a file name at `index.html.md`. A URL
 * that already names a text file (`.md`, `.txt`, `.py`...) is fetched as it is; otherwise the
 * markdown variant comes first and the page itself is the fallback.
 */
export function pageCandidates(pageUrl: string): string[] {
  const u = new URL(pageUrl);
  u.hash = '';
  if (TEXT_EXT.test(u.pathname)) return [u.href];
  const md = new URL(u.href);
  md.search = '';
  md.pathname = u.pathname.endsWith('/') ? `${u.pathname}index.html.md` : `${u.pathname}.md`;
  return md.href === u.href ? [u.href] : [md.href, u.href];
}

/**
 * The document path of a page: its URL path without the leading '/', prefixed by the host when
 * the page lives on another host than the llms.txt file (`raw.githubusercontent.com/...`). No
 * trailing '/', '.', '..' or empty segments; the root becomes `index`. A query string, when
 * present, is kept as a `_q_...` suffix of the last segment so that distinct pages stay distinct.
 */
export function pagePath(pageUrl: string, baseUrl: string): string {
  const u = new URL(pageUrl);
  const base = new URL(baseUrl);
  const segs = u.pathname
    .split('/')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    })
    .map((s) => s.replace(/[\\\0]/g, '_'))
    .filter((s) => s !== '' && s !== '.' && s !== '..');
  if (segs.length === 0) segs.push('index');
  if (u.search.length > 1) segs[segs.length - 1] += `_q_${u.search.slice(1).replace(/[^\w.=-]+/g, '_').slice(0, 60)}`;
  if (u.host !== base.host) segs.unshift(u.host.replace(/:/g, '_'));
  return segs.join('/');
}

/** Makes `path` unique among `taken` by appending -2, -3... before any extension. */
export function uniquePath(path: string, taken: Set<string>): string {
  let p = path;
  for (let n = 2; taken.has(p); n++) {
    const m = /^(.*?)(\.[A-Za-z0-9]+)?$/.exec(path)!;
    p = `${m[1]}-${n}${m[2] ?? ''}`;
  }
  taken.add(p);
  return p;
}

/** A short slug for a title, used to name parts of a full file that have no URL. */
export function slug(title: string): string {
  return (
    title
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'part'
  );
}

/** The code fence language of a source file linked from llms.txt, or null for a doc format. */
export function codeLanguage(pathname: string): string | null {
  const ext = /\.([a-z0-9]+)$/i.exec(pathname)?.[1]?.toLowerCase();
  const map: Record<string, string> = {
    py: 'python', js: 'javascript', mjs: 'javascript', cjs: 'javascript', ts: 'typescript', tsx: 'tsx', jsx: 'jsx',
    json: 'json', yaml: 'yaml', yml: 'yaml', toml: 'toml', sh: 'bash', rs: 'rust', go: 'go', java: 'java', rb: 'ruby',
    php: 'php', c: 'c', h: 'c', cpp: 'cpp', cs: 'csharp', swift: 'swift', kt: 'kotlin',
  };
  return ext && map[ext] ? map[ext] : null;
}
