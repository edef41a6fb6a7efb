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

const INLINE_LINK = /(!?)\[((?:[^[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
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
export function resolveSectionLinks(sections: readonly number[][], snippets: readonly LinkSource[], unresolved?: string[], samePage = false): SectionLinks {
  const stats = { links: 0, self: 0, toFile: 0, toAnchor: 0, listSections: 0 };
  // Files: their sections in order, looked up by full path, by stem, and by every segment suffix
  // of the stem (for site paths).
  const fileSections = new Map<string, number[]>();
  sections.forEach((members, k) => {
    const path = snippets[members[0]].sourcePath;
    let list = fileSections.get(path);
    if (!list) fileSections.set(path, (list = []));
    list.push(k);
  });
  const byPath = new Map<string, string>();
  const byStem = new Map<string, string[]>();
  const bySuffix = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, key: string, file: string) => {
    const list = map.get(key);
    if (!list) map.set(key, [file]);
    else if (!list.includes(file)) list.push(file);
  };
  for (const file of fileSections.keys()) {
    byPath.set(file.toLowerCase(), file);
    const stem = stemOf(file);
    add(byStem, stem, file);
    const segs = stem.split('/');
    for (let i = 0; i < segs.length; i++) add(bySuffix, segs.slice(i).join('/'), file);
  }
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
    let linkWords = 0;
    let words = 0;
    for (const i of members) {
      const s = snippets[i];
      if (s.type !== 'info' || !s.content.includes('](')) {
        if (s.type === 'info') words += wordCount(s.content);
        continue;
      }
      words += wordCount(s.content.replace(INLINE_LINK, (_m, _img, text: string) => text));
      for (const m of s.content.matchAll(INLINE_LINK)) {
        if (m[1]) continue; // an image
        const url = m[3];
        linkWords += wordCount(m[2]);
        if (!url || /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//')) continue;
        stats.links++;
        const hash = url.indexOf('#');
        const pathPart = (hash >= 0 ? url.slice(0, hash) : url).replace(/\?.*$/, '');
        const anchor = hash >= 0 ? decodeURIComponentSafe(url.slice(hash + 1)) : '';
        const file = pathPart ? findFile(from, decodeURIComponentSafe(pathPart)) : from;
        if (file === from) {
          stats.self++;
          if (!samePage || !anchor) continue;
        }
        if (!file) {
          unresolved?.push(`${from} -> ${url}`);
          continue;
        }
        const same = file === from;
        if (!same) stats.toFile++;
        let target = same ? -1 : fileSections.get(file)![0];
        if (anchor) {
          const anchors = anchorsOf(file);
          const loose = looseAnchor(anchor);
          const hit = anchors.get(loose) ?? anchors.get(looseAnchor(anchor.replace(/-\d+$/, '')));
          if (hit !== undefined) {
            target = hit;
            if (!same) stats.toAnchor++;
          }
        }
        if (target >= 0 && target !== k) found.add(target);
      }
    }
    if (found.size > 0 && words > 0 && linkWords > LINK_LIST_SHARE * words) {
      stats.listSections++;
      found.clear();
    }
    targets.push(Int32Array.from(found).sort());
  });
  return { targets, stats };
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
