import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expandMarkdownIncludes, gatherIncludes, includeWarning, type IncludeFiles } from '../../core/includes/expand.ts';
import { findIncludeTargets, parseDirective } from '../../core/includes/directives.ts';
import { isIdentityMap, joinWithLineMap, lineMapProblems, originalLine } from '../../core/includes/line-map.ts';
import { resolveIncludePath } from '../../core/includes/resolve.ts';
import { selectLines } from '../../core/includes/select.ts';
import { MarkdownChunker } from '../../plugins/chunker-markdown/markdown-chunker.ts';

/** A documentation root in memory: every file exists and is readable. */
function tree(files: Record<string, string>, root = 'upload'): IncludeFiles {
  return { root, exists: (p) => p in files, text: (p) => files[p] };
}

const lines = (...ls: string[]) => ls.join('\n');

describe('line maps', () => {
  test('originalLine reads the map and clamps lines past either end', () => {
    const map = [1, 2, 3, 3, 3, 4];
    assert.equal(originalLine(map, 1), 1);
    assert.equal(originalLine(map, 4), 3);
    assert.equal(originalLine(map, 6), 4);
    assert.equal(originalLine(map, 9), 4);
    assert.equal(originalLine(map, 0), 1);
    assert.equal(originalLine([], 7), 7);
  });

  test('joinWithLineMap: an entry with several lines maps them all to its line; entries past the end to the last', () => {
    const { content, lineMap } = joinWithLineMap(['# T', '```py\nx = 1\n```', 'after', '```'], 3);
    assert.equal(content, '# T\n```py\nx = 1\n```\nafter\n```');
    assert.deepEqual(lineMap, [1, 2, 2, 2, 3, 3]);
    assert.equal(isIdentityMap(joinWithLineMap(['a', 'b'], 2).lineMap), true);
    assert.equal(isIdentityMap(lineMap), false);
  });

  test('lineMapProblems: one entry per content line, positive, never decreasing', () => {
    assert.deepEqual(lineMapProblems([1, 2, 2], 'a\nb\nc'), []);
    assert.match(lineMapProblems([1, 2], 'a\nb\nc')[0], /2 entries for 3 lines/);
    assert.match(lineMapProblems([1, 3, 2], 'a\nb\nc')[0], /decreases at entry 2/);
    assert.match(lineMapProblems([0, 1, 2], 'a\nb\nc')[0], /not a positive integer/);
    assert.match(lineMapProblems('1,2', 'a\nb')[0], /must be an array/);
  });
});

describe('resolving include targets', () => {
  const files = new Set([
    'docs_src/app/main.py',
    'content/en/_common/glob-patterns.md',
    'content/en/_common/note/index.md',
    'content/en/functions/_common/local.md',
    'content/en/functions/bundle/part.md',
    'content/fr/_common/glob-patterns.md',
  ]);
  const exists = (p: string) => files.has(p);

  test('nearest: the page folder, then its parents; a leading / is the root; .. past the root is refused', () => {
    assert.deepEqual(resolveIncludePath('docs/en/docs/first.md', '../../docs_src/app/main.py', exists), { path: 'docs_src/app/main.py' });
    assert.deepEqual(resolveIncludePath('docs/index.md', 'docs_src/app/main.py', exists), { path: 'docs_src/app/main.py' });
    assert.deepEqual(resolveIncludePath('docs/index.md', '/docs_src/app/main.py', exists), { path: 'docs_src/app/main.py' });
    assert.deepEqual(resolveIncludePath('docs/index.md', '../../etc/passwd', exists, 'nearest', 'upload'), { problem: '"../../etc/passwd" leaves the upload' });
    assert.deepEqual(resolveIncludePath('docs/index.md', '/../secret.md', exists), { problem: '"/../secret.md" leaves the repository' });
    assert.deepEqual(resolveIncludePath('docs/index.md', 'missing.py', exists), { problem: '"missing.py" is not a file of the repository' });
    assert.deepEqual(resolveIncludePath('docs/index.md', 'https://example.com/x.md', exists), { problem: '"https://example.com/x.md" is a URL, not a file of the repository' });
  });

  test('site (Hugo): the content root found from the top down, with or without a leading slash, the page folder last', () => {
    const page = 'content/en/functions/resources/Match.md';
    assert.deepEqual(resolveIncludePath(page, '/_common/glob-patterns.md', exists, 'site'), { path: 'content/en/_common/glob-patterns.md' });
    assert.deepEqual(resolveIncludePath(page, '_common/glob-patterns.md', exists, 'site'), { path: 'content/en/_common/glob-patterns.md' });
    // Each language finds its own content root.
    assert.deepEqual(resolveIncludePath('content/fr/functions/x.md', '/_common/glob-patterns.md', exists, 'site'), { path: 'content/fr/_common/glob-patterns.md' });
    // Without an extension: <path>.md, <path>/index.md, <path>/_index.md (Hugo's page lookup).
    assert.deepEqual(resolveIncludePath(page, '_common/note', exists, 'site'), { path: 'content/en/_common/note/index.md' });
    // Relative to the page as the fallback.
    assert.deepEqual(resolveIncludePath('content/en/functions/bundle/index.md', 'part.md', exists, 'site'), { path: 'content/en/functions/bundle/part.md' });
    // The content root wins over a same-named file nearer the page.
    assert.deepEqual(resolveIncludePath('content/en/functions/x.md', '_common/glob-patterns.md', exists, 'site'), { path: 'content/en/_common/glob-patterns.md' });
    assert.deepEqual(resolveIncludePath('content/en/functions/x.md', '_common/local.md', exists, 'site'), { path: 'content/en/functions/_common/local.md' });
    assert.deepEqual(resolveIncludePath(page, '../../../../../etc/passwd', exists, 'site', 'upload'), { problem: '"../../../../../etc/passwd" leaves the upload' });
    assert.deepEqual(resolveIncludePath(page, '/_common/nope.md', exists, 'site', 'upload'), { problem: '"/_common/nope.md" is not a file of the upload' });
  });
});

