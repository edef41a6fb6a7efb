/**
 * A reusable node:test suite for the Chunker contract: every Chunker implementation runs it.
 *
 *   runChunkerContract('markdown', async () => ({ chunker, documents: [{ path: 'guide.md', format: 'markdown', content }] }));
 *
 * `makeChunker` returns a chunker and documents in its formats that give at least one snippet
 * between them; each test calls it again. The suite adds odd documents of its own (empty, blank,
 * CRLF, an unclosed fence, NUL bytes, a very long line) in each of the chunker's formats.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Chunker, Snippet, SourceDocument } from '../contracts.ts';
import { withFixture } from './fixture.ts';

export interface ChunkerFixture {
  chunker: Chunker;
  /** Documents in the chunker's formats; together they must give at least one snippet. */
  documents: SourceDocument[];
  cleanup?(): Promise<void>;
}

const SNIPPET_STRINGS = ['title', 'description', 'language', 'code', 'content', 'pageTitle', 'sourcePath'] as const;

/** How many lines a document has as the chunker must cite them (through its line map when it has one). */
function citedLines(doc: SourceDocument): { first: number; last: number; allowed: ReadonlySet<number> | null } {
  if (doc.lineMap && doc.lineMap.length > 0) return { first: doc.lineMap[0], last: doc.lineMap[doc.lineMap.length - 1], allowed: new Set(doc.lineMap) };
  return { first: 1, last: Math.max(1, doc.content.split('\n').length), allowed: null };
}

/**
 * What is wrong with these snippets as the chunking of `doc`: one line per problem, none when
 * they keep the contract (a type, the string fields, a breadcrumb of strings, the document's path
 * as sourcePath, a 1-based line range inside the document (values of its line map when it has
 * one), snippets of each type in document order (lineStart never decreasing among the code
 * snippets, nor among the info snippets: a chunker may give a section's code before its prose),
 * tokens a non-negative number, code only on code snippets and content only on info snippets).
 */
export function snippetProblems(doc: SourceDocument, snippets: readonly Snippet[]): string[] {
  const problems: string[] = [];
  const { first, last, allowed } = citedLines(doc);
  const previousStart = { code: -Infinity, info: -Infinity };
  snippets.forEach((s, i) => {
    const at = `${doc.path} snippet #${i + 1}`;
    if (s === null || typeof s !== 'object') {
      problems.push(`${at} is not an object`);
      return;
    }
    if (s.type !== 'code' && s.type !== 'info') problems.push(`${at}: type must be "code" or "info"`);
    for (const k of SNIPPET_STRINGS) if (typeof s[k] !== 'string') problems.push(`${at}: ${k} must be a string`);
    if (!Array.isArray(s.breadcrumb) || s.breadcrumb.some((b) => typeof b !== 'string')) problems.push(`${at}: breadcrumb must be an array of strings`);
    if (s.sourcePath !== doc.path) problems.push(`${at}: sourcePath must be the document's path`);
    if (!Number.isInteger(s.lineStart) || !Number.isInteger(s.lineEnd)) {
      problems.push(`${at}: lineStart and lineEnd must be integers`);
    } else {
      if (s.lineStart < first || s.lineEnd > last || s.lineEnd < s.lineStart) {
        problems.push(`${at}: lines ${s.lineStart}-${s.lineEnd} are not a range inside the document's lines ${first}-${last}`);
      }
      if (allowed && (!allowed.has(s.lineStart) || !allowed.has(s.lineEnd))) problems.push(`${at}: lines ${s.lineStart}-${s.lineEnd} are not cited through the document's lineMap`);
      const kind = s.type === 'code' ? 'code' : 'info';
      if (s.lineStart < previousStart[kind]) {
        problems.push(`${at}: starts at line ${s.lineStart}, before the ${kind} snippet ahead of it (${previousStart[kind]}): snippets of a type come in document order`);
      }
      previousStart[kind] = s.lineStart;
    }
    if (typeof s.tokens !== 'number' || !Number.isFinite(s.tokens) || s.tokens < 0) problems.push(`${at}: tokens must be a non-negative number`);
    if (s.type === 'info' && s.code !== '') problems.push(`${at}: an info snippet has no code`);
    if (s.type === 'code' && s.content !== '') problems.push(`${at}: a code snippet keeps its prose in description, not content`);
  });
  return problems;
}

