import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runSource } from '../../../core/testing/index.ts';
import { MarkdownChunker } from '../../../plugins/chunker-markdown/markdown-chunker.ts';
import { rstToMarkdown } from '../../../plugins/source-git/formats/rst.ts';
import { asciidocToMarkdown } from '../../../plugins/source-git/formats/asciidoc.ts';
import { notebookToMarkdown } from '../../../plugins/source-git/formats/notebook.ts';
import { expandMarkdownIncludes, type IncludeFiles } from '../../../core/includes/expand.ts';
import { gitFixture, type GitFixture } from './helpers.ts';
import type { RepoBuilder } from './repo-builder.ts';

const chunker = new MarkdownChunker({ maxInfoTokens: 400, maxDescriptionChars: 600 });

const RST = [
  '=========', //  1
  'Demo docs', //  2
  '=========', //  3
  '', //  4
  'Intro paragraph with :func:`demo.run` and ``literal``.', //  5
  '', //  6
  'Installing', //  7
  '----------', //  8
  '', //  9
  '.. code-block:: python', // 10
  '   :linenos:', // 11
  '', // 12
  '   import demo', // 13
  '   demo.run()', // 14
  '', // 15
  'Configuration', // 16
  '-------------', // 17
  '', // 18
  'Write this::', // 19
  '', // 20
  '    [demo]', // 21
  '    level = 3', // 22
  '', // 23
  '.. note::', // 24
  '', // 25
  '   Restart after changing it.', // 26
  '',
].join('\n');

const ADOC = [
  '= Demo Guide', //  1
  ':toc:', //  2
  '', //  3
  '== Getting started', //  4
  '', //  5
  'Run the demo.', //  6
  '', //  7
  '[source,java]', //  8
  '----', //  9
  'Demo.run();', // 10
  '----', // 11
  '', // 12
  '=== Options', // 13
  '', // 14
  'NOTE: options are optional.', // 15
  '',
].join('\n');

describe('format converters keep line numbers', () => {
  test('reStructuredText: headings, code-block and literal blocks land on their original lines', () => {
    const md = rstToMarkdown(RST);
    assert.equal(md.split('\n').length, RST.split('\n').length);
    const lines = md.split('\n');
    assert.equal(lines[1], '# Demo docs');
    assert.equal(lines[6], '## Installing');
    assert.equal(lines[15], '## Configuration');
    assert.match(lines[4], /`demo\.run` and `literal`/);
    const snippets = chunker.chunk({ path: 'docs/index.rst', format: 'markdown', content: md });
    const code = snippets.filter((s) => s.type === 'code');
    assert.deepEqual(code.map((c) => c.code.trim()), ['import demo\ndemo.run()', '[demo]\nlevel = 3']);
    assert.equal(code[0].language, 'python');
    const install = code[0];
    assert.ok(install.lineStart <= 13 && install.lineEnd >= 14, `python block at lines ${install.lineStart}-${install.lineEnd}`);
    assert.deepEqual(install.breadcrumb.slice(-1), ['Installing']);
    const note = snippets.find((s) => s.type === 'info' && s.content.includes('Restart after changing it'));
    assert.ok(note, 'the admonition body is prose, not code');
  });

  test('AsciiDoc: headings and [source] listings become Markdown on the same lines', () => {
    const md = asciidocToMarkdown(ADOC);
    const lines = md.split('\n');
    assert.equal(lines.length, ADOC.split('\n').length);
    assert.equal(lines[0], '# Demo Guide');
    assert.equal(lines[3], '## Getting started');
    assert.equal(lines[8], '```java');
    assert.equal(lines[10], '```');
    assert.equal(lines[12], '### Options');
    assert.equal(lines[14], '**Note:** options are optional.');
    const code = chunker.chunk({ path: 'guide.adoc', format: 'markdown', content: md }).filter((s) => s.type === 'code');
    assert.equal(code.length, 1);
    assert.equal(code[0].language, 'java');
    assert.equal(code[0].code.trim(), 'Demo.run();');
    assert.ok(code[0].lineStart <= 10 && code[0].lineEnd >= 10);
  });

  test('notebooks: markdown cells and fenced code cells in the kernel language; broken JSON is null', () => {
    const nb = {
      metadata: { language_info: { name: 'python' } },
      cells: [
        { cell_type: 'markdown', source: ['# Tutorial\n', '\n', 'Load the data.'] },
        { cell_type: 'code', source: 'import pandas as pd\ndf = pd.read_csv("x.csv")', outputs: [{ text: 'ignored' }] },
        { cell_type: 'raw', source: 'raw cell' },
      ],
    };
    assert.equal(notebookToMarkdown(JSON.stringify(nb)), '# Tutorial\n\nLoad the data.\n\n```python\nimport pandas as pd\ndf = pd.read_csv("x.csv")\n```\n');
    assert.equal(notebookToMarkdown('{not json'), null);
    assert.equal(notebookToMarkdown('{"cells": 3}'), null);
  });
});

