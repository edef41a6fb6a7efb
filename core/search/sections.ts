/**
 * Sections: the snippets a chunker made of one documentation section (same file, same heading
 * path), which retrieval ranks and answers as one unit: the prose with the code it explains.
 */

/** What grouping needs of a snippet. */
export interface SectionMember {
  sourcePath: string;
  breadcrumb: readonly string[];
}

/** The key of a snippet's section: its file and heading path. */
export function sectionKey(s: SectionMember): string {
  return s.sourcePath + '\u0000' + s.breadcrumb.join('\u0001');
}

/**
 * Groups snippets given in document order into sections: runs of consecutive snippets with the
 * same file and heading path. Returns the indexes of the members of each section, in order.
 */
export function groupSections(snippets: readonly SectionMember[]): number[][] {
  const out: number[][] = [];
  let prev = '';
  for (let i = 0; i < snippets.length; i++) {
    const key = sectionKey(snippets[i]);
    if (i === 0 || key !== prev) out.push([i]);
    else out[out.length - 1].push(i);
    prev = key;
  }
  return out;
}
