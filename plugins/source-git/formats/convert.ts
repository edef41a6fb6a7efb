/**
 * A repository file as the kernel's chunker reads it: Markdown and MDX with their include
 * directives expanded, reStructuredText and AsciiDoc converted line for line (their
 * `literalinclude` / `include::` expanded), notebooks converted to Markdown, plain text as it is.
 * Expanded and converted documents carry a line map, so snippets cite the file's own lines.
 */
import type { DocumentFormat } from '../../../core/contracts.ts';
import { expandMarkdownIncludes, type IncludeFiles, type IncludeLimits } from '../../../core/includes/expand.ts';
import { isIdentityMap, joinWithLineMap } from '../../../core/includes/line-map.ts';
import { resolveIncludePath } from '../../../core/includes/resolve.ts';
import { includeOptions, languageOf, selectLines } from '../../../core/includes/select.ts';
import type { SourceFormat } from '../select.ts';
import { asciidocToMarkdownLines } from './asciidoc.ts';
import { notebookToMarkdown } from './notebook.ts';
import { rstToMarkdownLines, type IncludeLines } from './rst.ts';

export interface Converted {
  format: DocumentFormat;
  content: string;
  /** Present when the content's lines are not the file's (see core/includes/line-map.ts). */
  lineMap?: number[];
  /** Repository paths of the files included, sorted. */
  used: string[];
  /** Include directives left unexpanded, and why. */
  problems: string[];
}

/** Bump when a conversion changes, so refreshes re-read documents converted the old way. */
export const CONVERTER_VERSION = '2';

/** Converts one file; null when it cannot be read as its format (e.g. a broken notebook). */
export function convertDocument(path: string, format: SourceFormat, text: string, files: IncludeFiles, limits: IncludeLimits): Converted | null {
  switch (format) {
    case 'markdown':
    case 'mdx':
      return { format, ...expandMarkdownIncludes(path, text, files, limits) };
    case 'rst':
    case 'asciidoc': {
      const used = new Set<string>();
      const problems: string[] = [];
      const include = includeReader(path, files, used, problems, limits.maxChars - text.length);
      const perLine = format === 'rst' ? rstToMarkdownLines(text, include) : asciidocToMarkdownLines(text, include);
      const { content, lineMap } = joinWithLineMap(perLine, text.replace(/\r\n?/g, '\n').split('\n').length);
      const base = { format: 'markdown' as const, content, used: [...used].sort(), problems };
      return isIdentityMap(lineMap) ? base : { ...base, lineMap };
    }
    case 'notebook': {
      const md = notebookToMarkdown(text);
      return md === null ? null : { format: 'markdown', content: md, used: [], problems: [] };
    }
    case 'text':
      return { format: 'text', content: text, used: [], problems: [] };
  }
}

/** Reads `literalinclude` / `include::` targets of an rst or AsciiDoc page (not nested). */
function includeReader(path: string, files: IncludeFiles, used: Set<string>, problems: string[], room: number): IncludeLines {
  let left = room;
  return (file, options) => {
    const r = resolveIncludePath(path, file, (p) => files.exists(p), 'nearest', files.root);
    if ('problem' in r) {
      problems.push(r.problem);
      return null;
    }
    const text = files.text(r.path);
    if (text === undefined) {
      problems.push(`"${r.path}" could not be read`);
      return null;
    }
    const lines = selectLines(text, includeOptions(options));
    const chars = lines.reduce((n, l) => n + l.length + 1, 0);
    if (chars > left) {
      problems.push(`"${r.path}" is not included: the page would grow past the size limit`);
      return null;
    }
    left -= chars;
    used.add(r.path);
    return { lines, language: languageOf(r.path) };
  };
}
