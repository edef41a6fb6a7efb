import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Source, SourceDocument } from '../../../core/contracts.ts';
import type { SourceDefinition } from '../../../core/define.ts';
import { createTestLogger } from '../../../core/testing/fakes.ts';
import { runSourceContract, sourceDocumentProblems } from '../../../core/testing/source-contract.ts';
import { validate } from '../../../core/validate.ts';
import { failingContractTests } from '../../kit/helpers/contract-failures.ts';
import uploadPlugin from '../../../plugins/source-upload/index.ts';

// ---------------------------------------------------------------------------------------------
// The built-in upload source, built the way the kernel builds it: from its manifest definition,
// with options and spec validated (defaults applied) against its schemas.
// ---------------------------------------------------------------------------------------------

const uploadDef = uploadPlugin.definitions.find((d): d is SourceDefinition => d.role === 'source' && d.kind === 'upload');

runSourceContract('upload (folder of markdown files)', async () => {
  assert.ok(uploadDef, 'the upload plugin defines an "upload" source');
  const options: Record<string, unknown> = {};
  assert.deepEqual(validate(uploadDef.options, options, 'sources.upload.options'), []);
  const source = await uploadDef.create(options, { logger: createTestLogger() });

  const dir = await mkdtemp(join(tmpdir(), 'refdesk-source-contract-'));
  const files: Record<string, string> = {
    'README.md': '# Project\n\nWelcome.\n',
    'docs/guide.md': '# Guide\n\n## Install\n\nRun `npm install`.\n',
    'docs/api/context.md': '# Context\n\n```js\nctx.body = "hi";\n```\n',
    'docs/faq.md': '# FAQ\n\nQuestions.\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    const p = join(dir, ...rel.split('/'));
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, text);
  }
  const spec: Record<string, unknown> = { path: dir };
  assert.deepEqual(validate(uploadDef.specSchema, spec, 'spec'), []);
  return { source, spec, cleanup: () => rm(dir, { recursive: true, force: true }) };
});

// ---------------------------------------------------------------------------------------------
// A tiny inline source: documents from its spec, checking the signal before each one.
// ---------------------------------------------------------------------------------------------

const inlineSource: Source = {
  async *read(ctx) {
    const pages = (ctx.spec.pages ?? {}) as Record<string, string>;
    for (const path of Object.keys(pages).sort()) {
      ctx.signal.throwIfAborted();
      await Promise.resolve();
      yield { path, format: path.endsWith('.md') ? 'markdown' : 'text', content: pages[path], url: `https://inline.test/${path}` };
    }
    ctx.signal.throwIfAborted();
  },
};

runSourceContract('inline', async () => ({
  source: inlineSource,
  spec: { pages: { 'b/two.md': '# Two\n', 'a/one.md': '# One\n', 'notes.txt': 'plain\n' } },
}));

// ---------------------------------------------------------------------------------------------
// The checks themselves catch what breaks the contract.
// ---------------------------------------------------------------------------------------------

test('sourceDocumentProblems accepts good documents and names every broken one', () => {
  const doc = (path: string, extra: Partial<SourceDocument> = {}): SourceDocument => ({ path, format: 'markdown', content: '# x', ...extra });
  assert.deepEqual(sourceDocumentProblems([doc('README.md'), doc('docs/a.md'), doc('docs/api/b.mdx', { url: 'https://x', title: 'B', hash: 'h' })]), []);
  assert.deepEqual(sourceDocumentProblems([]), []);

  const cases: Array<[SourceDocument, RegExp]> = [
    [doc('/abs/path.md'), /leading '\/'/],
    [doc('docs\\win.md'), /forward slashes/],
    [doc('docs/../escape.md'), /'\.\.' segment/],
    [doc('..'), /'\.\.' segment/],
    [doc('./docs/a.md'), /'\.' segment/],
    [doc('docs//a.md'), /empty segment/],
    [doc('docs/'), /empty segment/],
    [doc('C:/docs/a.md'), /drive letter/],
    [doc(''), /has no path/],
    [doc('a.md', { format: '' }), /format/],
    [doc('a.md', { content: Buffer.from('x') as unknown as string }), /content must be a string/],
    [doc('a.md', { url: 42 as unknown as string }), /url must be a string/],
  ];
  for (const [d, pattern] of cases) {
    const problems = sourceDocumentProblems([d]);
    assert.equal(problems.length, 1, `${JSON.stringify(d.path)}: ${JSON.stringify(problems)}`);
    assert.match(problems[0], pattern);
  }
  const dup = sourceDocumentProblems([doc('a.md'), doc('b.md'), doc('a.md')]);
  assert.equal(dup.length, 1);
  assert.match(dup[0], /document #3 \("a\.md"\): the same path was yielded twice/);
  assert.match(sourceDocumentProblems([null as unknown as SourceDocument])[0], /not an object/);
});

test('the suite fails sources that break the contract, and does not hang on them', () => {
  const fixture = fileURLToPath(new URL('./fixtures/broken-sources.ts', import.meta.url));
  const started = Date.now();
  const res = failingContractTests(fixture, [
    ['read() yields at least one document', 'yields'],
    ['every document has', 'paths'],
    ['a second read', 'stable'],
    ['read() stops', 'abort'],
    ['read() yields no further document', 'midabort'],
  ], 60_000);
  assert.ok(Date.now() - started < 30_000, 'the broken sources were judged quickly');
  assert.notEqual(res.status, 0, 'the broken sources fail');
  assert.deepEqual(res.failed, [
    'Source bad-paths: abort',
    'Source bad-paths: midabort',
    'Source bad-paths: paths',
    'Source checks-abort-only-at-start: midabort',
    'Source empty: abort',
    'Source empty: midabort',
    'Source empty: yields',
    'Source hangs-when-aborted: abort',
    'Source ignores-abort: abort',
    'Source unstable: abort',
    'Source unstable: midabort',
    'Source unstable: stable',
  ]);
  assert.match(res.stdout, /read\(\) yielded another document after the signal was aborted/);
  assert.match(res.stdout, /neither failed nor finished within 300 ms/);
  assert.match(res.stdout, /the path must not contain a '\.\.' segment/);
  assert.match(res.stdout, /yielded no documents/);
});