describe('include directives (core/includes, as the git source uses them)', () => {
  const files: Record<string, string> = {
    'docs_src/app/tutorial001.py': 'from fastapi import FastAPI\n\napp = FastAPI()\n\n@app.get("/")\ndef root():\n    return {"ok": True}\n',
    'snippets/config.yaml': '# --8<-- [start:core]\nlevel: 3\n# --8<-- [end:core]\nother: 1\n',
    'docs/partial.md': 'Shared **partial** text.\n',
  };
  const repo: IncludeFiles = { root: 'repository', exists: (p) => p in files, text: (p) => files[p] };

  test('FastAPI {* *} with ln[], resolved from a parent folder, becomes a fenced block mapped to the directive line', () => {
    const out = expandMarkdownIncludes('docs/en/docs/first-steps.md', '# First steps\n\n{* ../../docs_src/app/tutorial001.py hl[3] ln[1:3] *}\n\nAfter.\n', repo);
    assert.deepEqual(out.problems, []);
    assert.equal(out.content, '# First steps\n\n```python\nfrom fastapi import FastAPI\n\napp = FastAPI()\n```\n\nAfter.\n');
    assert.deepEqual(out.lineMap, [1, 2, 3, 3, 3, 3, 3, 4, 5, 6]);
  });

  test('mkdocs --8<-- snippets: whole files, line ranges, named sections, inside and outside fences', () => {
    const doc = '```yaml\n--8<-- "snippets/config.yaml:core"\n```\n\n--8<-- "docs_src/app/tutorial001.py:5:7"\n\n--8<-- "docs/partial.md"\n';
    const out = expandMarkdownIncludes('docs/index.md', doc, repo);
    assert.deepEqual(out.problems, []);
    assert.equal(out.content, '```yaml\nlevel: 3\n```\n\n```python\n@app.get("/")\ndef root():\n    return {"ok": True}\n```\n\nShared **partial** text.\n');
    assert.deepEqual(out.lineMap, [1, 2, 3, 4, 5, 5, 5, 5, 5, 6, 7, 8]);
  });

  test('!include lines; paths leaving the repository and missing files are refused and reported', () => {
    const out = expandMarkdownIncludes('docs/index.md', '!include ../snippets/config.yaml\n\n!include ../../../etc/passwd\n\n{* missing.py *}\n', repo);
    assert.match(out.content, /^```yaml\nlevel: 3/);
    assert.ok(out.content.includes('!include ../../../etc/passwd'), 'a refused directive stays for the chunker to drop');
    assert.deepEqual(out.problems, ['"../../../etc/passwd" leaves the repository', '"missing.py" is not a file of the repository']);
  });
});

describe('formats and includes through a real repository', () => {
  let fx: GitFixture;
  let repo: RepoBuilder;
  before(async () => {
    fx = await gitFixture();
    repo = fx.repo('formats');
    repo
      .commit({
        'docs/index.rst': RST,
        'docs/guide.adoc': ADOC,
        'docs/tutorial.ipynb': JSON.stringify({ metadata: { kernelspec: { language: 'python' } }, cells: [{ cell_type: 'markdown', source: '# Notebook tour' }, { cell_type: 'code', source: 'print("hi")' }] }),
        'docs/notes.txt': 'Plain notes\n===========\n\nSome text.\n',
        'docs/en/docs/tutorial/first-steps.md': '# First steps\n\n{* ../../docs_src/first_steps/tutorial001.py ln[1:2] *}\n',
        'docs/en/docs/api.rst': 'API\n===\n\n.. literalinclude:: ../../../docs_src/first_steps/tutorial001.py\n   :language: python\n   :lines: 3-\n',
        'docs_src/first_steps/tutorial001.py': 'from fastapi import FastAPI\napp = FastAPI()\n@app.get("/")\ndef root(): ...\n',
        'LICENSE.txt': 'MIT\n',
      })
      .publish();
  });
  after(() => fx?.close());

  test('each format arrives as Markdown (or text) with includes expanded and hashes covering the included files', async () => {
    const { documents, logs } = await runSource(fx.source(), { url: fx.url('formats') });
    const by = new Map(documents.map((d) => [d.path, d]));
    assert.deepEqual([...by.keys()], ['docs/en/docs/api.rst', 'docs/en/docs/tutorial/first-steps.md', 'docs/guide.adoc', 'docs/index.rst', 'docs/notes.txt', 'docs/tutorial.ipynb']);
    assert.equal(by.get('docs/index.rst')!.format, 'markdown');
    assert.equal(by.get('docs/index.rst')!.content.split('\n')[6], '## Installing');
    assert.equal(by.get('docs/guide.adoc')!.content.split('\n')[0], '# Demo Guide');
    assert.match(by.get('docs/tutorial.ipynb')!.content, /^# Notebook tour\n\n```python\nprint\("hi"\)\n```/);
    assert.equal(by.get('docs/notes.txt')!.format, 'text');
    assert.match(by.get('docs/en/docs/tutorial/first-steps.md')!.content, /```python\nfrom fastapi import FastAPI\napp = FastAPI\(\)\n```/);
    assert.match(by.get('docs/en/docs/api.rst')!.content, /```python\n@app\.get\("\/"\)\ndef root\(\): \.\.\.\n```/);
    const fs = by.get('docs/en/docs/tutorial/first-steps.md')!;
    assert.equal(fs.meta?.includes, 'docs_src/first_steps/tutorial001.py');
    // Line numbers are the file's own: included code cites its directive's line (this used to be
    // lines 3-6 of the expanded page).
    const fsCode = chunker.chunk(fs).find((s) => s.type === 'code')!;
    assert.equal(fsCode.code, 'from fastapi import FastAPI\napp = FastAPI()');
    assert.deepEqual([fsCode.lineStart, fsCode.lineEnd], [3, 3]);
    const api = by.get('docs/en/docs/api.rst')!;
    assert.deepEqual(api.lineMap, [1, 2, 3, 4, 4, 4, 4, 5, 6, 7]);
    const apiCode = chunker.chunk(api).find((s) => s.type === 'code')!;
    assert.deepEqual([apiCode.lineStart, apiCode.lineEnd], [4, 4]);
    assert.equal(by.get('docs/index.rst')!.lineMap, undefined, 'a conversion without includes keeps the lines as they are');
    assert.match(fs.hash ?? '', /^git\d+:[0-9a-f]{40}\+[0-9a-f]{16}$/);
    assert.ok(!logs.some((l) => l.level === 'warn'), JSON.stringify(logs));
  });

  test('a change to an included file alone re-reads the pages that include it', async () => {
    const first = await runSource(fx.source(), { url: fx.url('formats') });
    const previous = new Map(first.documents.map((d) => [d.path, { hash: d.hash!, meta: d.meta! }]));
    repo.commit({ 'docs_src/first_steps/tutorial001.py': 'from fastapi import FastAPI\napp = FastAPI(title="v2")\n@app.get("/")\ndef root(): ...\n' }).publish();
    const again = await runSource(fx.source(), { url: fx.url('formats') }, { previous });
    const changed = again.documents.filter((d) => !d.unchanged).map((d) => d.path);
    assert.deepEqual(changed, ['docs/en/docs/api.rst', 'docs/en/docs/tutorial/first-steps.md']);
    assert.match(again.documents.find((d) => d.path === 'docs/en/docs/tutorial/first-steps.md')!.content, /title="v2"/);
  });
});
