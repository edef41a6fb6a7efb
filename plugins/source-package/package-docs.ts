/**
 * Which files of a package archive are documentation, and how they become documents.
 */
import { createHash } from 'node:crypto';
import type { DocumentFormat, SourceDocument } from '../../core/contracts.ts';
import { rstToMarkdown } from './rst.ts';

/** Files never indexed although they are markdown: release notes and project policies. */
const NOISE = /^(changelog|changes|history|news|releases?|license|licence|copying|code_of_conduct|security|contributing|authors|funding)(\.[a-z]+)?$/i;
const DOC_EXT = /\.(md|mdx|markdown|rst|txt)$/i;
const MARKDOWN_EXT = /\.(md|mdx|markdown)$/i;
const DOC_DIRS = new Set(['docs', 'doc', 'documentation']);
const README = /^readme(\.(md|markdown|mdx|rst|txt))?$/i;

function hidden(segs: string[]): boolean {
  return segs.some((s) => s.startsWith('.') || s === 'node_modules' || s === '__pycache__');
}

/** README at the top, docs folders (any depth of the top), markdown anywhere (npm). */
export function isNpmDoc(path: string): boolean {
  const segs = path.split('/');
  const name = segs[segs.length - 1];
  if (hidden(segs) || NOISE.test(name)) return false;
  if (segs.length === 1 && README.test(name)) return true;
  if (DOC_DIRS.has(segs[0].toLowerCase()) && DOC_EXT.test(name) && !/\.txt$/i.test(name)) return true;
  return MARKDOWN_EXT.test(name);
}

/** Declaration files, picked later by what package.json points at. */
export function isDeclaration(path: string): boolean {
  return /\.d\.[mc]?ts$/.test(path) && !hidden(path.split('/'));
}

/** README at the top, markdown at the top, docs folders' .md/.rst/.txt (PyPI). */
export function isPypiDoc(path: string): boolean {
  const segs = path.split('/');
  const name = segs[segs.length - 1];
  if (hidden(segs) || NOISE.test(name)) return false;
  if (segs.length === 1) return README.test(name) || MARKDOWN_EXT.test(name);
  if (DOC_DIRS.has(segs[0].toLowerCase())) return DOC_EXT.test(name) && !/^(requirements|robots)/i.test(name);
  // A wheel's metadata folder carries the long description again: we take it from the API.
  return false;
}

/** README first, then by path. */
export function docOrder(a: string, b: string): number {
  const ra = README.test(a) ? 0 : 1;
  const rb = README.test(b) ? 0 : 1;
  return ra - rb || (a < b ? -1 : a > b ? 1 : 0);
}

export function isReadme(path: string): boolean {
  return README.test(path);
}

/** A file's text as a document body: rst converted line for line, markdown as is, txt as text. */
export function toDocument(path: string, text: string): { format: DocumentFormat; content: string } {
  if (/\.rst$/i.test(path)) return { format: 'markdown', content: rstToMarkdown(text) };
  if (/\.mdx$/i.test(path)) return { format: 'mdx', content: text };
  if (MARKDOWN_EXT.test(path)) return { format: 'markdown', content: text };
  return { format: 'text', content: text };
}

/** A documentation file of a package archive as a document; null when it is not text (binary). */
export function fileDocument(file: { path: string; data: Buffer }, meta: Record<string, string>): SourceDocument | null {
  const text = decodeText(file.data);
  if (text === null) return null;
  const { format, content } = toDocument(file.path, text);
  return { path: file.path, format, content, hash: sha256(content), meta };
}

export function decodeText(data: Buffer): string | null {
  // Binary files that carry a doc extension (rare) are skipped.
  if (data.subarray(0, 8000).includes(0)) return null;
  return new TextDecoder('utf-8').decode(data).replace(/^\uFEFF/, '');
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
