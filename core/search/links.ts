/**
 * The links between the sections of one library's documentation: a guide that says "filter with
 * [where](/functions/collections/where/)" or "see [Decorators](./Decorators.md#decoraterequest)"
 * points at the reference section holding the details. Links are read from the markdown of the
 * sections' prose (info snippets) and resolved to sections of the same library: relative paths
 * (against the file, then against the page's URL), site paths (`/guide/reporters`: a file whose
 * path without extension ends with it, with or without index / _index / README), and #anchors
 * (the section of the target file whose anchor or heading slug matches; without one, the target
 * page's first section). External links, images, links of a page to itself and the links of a
 * list of links (a section whose words are mostly link text: a table of contents, an index page)
 * are left out.
 */

/** What link resolution needs of a snippet. */
export interface LinkSource {
  type: 'code' | 'info';
  content: string;
  breadcrumb: readonly string[];
  sourcePath: string;
  anchor?: string;
}

export interface SectionLinks {
  /** For each section, the distinct sections its links resolve to (none of its own file). */
  targets: Int32Array[];
  /** Counts for reports: links read (not external, not images), to the same file, resolved to another file, to a section by anchor. */
  stats: { links: number; self: number; toFile: number; toAnchor: number; listSections: number };
}

/** A section whose link text is more than this share of its prose words is a list of links. */
export const LINK_LIST_SHARE = 0.5;

