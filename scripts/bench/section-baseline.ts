/**
 * "A plain BM25 over the same sections" (issue 22): the pages Refdesk indexed, cut at every
 * markdown heading into parts that do not overlap (sections.ts sectionBodies), each a document
 * with its heading breadcrumb as title and its lines as text, searched with MiniSearch's default
 * BM25 (baseline.ts). No snippets, no chunker, no vocabulary: what any search engine would do with
 * the same pages. `npm run bench -- --baseline sections` reports it beside Refdesk.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { estimateTokens } from '../../plugins/chunker-markdown/text-utils.ts';
import { bm25Index, type Bm25Index } from './baseline.ts';
import { sectionBodies } from './sections.ts';

export interface SectionDoc {
  path: string;
  lineStart: number;
  lineEnd: number;
  breadcrumb: string[];
  text: string;
  tokens: number;
}

/** The sections of the given pages of a corpus folder (paths relative to it), in order. */
export function readSectionDocs(corpusDir: string, paths: Iterable<string>): SectionDoc[] {
  const out: SectionDoc[] = [];
  for (const path of [...new Set(paths)].sort()) {
    const source = readFileSync(join(corpusDir, path), 'utf8');
    const lines = source.replace(/\r\n?/g, '\n').split('\n');
    for (const s of sectionBodies(source, path.endsWith('.mdx') ? 'mdx' : 'markdown')) {
      const text = lines.slice(s.lines[0] - 1, s.lines[1]).join('\n');
      out.push({ path, lineStart: s.lines[0], lineEnd: s.lines[1], breadcrumb: s.heading, text, tokens: estimateTokens(text) });
    }
  }
  return out;
}

export function buildSectionBaseline(sections: readonly SectionDoc[]): Bm25Index<SectionDoc> {
  return bm25Index(sections, (s) => ({ title: s.breadcrumb.join(' '), text: s.text }));
}