describe('include directive syntaxes', () => {
  test('Hugo include shortcode with both delimiters; the escaped example form and code fences are not directives', () => {
    assert.deepEqual(parseDirective('{{% include "/_common/glob-patterns.md" %}}', false), { kind: 'include', target: { file: '/_common/glob-patterns.md', options: {}, scope: 'site' }, indent: '' });
    assert.deepEqual(parseDirective('  {{< include "_common/x.md" >}}  ', false), { kind: 'include', target: { file: '_common/x.md', options: {}, scope: 'site' }, indent: '' });
    assert.deepEqual(parseDirective('{{% include `_common/x.md` %}}', false), { kind: 'include', target: { file: '_common/x.md', options: {}, scope: 'site' }, indent: '' });
    assert.equal(parseDirective('{{%/* include "_common/x.md" */%}}', false), null);
    assert.equal(parseDirective('{{% include "_common/x.md" >}}', false), null, 'mismatched delimiters');
    assert.equal(parseDirective('{{% include "_common/x.md" %}}', true), null, 'inside a fence');
    assert.equal(parseDirective('Text with {{% include "_common/x.md" %}} inline', false), null);
  });

  test('mkdocs snippets: path, line range, named section, block delimiter; only they count inside fences', () => {
    assert.deepEqual(parseDirective('--8<-- "snippets/a.py:3:5"', true), { kind: 'include', target: { file: 'snippets/a.py', options: { lines: '3-5' }, scope: 'nearest' }, indent: '' });
    assert.deepEqual(parseDirective('    --8<-- "a.yaml:core"', false), { kind: 'include', target: { file: 'a.yaml', options: { section: 'core' }, scope: 'nearest' }, indent: '    ' });
    assert.deepEqual(parseDirective('--8<--', false), { kind: 'snippet-block' });
    assert.equal(parseDirective('--8<--', true), null);
  });

  test('FastAPI, VitePress, !include and {!path!}', () => {
    assert.deepEqual(parseDirective('{* ../../docs_src/a/t1.py hl[3] ln[1:10,12:14] *}', false), {
      kind: 'include',
      target: { file: '../../docs_src/a/t1.py', options: { lines: '1-10,12-14' }, scope: 'nearest' },
      indent: '',
    });
    assert.deepEqual(parseDirective('<!--@include: ./parts/basics.md-->', false), { kind: 'include', target: { file: './parts/basics.md', options: {}, scope: 'nearest' }, indent: '' });
    assert.deepEqual(parseDirective('<!-- @include: ./parts/basics.md{3,} -->', false), { kind: 'include', target: { file: './parts/basics.md', options: { lines: '3-' }, scope: 'nearest' }, indent: '' });
    assert.deepEqual(parseDirective('<!--@include: ./a.md{,10}-->', false), { kind: 'include', target: { file: './a.md', options: { lines: '1-10' }, scope: 'nearest' }, indent: '' });
    assert.deepEqual(parseDirective('<!--@include: @/parts/a.md#setup-->', false), { kind: 'include', target: { file: '/parts/a.md', options: { section: 'setup' }, scope: 'site' }, indent: '' });
    assert.deepEqual(parseDirective('!include-code ../snippets/config.yaml', false), { kind: 'include', target: { file: '../snippets/config.yaml', options: {}, scope: 'nearest' }, indent: '' });
    assert.deepEqual(parseDirective('{! docs/partial.md !}', false), { kind: 'include', target: { file: 'docs/partial.md', options: {}, scope: 'nearest' }, indent: '' });
  });

  test('findIncludeTargets skips fenced Hugo examples and reads rst/AsciiDoc directives', () => {
    const md = lines('{{% include "/_common/a.md" %}}', '```md', '{{% include "/_common/example.md" %}}', '--8<-- "code.py"', '```', '--8<--', 'one.md', 'two.md', '--8<--');
    assert.deepEqual(findIncludeTargets(md, 'markdown').map((t) => t.file), ['/_common/a.md', 'code.py', 'one.md', 'two.md']);
    assert.deepEqual(findIncludeTargets('.. literalinclude:: ../src/x.py\n   :lines: 2-\n', 'rst').map((t) => t.file), ['../src/x.py']);
    assert.deepEqual(findIncludeTargets('include::example$a.java[tag=x]\n', 'asciidoc').map((t) => t.file), ['example$a.java']);
    assert.deepEqual(findIncludeTargets('{{% include "/_common/a.md" %}}', 'text'), []);
  });

  test('selectLines: ranges, open ranges, mkdocs/AsciiDoc/VitePress sections, rst start-after/end-before', () => {
    assert.deepEqual(selectLines('a\nb\nc\nd\n', { lines: '2-3' }), ['b', 'c']);
    assert.deepEqual(selectLines('a\nb\nc\nd\n', { lines: '3-' }), ['c', 'd']);
    assert.deepEqual(selectLines('a\n# start\nb\n# end\nc', { 'start-after': '# start', 'end-before': '# end' }), ['b']);
    assert.deepEqual(selectLines('x\n// #region setup\nconst a = 1;\n// #endregion setup\ny', { section: 'setup' }), ['const a = 1;']);
    assert.deepEqual(selectLines('x\n# tag::main[]\nmain()\n# end::main[]\n', { tag: 'main' }), ['main()']);
    // A section name is text, not a pattern.
    assert.deepEqual(selectLines('a\n--8<-- [start:a.b]\nkept\n--8<-- [end:a.b]\n--8<-- [start:axb]\nnot\n', { section: 'a.b' }), ['kept']);
  });
});