/** Documents that must not make a chunker throw, in one format. */
export function oddDocuments(format: string): SourceDocument[] {
  const doc = (name: string, content: string): SourceDocument => ({ path: `odd/${name}`, format, content });
  return [
    doc('empty', ''),
    doc('blank', ' \n\t\n\n'),
    doc('crlf', '# Title\r\n\r\nSome text.\r\n\r\n## Part\r\n\r\nMore text.\r\n'),
    doc('unclosed-fence', '# Title\n\n```js\nconst a = 1;\n'),
    doc('nul-bytes', '# Ti\u0000tle\n\nbinary \u0000\u0001\u0002 junk\n'),
    doc('long-line', `# Long\n\n${'word '.repeat(40_000)}\n`),
    doc('headings-only', '# A\n## B\n### C\n#### D\n##### E\n###### F\n####### G\n'),
    doc('front-matter-only', '---\ntitle: x\n---\n'),
  ];
}

export function runChunkerContract(name: string, makeChunker: () => Promise<ChunkerFixture> | ChunkerFixture): void {
  const withChunker = (fn: (fixture: ChunkerFixture) => Promise<void> | void) => withFixture(makeChunker, fn);

  /** chunk() must answer synchronously with an array. */
  function chunkOf(chunker: Chunker, doc: SourceDocument): Snippet[] {
    const out: unknown = chunker.chunk(doc);
    assert.ok(!(out instanceof Promise), `chunk() of ${doc.path} returned a Promise: a chunker is synchronous`);
    assert.ok(Array.isArray(out), `chunk() of ${doc.path} returned ${typeof out}, not an array`);
    return out as Snippet[];
  }

  describe(`Chunker contract: ${name}`, () => {
    test('formats is a non-empty list of format names; revision, when set, is a non-negative integer', () =>
      withChunker(({ chunker }) => {
        assert.ok(Array.isArray(chunker.formats) && chunker.formats.length > 0, 'formats must list at least one format');
        for (const f of chunker.formats) assert.ok(typeof f === 'string' && f !== '', 'each format must be a non-empty string');
        if (chunker.revision !== undefined) assert.ok(Number.isInteger(chunker.revision) && chunker.revision >= 0, 'revision must be a non-negative integer');
      }));

    test('the given documents give snippets that keep the contract (fields, path, line ranges, order)', () =>
      withChunker(({ chunker, documents }) => {
        assert.ok(documents.length > 0, 'the fixture gives no documents');
        let total = 0;
        for (const doc of documents) {
          const snippets = chunkOf(chunker, doc);
          total += snippets.length;
          assert.deepEqual(snippetProblems(doc, snippets), [], `the snippets of ${doc.path} break the Chunker contract`);
        }
        assert.ok(total > 0, 'the fixture documents gave no snippet at all');
      }));

    test('chunk() is pure: the same document gives the same snippets, and the document is not changed', () =>
      withChunker(({ chunker, documents }) => {
        for (const doc of documents) {
          const before = structuredClone(doc);
          const first = chunkOf(chunker, doc);
          assert.deepEqual(doc, before, `chunk() changed the document ${doc.path}`);
          const second = chunkOf(chunker, structuredClone(doc));
          assert.deepEqual(second, first, `chunk() of ${doc.path} gave different snippets the second time`);
        }
      }));

    test('line ranges are cited through the document\'s lineMap', () =>
      withChunker(({ chunker, documents }) => {
        for (const doc of documents) {
          const lines = doc.content.split('\n').length;
          // Line i of the content comes from line 10 + 3i of the original file.
          const mapped: SourceDocument = { ...doc, lineMap: Array.from({ length: lines }, (_, i) => 10 + 3 * i) };
          assert.deepEqual(snippetProblems(mapped, chunkOf(chunker, mapped)), [], `the snippets of ${doc.path} with a lineMap break the Chunker contract`);
        }
      }));

    test('odd content never makes chunk() throw: it degrades to plain sections', () =>
      withChunker(({ chunker }) => {
        for (const format of chunker.formats) {
          for (const doc of oddDocuments(format)) {
            let snippets: Snippet[];
            try {
              snippets = chunkOf(chunker, doc);
            } catch (e) {
              assert.fail(`chunk() threw on ${doc.path} (${format}): ${e instanceof Error ? e.message : String(e)}`);
            }
            assert.deepEqual(snippetProblems(doc, snippets), [], `the snippets of ${doc.path} (${format}) break the Chunker contract`);
          }
        }
      }));
  });
}
