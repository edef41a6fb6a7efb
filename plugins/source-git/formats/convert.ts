/**
 * A repository file as the kernel's chunker reads it: Markdown and MDX with their include
 * directives expanded, reStructuredText and AsciiDoc converted line for line, notebooks converted
 * to Markdown, plain text as it is.
 */
import type { DocumentFormat } from '../../../core/contracts.ts';
import { expandMarkdownIncludes, includeOptions, languageOf, selectLines, type IncludeReader } from '../includes.ts';
import type { SourceFormat } from '../select.ts';
import { asciidocToMarkdown } from './asciidoc.ts';
import { notebookToMarkdown } from './notebook.ts';
import { rstToMarkdown, type IncludeLines } from './rst.ts';

export interface Converted {
  format: DocumentFormat;
  content: string;
}

/** Bump when a conversion changes, so refreshes re-read documents converted the old way. */
export const CONVERTER_VERSION = '1';

/** Converts one file; null when it cannot be read as its format (e.g. a broken notebook). */
export function convertDocument(format: SourceFormat, text: string, read: IncludeReader, problems: string[]): Converted | null {
  const lines: IncludeLines = (file, options) => {
    const got = read(file);
    if ('problem' in got) {
      problems.push(got.problem);
      return null;
    }
    return { lines: selectLines(got.text, includeOptions(options)), language: languageOf(got.path) };
  };
  switch (format) {
    case 'markdown':
    case 'mdx':
      return { format, content: expandMarkdownIncludes(text, read, problems) };
    case 'rst':
      return { format: 'markdown', content: rstToMarkdown(text, lines) };
    case 'asciidoc':
      return { format: 'markdown', content: asciidocToMarkdown(text, lines) };
    case 'notebook': {
      const md = notebookToMarkdown(text);
      return md === null ? null : { format: 'markdown', content: md };
    }
    case 'text':
      return { format: 'text', content: text };
  }
}