describe('expanding includes with a line map to the original file', () => {
  const files = {
    'content/en/_common/glob-patterns.md': lines('---', '_comment: Do not remove front matter.', '---', '', 'Path|Pattern|Match', ':--|:--|:--', '`a.jpg`|`*.jpg`|`true`', ''),
    'content/en/functions/Match.md': '',
    'docs_src/app.py': 'from fastapi import FastAPI\n\napp = FastAPI()\n',
  };
  const page = lines(
    '# resources.Match', // 1
    '', // 2
    'Hugo determines a match using a glob pattern.', // 3
    '', // 4
    '{{% include "/_common/glob-patterns.md" %}}', // 5
    '', // 6
    '## Example', // 7
    '', // 8
    '{* ../docs_src/app.py ln[3:3] *}', // 9
    '', // 10
    'The end.', // 11
  );

  test('included lines map to the directive line, the lines after it to their own lines; front matter is left out', () => {
    const out = expandMarkdownIncludes('content/en/functions/Match.md', page, tree(files));
    assert.deepEqual(out.problems, []);
    assert.deepEqual(out.used, ['content/en/_common/glob-patterns.md', 'docs_src/app.py']);
    assert.equal(
      out.content,
      lines('# resources.Match', '', 'Hugo determines a match using a glob pattern.', '', '', 'Path|Pattern|Match', ':--|:--|:--', '`a.jpg`|`*.jpg`|`true`', '', '## Example', '', '```python', 'app = FastAPI()', '```', '', 'The end.'),
    );
    assert.deepEqual(out.lineMap, [1, 2, 3, 4, 5, 5, 5, 5, 6, 7, 8, 9, 9, 9, 10, 11]);
    assert.deepEqual(lineMapProblems(out.lineMap, out.content), []);
  });

  test('a page without directives (or with only unresolved ones) has no line map and is unchanged', () => {
    const plain = expandMarkdownIncludes('a.md', '# A\n\ntext\n', tree(files));
    assert.deepEqual(plain, { content: '# A\n\ntext\n', used: [], problems: [] });
    const missing = expandMarkdownIncludes('content/en/a.md', '# A\n\n{{% include "/_common/nope.md" %}}\n', tree(files));
    assert.equal(missing.content, '# A\n\n{{% include "/_common/nope.md" %}}\n', 'a missing target is left as written');
    assert.equal(missing.lineMap, undefined);
    assert.deepEqual(missing.problems, ['"/_common/nope.md" is not a file of the upload']);
  });

  test('mkdocs block form and snippets inside a fence (raw lines, indented like the directive)', () => {
    const f = { 'one.md': 'One.\n', 'two.py': 'print(2)\n', 'cfg.yaml': '# --8<-- [start:core]\nlevel: 3\n# --8<-- [end:core]\n' };
    const doc = lines('--8<--', 'one.md', 'two.py', '--8<--', '- item', '  ```yaml', '  --8<-- "cfg.yaml:core"', '  ```');
    const out = expandMarkdownIncludes('index.md', doc, tree(f));
    assert.deepEqual(out.problems, []);
    assert.equal(out.content, lines('One.', '```python', 'print(2)', '```', '- item', '  ```yaml', '  level: 3', '  ```'));
    assert.deepEqual(out.lineMap, [2, 3, 3, 3, 5, 6, 7, 8]);
  });

  test('nested includes expand, each included line mapping to the outermost directive', () => {
    const f = { 'content/en/_common/outer.md': 'Outer.\n\n{{% include "/_common/inner.md" %}}\n', 'content/en/_common/inner.md': '---\n---\nInner.\n' };
    const out = expandMarkdownIncludes('content/en/page.md', 'Top.\n{{< include "_common/outer.md" >}}\nBottom.', tree(f));
    assert.deepEqual(out.problems, []);
    assert.equal(out.content, 'Top.\nOuter.\n\nInner.\nBottom.');
    assert.deepEqual(out.lineMap, [1, 2, 2, 2, 3]);
    assert.deepEqual(out.used, ['content/en/_common/inner.md', 'content/en/_common/outer.md']);
  });

  test('a cycle is cut where it closes; maxDepth bounds nesting (1: only the page’s own directives)', () => {
    const f = { 'a.md': 'A.\n!include b.md\n', 'b.md': 'B.\n!include a.md\n' };
    const out = expandMarkdownIncludes('a.md', 'Start.\n!include b.md', tree(f));
    assert.equal(out.content, 'Start.\nB.\n!include a.md');
    assert.deepEqual(out.problems, ['"a.md" is not included again: a.md -> b.md -> a.md is a cycle']);

    const g = { 'x.md': 'X.\n!include y.md\n', 'y.md': 'Y.\n' };
    assert.equal(expandMarkdownIncludes('p.md', '!include x.md', tree(g), { maxDepth: 5, maxChars: 1e6 }).content, 'X.\nY.');
    const shallow = expandMarkdownIncludes('p.md', '!include x.md', tree(g), { maxDepth: 1, maxChars: 1e6 });
    assert.equal(shallow.content, 'X.\n!include y.md');
    assert.deepEqual(shallow.problems, ['"y.md" is not included: includes nest at most 1 deep']);
    const none = expandMarkdownIncludes('p.md', '!include x.md', tree(g), { maxDepth: 0, maxChars: 1e6 });
    assert.equal(none.content, '!include x.md');
  });

  test('maxChars caps how much a page can grow: past it directives stay as written', () => {
    const f = { 'big.md': 'word '.repeat(100) };
    const doc = '!include big.md\n!include big.md\n!include big.md';
    const capped = expandMarkdownIncludes('p.md', doc, tree(f), { maxDepth: 5, maxChars: doc.length + 1100 });
    assert.equal(capped.content.split('\n').filter((l) => l.startsWith('word')).length, 2);
    assert.equal(capped.content.split('\n').at(-1), '!include big.md');
    assert.deepEqual(capped.problems, ['"big.md" is not included: the page would grow past ' + (doc.length + 1100) + ' characters']);
  });

  test('includeWarning: one line, each problem once, at most five named', () => {
    const problems = ['"a" x', '"a" x', '"b" x', '"c" x', '"d" x', '"e" x', '"f" x'];
    assert.equal(includeWarning('p.md', problems), 'p.md: 7 include directives were left as written: "a" x; "b" x; "c" x; "d" x; "e" x; and 1 more');
  });

  test('gatherIncludes reads one batch per nesting level, never the same path twice', async () => {
    const disk: Record<string, string> = { 'content/en/_common/outer.md': '{{% include "/_common/inner.md" %}}\n{{% include "/_common/gone.md" %}}', 'content/en/_common/inner.md': 'Inner.', 'content/en/_common/gone.md': '' };
    const loaded = new Map<string, string>();
    const files: IncludeFiles = { root: 'upload', exists: (p) => p in disk, text: (p) => loaded.get(p) };
    const calls: string[][] = [];
    const pages = [
      { path: 'content/en/a.md', format: 'markdown', text: '{{% include "/_common/outer.md" %}}' },
      { path: 'content/en/b.md', format: 'markdown', text: '{{% include "/_common/outer.md" %}}' },
    ];
    await gatherIncludes(pages, files, async (paths) => {
      calls.push(paths);
      for (const p of paths) if (p !== 'content/en/_common/gone.md') loaded.set(p, disk[p]);
    });
    assert.deepEqual(calls, [['content/en/_common/outer.md'], ['content/en/_common/gone.md', 'content/en/_common/inner.md']]);
    const out = expandMarkdownIncludes('content/en/a.md', pages[0].text, files);
    assert.equal(out.content, 'Inner.\n{{% include "/_common/gone.md" %}}');
    assert.deepEqual(out.problems, ['"content/en/_common/gone.md" could not be read']);
  });
});

