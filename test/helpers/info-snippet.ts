import type { StoredSnippet } from '../../core/contracts.ts';

let nextId = 1;

/**
 * A stored info snippet for search tests: a new id (its seq and lines too), the last heading as
 * title, the first as page title, about four characters a token.
 */
export function infoSnippet(sourcePath: string, breadcrumb: string[], content: string, anchor?: string): StoredSnippet {
  const id = nextId++;
  return {
    id,
    seq: id,
    type: 'info',
    title: breadcrumb[breadcrumb.length - 1],
    description: '',
    language: '',
    code: '',
    content,
    breadcrumb,
    pageTitle: breadcrumb[0],
    sourcePath,
    ...(anchor ? { anchor } : {}),
    lineStart: id,
    lineEnd: id,
    tokens: Math.ceil(content.length / 4),
  };
}