export const INLINE_LINK = /(!?)\[((?:[^[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
const DOC_EXT = /\.(md|mdx|markdown|html?|rst|txt)$/i;
const INDEX_NAMES = /\/(index|_index|readme)$/i;

/** A loose form of an anchor or heading: lower case letters and digits only. */
function looseAnchor(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

/** A posix path with `.` and `..` segments resolved (no leading slash). */
function normalize(parts: string[]): string {
  const out: string[] = [];
  for (const p of parts) {
    if (p === '' || p === '.') continue;
    if (p === '..') out.pop();
    else out.push(p);
  }
  return out.join('/');
}

/** A path's form for lookup: lower case, no document extension, no trailing index file. */
function stemOf(path: string): string {
  return path.toLowerCase().replace(DOC_EXT, '').replace(INDEX_NAMES, '');
}

/**
 * The links of each section of `sections` (groups of `snippets` indexes, as groupSections gives),
 * resolved to other sections of the same snippets.
 */
export function resolveSectionLinks(sections: readonly number[][], snippets: readonly LinkSource[], unresolved?: string[]): SectionLinks {
  const stats = { links: 0, self: 0, toFile: 0, toAnchor: 0, listSections: 0 };
  // Files: their sections in order, looked up (once a link needs it) by full path, by stem, and
  // by every segment suffix of the stem (for site paths).
  const fileSections = new Map<string, number[]>();
  sections.forEach((members, k) => {
    const path = snippets[members[0]].sourcePath;
    let list = fileSections.get(path);
    if (!list) fileSections.set(path, (list = []));
    list.push(k);
  });
  let tables: { byPath: Map<string, string>; byStem: Map<string, string[]>; bySuffix: Map<string, string[]> } | undefined;
  const lookup = () => {
    if (tables) return tables;
    tables = { byPath: new Map(), byStem: new Map(), bySuffix: new Map() };
    const add = (map: Map<string, string[]>, key: string, file: string) => {
      const list = map.get(key);
      if (!list) map.set(key, [file]);
      else if (!list.includes(file)) list.push(file);
    };
    for (const file of fileSections.keys()) {
      tables.byPath.set(file.toLowerCase(), file);
      const stem = stemOf(file);
      add(tables.byStem, stem, file);
      const segs = stem.split('/');
      for (let i = 0; i < segs.length; i++) add(tables.bySuffix, segs.slice(i).join('/'), file);
    }
    return tables;
  };
  // Anchors of each file's sections: exact and loose.
  const anchorCache = new Map<string, Map<string, number>>();
  const anchorsOf = (file: string): Map<string, number> => {
    let map = anchorCache.get(file);
    if (map) return map;
    map = new Map();
    for (const k of fileSections.get(file)!) {
      const first = snippets[sections[k][0]];
      const heading = first.breadcrumb[first.breadcrumb.length - 1] ?? '';
      for (const key of [first.anchor ? looseAnchor(first.anchor) : '', looseAnchor(heading)]) if (key && !map.has(key)) map.set(key, k);
    }
    anchorCache.set(file, map);
    return map;
  };
  /** The candidate closest to `from` (longest shared directory prefix, then shortest path). */
  const closest = (files: readonly string[] | undefined, from: string): string | undefined => {
    if (!files || files.length === 0) return undefined;
    if (files.length === 1) return files[0];
    const shared = (f: string) => {
      const a = f.split('/');
      const b = from.split('/');
      let n = 0;
      while (n < a.length - 1 && n < b.length - 1 && a[n] === b[n]) n++;
      return n;
    };
    return [...files].sort((x, y) => shared(y) - shared(x) || x.length - y.length || (x < y ? -1 : 1))[0];
  };
  const findFile = (from: string, url: string): string | undefined => {
    const { byPath, byStem, bySuffix } = lookup();
    const dir = from.split('/').slice(0, -1);
    const path = url.replace(/\/+$/, '');
    if (url.startsWith('/')) {
      // A site path: the file whose stem ends with it; else without its first segment (a base
      // path or language prefix the files do not have).
      const key = stemOf(normalize(path.split('/')));
      if (!key) return undefined;
      const hit = closest(bySuffix.get(key), from);
      if (hit) return hit;
      const rest = key.split('/').slice(1).join('/');
      return rest.includes('/') ? closest(bySuffix.get(rest), from) : undefined;
    }
    // Relative: against the file's folder, then against the page's URL (a page served as a
    // folder, /a/b/, resolves ../c/ to /a/c/).
    const candidates = [normalize([...dir, ...path.split('/')]), normalize([...stemOf(from).split('/'), ...path.split('/')])];
    for (const c of candidates) {
      const exact = byPath.get(c.toLowerCase());
      if (exact) return exact;
      const stem = closest(byStem.get(stemOf(c)), from);
      if (stem) return stem;
    }
    // Neither: a path from the site's root written without its leading slash.
    const key = stemOf(normalize(path.split('/')));
    return key.includes('/') ? closest(bySuffix.get(key), from) : undefined;
  };

  const targets: Int32Array[] = [];
  sections.forEach((members, k) => {
    const from = snippets[members[0]].sourcePath;
    const found = new Set<number>();
    for (const i of members) {
      const s = snippets[i];
      if (s.type !== 'info' || !s.content.includes('](')) continue;
      for (const m of s.content.matchAll(INLINE_LINK)) {
        const url = m[3];
        if (m[1] || !url || /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//')) continue; // an image, an external link
        stats.links++;
        const hash = url.indexOf('#');
        const pathPart = (hash >= 0 ? url.slice(0, hash) : url).replace(/\?.*$/, '');
        const anchor = hash >= 0 ? decodeURIComponentSafe(url.slice(hash + 1)) : '';
        const file = pathPart ? findFile(from, decodeURIComponentSafe(pathPart)) : from;
        if (file === from) {
          stats.self++;
          continue;
        }
        if (!file) {
          unresolved?.push(`${from} -> ${url}`);
          continue;
        }
        stats.toFile++;
        let target = fileSections.get(file)![0];
        if (anchor) {
          const anchors = anchorsOf(file);
          const hit = anchors.get(looseAnchor(anchor)) ?? anchors.get(looseAnchor(anchor.replace(/-\d+$/, '')));
          if (hit !== undefined) {
            target = hit;
            stats.toAnchor++;
          }
        }
        found.add(target);
      }
    }
    if (found.size > 0 && isLinkList(members.map((i) => snippets[i]))) {
      stats.listSections++;
      found.clear();
    }
    targets.push(found.size > 0 ? Int32Array.from(found).sort() : NONE);
  });
  return { targets, stats };
}

const NONE = new Int32Array(0);

/** Whether the link text of these snippets' prose is more than LINK_LIST_SHARE of its words. */
export function isLinkList(members: readonly LinkSource[]): boolean {
  let words = 0;
  let linkWords = 0;
  for (const s of members) {
    if (s.type !== 'info') continue;
    words += wordCount(s.content.replace(INLINE_LINK, (_m, _img, text: string) => text));
    for (const m of s.content.matchAll(INLINE_LINK)) if (!m[1]) linkWords += wordCount(m[2]);
  }
  return words > 0 && linkWords > LINK_LIST_SHARE * words;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function wordCount(text: string): number {
  let n = 0;
  for (const _ of text.matchAll(/[\p{L}\p{N}_]+/gu)) n++;
  return n;
}

/**
 * For each section, how many other files link to it (each file once, whatever its number of
 * links): how often the library's own pages send readers there.
 */
export function inlinkCounts(sections: readonly number[][], snippets: readonly LinkSource[], targets: readonly Int32Array[]): Int32Array {
  const from: Array<Set<string> | undefined> = new Array(sections.length);
  targets.forEach((list, src) => {
    if (list.length === 0) return;
    const path = snippets[sections[src][0]].sourcePath;
    for (const t of list) (from[t] ??= new Set()).add(path);
  });
  return Int32Array.from(from, (set) => set?.size ?? 0);
}