describe('the markdown chunker reports lines through the line map', () => {
  const chunker = new MarkdownChunker({ maxInfoTokens: 400, maxDescriptionChars: 600 });
  const files = {
    'content/en/_common/options.md': lines('---', '---', '', 'The options are `alpha` and `beta`.', '', '```toml', 'alpha = true', '```', ''),
  };
  const page = lines(
    '# Config', // 1
    '', // 2
    'Intro text.', // 3
    '', // 4
    '## Options', // 5
    '', // 6
    '{{% include "/_common/options.md" %}}', // 7
    '', // 8
    '## Later', // 9
    '', // 10
    'Later text.', // 11
  );

  test('snippets of included text cite the directive line; a section holding it spans its own lines', () => {
    const out = expandMarkdownIncludes('content/en/config.md', page, tree(files));
    const snippets = chunker.chunk({ path: 'content/en/config.md', format: 'markdown', content: out.content, lineMap: out.lineMap! });
    const code = snippets.find((s) => s.type === 'code')!;
    assert.equal(code.code, 'alpha = true');
    assert.deepEqual([code.lineStart, code.lineEnd], [7, 7]);
    const options = snippets.find((s) => s.type === 'info' && s.title === 'Options')!;
    assert.match(options.content, /The options are `alpha` and `beta`/);
    assert.deepEqual([options.lineStart, options.lineEnd], [5, 8]);
    const later = snippets.find((s) => s.title === 'Later')!;
    assert.deepEqual([later.lineStart, later.lineEnd], [9, 11]);
    for (const s of snippets) assert.ok(s.lineEnd <= 11, `${s.title} ends past the file: ${s.lineEnd}`);
  });

  test('without the line map the same content reports the expanded lines', () => {
    const out = expandMarkdownIncludes('content/en/config.md', page, tree(files));
    const snippets = chunker.chunk({ path: 'content/en/config.md', format: 'markdown', content: out.content });
    const later = snippets.find((s) => s.title === 'Later')!;
    assert.ok(later.lineStart > 9, `expanded lines: ${later.lineStart}`);
  });
});
