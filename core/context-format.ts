/**
 * The two formats of a context answer (the API's `type=json` and `type=txt`), from its snippets
 * alone, and the answer's bytes as the HTTP API sends them. Kept apart from core/query.ts (which
 * needs the kernel) so that a search worker (server/search-worker.ts) can format and encode the
 * answer it assembled: the main thread then sends those bytes as they are, with no copy of the
 * snippets to rebuild, format and encode.
 */
import type { StoredSnippet } from './contracts.ts';
import type { ContextSnippet } from './context-assembly.ts';

export interface SnippetSource {
  path: string;
  url?: string;
  lineStart: number;
  lineEnd: number;
}

export interface CodeSnippetJson {
  /** 1-based position of the snippet in the whole answer (code and info snippets together). */
  rank: number;
  codeTitle: string;
  codeDescription: string;
  codeLanguage: string;
  codeTokens: number;
  codeId: string;
  pageTitle: string;
  codeList: Array<{ language: string; code: string }>;
  breadcrumb: string;
  source: SnippetSource;
}

export interface InfoSnippetJson {
  /** 1-based position of the snippet in the whole answer (code and info snippets together). */
  rank: number;
  pageId: string;
  breadcrumb: string;
  content: string;
  contentTokens: number;
  source: SnippetSource;
}

export interface ContextJson {
  codeSnippets: CodeSnippetJson[];
  infoSnippets: InfoSnippetJson[];
}

export type ContextFormat = 'json' | 'txt';

function sourceOf(s: ContextSnippet): SnippetSource {
  return { path: s.sourcePath, ...(s.sourceUrl ? { url: s.sourceUrl } : {}), lineStart: s.lineStart, lineEnd: s.lineEnd };
}

/** A stable reference to a snippet: its URL if known, else path#Lstart-Lend. */
function refOf(s: StoredSnippet): string {
  return s.sourceUrl ?? `${s.sourcePath}#L${s.lineStart}-L${s.lineEnd}`;
}

/** The JSON format of an answer's snippets. */
export function contextJson(snippets: readonly ContextSnippet[]): ContextJson {
  const codeSnippets: CodeSnippetJson[] = [];
  const infoSnippets: InfoSnippetJson[] = [];
  snippets.forEach((s, i) => {
    const rank = i + 1;
    if (s.type === 'code') {
      codeSnippets.push({
        rank,
        codeTitle: s.title,
        codeDescription: s.description,
        codeLanguage: s.language,
        codeTokens: s.tokens,
        codeId: refOf(s),
        pageTitle: s.pageTitle,
        codeList: s.codeList ?? [{ language: s.language, code: s.code }],
        breadcrumb: s.breadcrumb.join(' > '),
        source: sourceOf(s),
      });
    } else {
      infoSnippets.push({
        rank,
        pageId: s.sourceUrl ?? s.sourcePath,
        breadcrumb: s.breadcrumb.join(' > '),
        content: s.content,
        contentTokens: s.tokens,
        source: sourceOf(s),
      });
    }
  });
  return { codeSnippets, infoSnippets };
}

const SEPARATOR = '\n\n--------------------------------\n\n';

/**
 * The text format of a non-empty answer's snippets: one block per snippet, best first (an empty
 * answer's text names its library: core/query.ts toContextText).
 */
export function contextText(snippets: readonly ContextSnippet[]): string {
  return snippets
    .map((s) => {
      const where = `Source: ${s.sourceUrl ?? s.sourcePath} (lines ${s.lineStart}-${s.lineEnd})`;
      if (s.type === 'code') {
        const blocks = (s.codeList ?? [{ language: s.language, code: s.code }]).map((c) => {
          const fence = c.code.includes('```') ? '````' : '```';
          return `${fence}${c.language}\n${c.code}\n${fence}`;
        });
        return [`### ${s.title}`, where, s.description, ...blocks].filter(Boolean).join('\n\n');
      }
      return [`### ${s.breadcrumb.join(' > ')}`, where, s.content].join('\n\n');
    })
    .join(SEPARATOR);
}

/**
 * A non-empty answer's bytes as the HTTP API sends them: the text format, or the JSON format as
 * Koa serializes an object body (JSON.stringify, no spaces), in UTF-8. A Uint8Array of its own
 * (not a slice of Buffer's shared pool), so that a worker can transfer it.
 */
export function encodeContextAnswer(snippets: readonly ContextSnippet[], format: ContextFormat): Uint8Array {
  return ENCODER.encode(format === 'json' ? JSON.stringify(contextJson(snippets)) : contextText(snippets));
}

const ENCODER = new TextEncoder();
