import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { MarkdownChunker } from '../../../plugins/chunker-markdown/markdown-chunker.ts';
import { readPageWords } from '../../../core/search/page-words.ts';
import { capNesting, MAX_CONTAINERS, MAX_INDENT, preprocess } from '../../../plugins/chunker-markdown/preprocess.ts';
import type { DocumentFormat, Snippet } from '../../../core/contracts.ts';
import { CORPORA_DIR, corpora, corpusFile, hasCorpora } from '../../helpers/corpora.ts';

const chunker = new MarkdownChunker({ maxInfoTokens: 400, maxDescriptionChars: 600 });
const formatOf = (p: string): DocumentFormat => (p.endsWith('.mdx') ? 'mdx' : p.endsWith('.txt') ? 'text' : 'markdown');
const chunkCorpus = (corpus: string, path: string) => chunker.chunk({ path, format: formatOf(path), content: corpusFile(corpus, path) });
const skip = hasCorpora ? false : 'shared corpora not present';

/** Block quote and list markers opening a line. */
function countMarkers(line: string): number {
  let n = 0;
  for (let m = line.match(/^[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))/); m; m = line.match(/^[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))/)) {
    n++;
    line = line.slice(m[0].length);
  }
  return n;
}

function linesOf(text: string, from: number, to: number): string {
  return text.replace(/\r\n?/g, '\n').split('\n').slice(from - 1, to).join('\n');
}

describe('chunker-markdown on plain markdown', () => {
  test('splits by heading hierarchy with breadcrumbs, line ranges and anchors', () => {
    const md = ['# Guide', '', 'Intro text.', '', '## Install { #setup }', '', 'Run this:', '', '```sh', 'npm i x', '```', '', '### Deep', '', 'More.', ''].join('\n');
    const sn = chunker.chunk({ path: 'docs/guide.md', format: 'markdown', content: md, url: 'https://x.dev/guide' });
    const code = sn.filter((s) => s.type === 'code');
    assert.equal(code.length, 1);
    assert.deepEqual(code[0].breadcrumb, ['Guide', 'Install']);
    assert.equal(code[0].language, 'bash');
    assert.equal(code[0].code, 'npm i x');
    assert.equal(code[0].description, 'Run this:');
    assert.deepEqual([code[0].lineStart, code[0].lineEnd], [9, 11]);
    assert.equal(code[0].anchor, 'setup');
    assert.equal(code[0].sourceUrl, 'https://x.dev/guide#setup');
    const deep = sn.find((s) => s.type === 'info' && s.title === 'Deep')!;
    assert.deepEqual(deep.breadcrumb, ['Guide', 'Install', 'Deep']);
    assert.deepEqual([deep.lineStart, deep.lineEnd], [13, 15]);
    const install = sn.find((s) => s.type === 'info' && s.title === 'Install')!;
    assert.equal(install.lineStart, 5);
    assert.ok(!install.content.includes('{ #setup }'));
  });

  test('a fence is never split, even when it holds headings and blank lines', () => {
    const body = Array.from({ length: 300 }, (_, i) => (i % 50 === 0 ? '# not a heading' : `line ${i}`)).join('\n');
    const md = `# T\n\nText.\n\n\`\`\`python\n${body}\n\`\`\`\n`;
    const sn = chunker.chunk({ path: 'a.md', format: 'markdown', content: md });
    const code = sn.filter((s) => s.type === 'code');
    assert.equal(code.length, 1);
    assert.equal(code[0].code, body);
    assert.equal(sn.filter((s) => s.title === 'not a heading').length, 0);
  });

  test('long prose is split between blocks into several info snippets with their own ranges', () => {
    const paras = Array.from({ length: 12 }, (_, i) => `Paragraph ${i} ` + 'word '.repeat(120)).join('\n\n');
    const sn = chunker.chunk({ path: 'a.md', format: 'markdown', content: `# Big\n\n${paras}\n` });
    const info = sn.filter((s) => s.type === 'info');
    assert.ok(info.length >= 3, `expected a split, got ${info.length}`);
    for (let i = 1; i < info.length; i++) assert.ok(info[i].lineStart > info[i - 1].lineStart);
    const all = info.map((s) => s.content).join('\n\n');
    for (let i = 0; i < 12; i++) assert.ok(all.includes(`Paragraph ${i} `));
  });

  test('code inside a block quote becomes a code snippet described by the note, the note kept once as prose', () => {
    const md = [
      '# Start',
      '',
      '> If you use ESM, set the module type',
      '> in your package.json:',
      '>```json',
      '>{ "type": "module" }',
      '>```',
      '>',
      '> Restart the server afterwards.',
      '',
      'Plain text after.',
      '',
    ].join('\n');
    const sn = chunker.chunk({ path: 'start.md', format: 'markdown', content: md });
    const code = sn.filter((s) => s.type === 'code');
    assert.deepEqual(
      code.map((s) => [s.code, s.language, s.description, s.lineStart, s.lineEnd]),
      [['{ "type": "module" }', 'json', 'If you use ESM, set the module type in your package.json:', 5, 7]],
    );
    const prose = sn
      .filter((s) => s.type === 'info')
      .map((s) => s.content)
      .join('\n');
    assert.ok(!prose.includes('"module" }'), 'the code is not left in the prose');
    for (const words of ['set the module type', 'Restart the server afterwards.', 'Plain text after.'])
      assert.equal(prose.split(words).length - 1, 1, `${words} kept once`);
  });

  test('code inside list items (the steps of a guide) becomes code snippets, each with its step as description', () => {
    const md = [
      '# Setup',
      '',
      '1. In your config, enable the manifest:',
      '',
      '   ```js',
      '   export default { build: { manifest: true } }',
      '   ```',
      '',
      '   Then restart the server.',
      '',
      '2. Inject the client script:',
      '',
      '   ```html',
      '   <script type="module" src="/@vite/client"></script>',
      '   ```',
      '',
    ].join('\n');
    const sn = chunker.chunk({ path: 'guide.md', format: 'markdown', content: md });
    const code = sn.filter((s) => s.type === 'code');
    assert.deepEqual(
      code.map((s) => [s.code, s.description, s.lineStart, s.lineEnd]),
      [
        ['export default { build: { manifest: true } }', 'In your config, enable the manifest:', 5, 7],
        ['<script type="module" src="/@vite/client"></script>', 'Inject the client script:', 13, 15],
      ],
    );
    assert.equal(code[0].title, 'Setup - In your config, enable the manifest');
    const info = sn.filter((s) => s.type === 'info');
    assert.equal(info.length, 1);
    // The steps' text stays (with its numbering), the code is not repeated in the prose.
    assert.match(info[0].content, /^1\. In your config, enable the manifest:\n\nThen restart the server\.\n\n2\. Inject the client script:$/);
    assert.ok(!info[0].content.includes('```'));

    // An item made of code alone leaves no bare marker behind in the prose.
    const bare = chunker.chunk({ path: 'b.md', format: 'markdown', content: '# B\n\nSteps:\n\n- ```sh\n  npm i x\n  ```\n- Then run it.\n' });
    assert.deepEqual(bare.filter((s) => s.type === 'code').map((s) => s.code), ['npm i x']);
    assert.equal(bare.find((s) => s.type === 'info')!.content, 'Steps:\n\n- Then run it.');
  });

  test('a list or table bigger than an info snippet is cut between items or rows; a table part repeats the header', () => {
    const items = Array.from({ length: 40 }, (_, i) => `- item ${i}: ` + 'word '.repeat(40)).join('\n');
    const rows = Array.from({ length: 60 }, (_, i) => `| opt${i}      | \`string\`      | ${'text '.repeat(20)} |`).join('\n');
    const md = `# Ref\n\n${items}\n\n## Config\n\n| Property      | Type      | Description |\n|---------------|-----------|-------------|\n${rows}\n`;
    const sn = chunker.chunk({ path: 'ref.md', format: 'markdown', content: md });
    const list = sn.filter((s) => s.title === 'Ref');
    assert.ok(list.length >= 3, `list split, got ${list.length}`);
    assert.ok(list.every((s) => s.tokens <= 450));
    assert.equal(list.map((s) => s.content).join('\n'), items.replace(/ +$/gm, ''));
    const table = sn.filter((s) => s.title === 'Config');
    assert.ok(table.length >= 3, `table split, got ${table.length}`);
    for (const part of table) {
      assert.ok(part.tokens <= 450);
      assert.match(part.content, /^\| Property \| Type \| Description \|\n\|---\|---\|---\|\n\| opt\d+ \|/);
    }
    const lines = md.split('\n');
    const second = table[1];
    assert.match(lines[second.lineStart - 1], /^\| opt\d+ /, 'a later part starts at its first row');
    for (let i = 0; i < 60; i++) assert.equal(table.filter((s) => s.content.includes(`| opt${i} |`)).length, 1);
  });

  test('one list item too big alone is opened up: its nested list cut between items, each part after the item\'s lead', () => {
    const nested = Array.from({ length: 30 }, (_, i) => `  * \`opt${i}\`: ` + 'word '.repeat(40).trim()).join('\n');
    const md = `# Api\n\n#### Parameters\n\n* \`root\`: the node.\n* **optional** \`options\`: An object with streaming options.\n${nested}\n\nAfter.\n`;
    const sn = chunker.chunk({ path: 'api.md', format: 'markdown', content: md }).filter((s) => s.title === 'Parameters');
    assert.ok(sn.length >= 3, `split, got ${sn.length}`);
    assert.ok(sn.every((s) => s.tokens <= 450), sn.map((s) => s.tokens).join(' '));
    const parts = sn.filter((s) => /opt\d+/.test(s.content));
    for (const part of parts) assert.match(part.content, /(^|\n)\* \*\*optional\*\* `options`: An object with streaming options\.\n\* `opt\d+`: word/);
    for (let i = 0; i < 30; i++) assert.equal(parts.filter((s) => s.content.includes(`\`opt${i}\`:`)).length, 1, `opt${i} once`);
    const lines = md.split('\n');
    assert.match(lines[parts[1].lineStart - 1], /^ {2}\* `opt\d+`/, 'a later part starts at its first option');
    assert.ok(sn.some((s) => s.content.includes('`root`: the node.')));
  });

  test('a code block with no prose before it is not described by a table after it', () => {
    const md = '# T\n\nIntro para.\n\n```js\nx()\n```\n\n```js\ny()\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n';
    const code = chunker.chunk({ path: 't.md', format: 'markdown', content: md }).filter((s) => s.type === 'code');
    assert.deepEqual(
      code.map((s) => [s.code, s.description]),
      [
        ['x()', 'Intro para.'],
        // The table after y() is not its explanation: the section's first prose is.
        ['y()', 'Intro para.'],
      ],
    );
  });

  test("a page's own table of contents (a list of links to its headings) is dropped; other link lists stay", () => {
    const md = [
      '# Errors',
      '',
      '**Table of contents**',
      '',
      '- [Errors](#errors)',
      '  - [Handling](#handling)',
      '  - [Codes](#codes)',
      '- [Hooks](#hooks)',
      '',
      'See also:',
      '',
      '- [Hooks](./hooks.md)',
      '- [Routes](./routes.md)',
      '- [Server](./server.md)',
      '',
      '- [Intro](#intro) explains the basics',
      '- [Handling](#handling) shows more',
      '- [Codes](#codes) lists them',
      '',
    ].join('\n');
    const [info] = chunker.chunk({ path: 'errors.md', format: 'markdown', content: md });
    assert.ok(!info.content.includes('[Errors](#errors)'));
    assert.ok(!info.content.includes('- [Hooks](#hooks)'));
    assert.ok(info.content.includes('**Table of contents**'));
    assert.ok(info.content.includes('- [Routes](./routes.md)'), 'links to other pages are content');
    assert.ok(info.content.includes('- [Intro](#intro) explains the basics'), 'items with text of their own are content');
  });

  test('reference links are written inline when the page defines them; lines and other text unchanged', () => {
    const md = [
      '# Highlight',
      '',
      'Uses the [`where`][] function, the [language][lang] and the',
      '[Options] of the [project configuration][].',
      '',
      '![diagram][lang] and `[x][lang]` and [undefined][] stay.',
      '',
      '```sh',
      '[lang]',
      '```',
      '',
      'The [source code] is elsewhere.',
      '',
      '[lang]: /content/syntax/#languages',
      '[`where`]: /functions/collections/where/',
      '[options]: #options',
      '[source code]: <{{% eturl x %}}>',
      '',
    ].join('\n');
    const sn = chunker.chunk({ path: 'highlight.md', format: 'markdown', content: md });
    const info = sn.filter((s) => s.type === 'info').map((s) => s.content).join('\n\n');
    assert.ok(info.includes('[`where`](/functions/collections/where/) function'), info);
    assert.ok(info.includes('the [language](/content/syntax/#languages) and the\n[Options](#options) of the [project configuration][].'), info);
    assert.ok(info.includes('![diagram][lang] and `[x][lang]` and [undefined][] stay.'), 'images, code spans and undefined labels are left');
    assert.ok(info.includes('The [source code] is elsewhere.'), 'a URL with blanks (a template) is left');
    const code = sn.find((s) => s.type === 'code')!;
    assert.equal(code.code, '[lang]');
    assert.deepEqual([code.lineStart, code.lineEnd], [8, 10]);
  });

  test('nesting deeper than MAX_INDENT / MAX_CONTAINERS is flattened, every item kept, lines unchanged', () => {
    const depth = 400;
    const list = ['# Deep', '', ...Array.from({ length: depth }, (_, i) => '  '.repeat(i) + `- item${i}`)].join('\n');
    const quote = ['# Deep', '', ...Array.from({ length: depth }, (_, i) => '>'.repeat(i + 1) + ` quote${i}`)].join('\n');
    const oneLine = ['# Deep', '', '- '.repeat(depth) + 'bottom'].join('\n');
    for (const [name, md] of [['list', list], ['quote', quote], ['markers on one line', oneLine]] as const) {
      const cleaned = preprocess(md, 'markdown').text.split('\n');
      assert.equal(cleaned.length, md.split('\n').length, name);
      for (const line of cleaned) {
        assert.ok(line.match(/^[ \t]*/)![0].length <= MAX_INDENT, `${name}: indentation capped`);
        assert.ok(countMarkers(line) <= MAX_CONTAINERS, `${name}: markers capped`);
      }
      const text = chunker
        .chunk({ path: 'deep.md', format: 'markdown', content: md })
        .map((s) => s.content)
        .join('\n');
      const words = md.match(/(item|quote)\d+|bottom/g)!;
      for (const w of words) assert.ok(new RegExp(`\\b${w}\\b`).test(text), `${name}: ${w} kept`);
    }
    // Real nesting is left alone.
    assert.equal(capNesting('        - item'), '        - item');
    assert.equal(capNesting('> > - quoted item'), '> > - quoted item');
  });

  test('an inline image given as a data URI keeps its alt text, not its base64', () => {
    const md = `# Hash\n\nTree mode: ![Explanation of tree mode](data:image/png;base64,${'iVBORw0KGgo'.repeat(500)}) as shown.\n`;
    const [info] = chunker.chunk({ path: 'h.md', format: 'markdown', content: md });
    assert.equal(info.content, 'Tree mode: [image: Explanation of tree mode] as shown.');
  });

  test('empty and heading-less documents do not throw', () => {
    assert.deepEqual(chunker.chunk({ path: 'e.md', format: 'markdown', content: '' }), []);
    const sn = chunker.chunk({ path: 'notes.txt', format: 'text', content: 'just some words\n' });
    assert.equal(sn.length, 1);
    assert.equal(sn[0].pageTitle, 'notes');
  });
});

describe('chunker-markdown front matter', () => {
  test("the page's search words (keywords, tags, aliases at any depth, short titles; a URL alias as its path words) and its summary ride on its first info snippet's description", () => {
    const md = [
      '---',
      'title: css.Sass',
      'description: Transpiles Sass to CSS.',
      'linkTitle: Sass',
      'keywords: [scss, stylesheet]',
      'tags: styling',
      'params:',
      '  functions_and_methods:',
      '    aliases: [toCSS]',
      'aliases: [/functions/resources/tocss/, /functions/resources/tocss/]',
      'weight: 10',
      '---',
      '',
      'Transpile Sass to CSS.',
      '',
      '## Options',
      '',
      'Some options.',
      '',
    ].join('\n');
    const sn = chunker.chunk({ path: 'content/functions/css/Sass.md', format: 'markdown', content: md });
    const info = sn.filter((s) => s.type === 'info');
    const { words, summary } = readPageWords(info[0].description);
    assert.equal(words.trim().split('\n').sort().join('|'), ['Sass', 'functions resources tocss', 'scss', 'stylesheet', 'styling', 'toCSS'].sort().join('|'));
    // The front matter's description rides after them, as the page's summary (page-level ranking only).
    assert.equal(summary, 'Transpiles Sass to CSS.');
    // Only the first info snippet carries them, and the prose the reader gets is unchanged.
    assert.equal(info[1].description, '');
    assert.ok(!info[0].content.includes('tocss') && !info[0].content.includes('scss'));
    assert.match(info[0].content, /^Transpiles Sass to CSS\./);
  });

  test('a summary alone rides too; a page without such keys gets no search words', () => {
    const sn = chunker.chunk({ path: 'a.md', format: 'markdown', content: '---\ntitle: A\ndescription: About A.\n---\n\nText.\n' });
    assert.deepEqual(readPageWords(sn[0].description), { words: '', summary: 'About A.' });
  });

  test('a page without such keys gets no search words', () => {
    const sn = chunker.chunk({ path: 'a.md', format: 'markdown', content: '---\ntitle: A\nweight: 3\n---\n\nText.\n' });
    assert.deepEqual(sn.map((s) => s.description), ['']);
  });
});

describe('chunker-markdown on the shared corpora', { skip }, () => {
  test('MDX: imports and JSX components are dropped, fences inside <Tabs> become code snippets', () => {
    const path = 'packages/docs/content/basics.mdx';
    const text = corpusFile('zod', path);
    const sn = chunkCorpus('zod', path);
    assert.equal(sn[0].pageTitle, 'Basic usage'); // from front matter
    for (const s of sn) {
      assert.ok(!/^import .* from /m.test(s.content), 'no ESM import in prose');
      assert.ok(!/<\/?Tabs?\b/.test(s.content + s.code), 'no JSX tags');
    }
    const code = sn.filter((s) => s.type === 'code');
    const player = code.find((s) => s.code.includes('const Player = z.object'));
    assert.ok(player);
    assert.equal(player.language, 'typescript');
    assert.deepEqual(player.breadcrumb, ['Basic usage', 'Defining a schema']);
    // Its line range is exactly the fence in the original file.
    assert.match(linesOf(text, player.lineStart, player.lineStart), /^```ts/);
    assert.match(linesOf(text, player.lineEnd, player.lineEnd), /^```\s*$/);
  });

  test('FastAPI: heading ids become anchors, unresolvable {* include *} lines are dropped', () => {
    const sn = chunkCorpus('fastapi', 'docs/en/docs/tutorial/query-params.md');
    assert.equal(sn[0].pageTitle, 'Query Parameters');
    const defaults = sn.find((s) => s.title === 'Defaults');
    assert.ok(defaults);
    assert.equal(defaults.anchor, 'defaults');
    for (const s of sn) {
      assert.ok(!s.content.includes('{*') && !s.content.includes('docs_src'), 'include directive leaked');
      assert.ok(!s.breadcrumb.join(' ').includes('{ #'), 'heading id leaked into breadcrumb');
      assert.ok(!/^\/\/\/\s*(tip|note|info)/m.test(s.content), 'pymdown block marker leaked');
    }
  });

  test('Hugo: front matter title and description, highlight shortcodes become code, others vanish', () => {
    const sn = chunkCorpus('hugo', 'content/en/functions/strings/Replace.md');
    assert.equal(sn[0].pageTitle, 'strings.Replace');
    const info = sn.find((s) => s.type === 'info')!;
    assert.match(info.content, /Returns a copy of INPUT/);
    assert.match(info.content, /strings\.Replace INPUT OLD NEW/);
    const code = sn.filter((s) => s.type === 'code');
    assert.equal(code.length, 2);
    assert.equal(code[0].language, 'go-html-template');

    // A page using {{< highlight >}} and {{% include %}} shortcodes.
    const hl = chunkCorpus('hugo', 'content/en/functions/transform/Highlight.md');
    for (const s of hl) assert.ok(!/^\s*\{\{[<%]\s*(include|\/?highlight)\b/m.test(s.content), 'shortcode leaked into prose');
  });

  test('Python reference text: signatures become sections of their own, titled with the qualified name', () => {
    const path = 'preprocessor/devdocs/plain/python~3.9/library/asyncio-task.txt';
    const sn = chunkCorpus('python', path);
    const gather = sn.find((s) => s.type === 'info' && s.title === 'asyncio.gather');
    assert.ok(gather, 'gather signature section');
    assert.deepEqual(gather.breadcrumb, ['Coroutines and Tasks', 'Running Tasks Concurrently', 'asyncio.gather']);
    assert.match(gather.content, /Run awaitable objects in the aws sequence concurrently/);
    const entry = sn.find((s) => s.type === 'code' && s.title === 'asyncio.gather');
    assert.ok(entry, 'the entry snippet');
    assert.match(entry.code, /^awaitable asyncio\.gather\(\*aws, loop=None, return_exceptions=False\)$/);
    assert.match(entry.description, /^Run awaitable objects in the aws sequence concurrently\./);
    assert.ok(sn.some((s) => s.type === 'code' && s.language === 'python' && s.code.includes('asyncio.run(main())')));
  });

  test('React: {/*id*/} heading ids and JSX components', () => {
    const sn = chunkCorpus('react', 'src/content/reference/react/useState.md');
    assert.ok(sn.some((s) => s.anchor === 'usestate' && s.title === 'useState(initialState)'));
    for (const s of sn) assert.ok(!s.title.includes('{/'), `heading id leaked: ${s.title}`);
  });

  test('VitePress: ::: containers leave their content and drop their markers', () => {
    const all = corpora().find((c) => c.name === 'vitest')!;
    const dir = join(CORPORA_DIR, all.name);
    const files = walk(dir).filter((f) => f.endsWith('.md'));
    let checked = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      if (!/^::: (tip|warning)/m.test(text)) continue;
      for (const s of chunker.chunk({ path: relative(dir, f), format: 'markdown', content: text })) {
        assert.ok(!/^:::/m.test(s.content), `container marker leaked in ${f}`);
      }
      checked++;
    }
    assert.ok(checked > 10);
  });

  test('every corpus file: code snippets equal their fence lines, ranges are in the file', () => {
    let files = 0;
    let snippets = 0;
    for (const c of corpora()) {
      const dir = join(CORPORA_DIR, c.name);
      for (const f of walk(dir)) {
        if (!/\.(md|mdx|txt)$/.test(f)) continue;
        const path = relative(dir, f);
        const text = readFileSync(f, 'utf8');
        const nLines = text.replace(/\r\n?/g, '\n').split('\n').length;
        const sn: Snippet[] = chunker.chunk({ path, format: formatOf(path), content: text });
        files++;
        snippets += sn.length;
        for (const s of sn) {
          assert.equal(s.sourcePath, path);
          assert.ok(s.lineStart >= 1 && s.lineStart <= s.lineEnd && s.lineEnd <= nLines, `${c.name}/${path}: bad range ${s.lineStart}-${s.lineEnd}`);
          assert.ok(s.breadcrumb.length >= 1 && s.pageTitle);
          assert.ok(s.tokens > 0);
          if (s.type === 'code') {
            const fenced = linesOf(text, s.lineStart, s.lineEnd);
            assert.ok(fenced.includes(s.code.split('\n')[0].trim()), `${c.name}/${path}:${s.lineStart}: code not from its lines`);
            assert.ok(fenced.includes(s.code.split('\n').at(-1)!.trim()), `${c.name}/${path}:${s.lineEnd}: code cut short`);
          }
        }
      }
    }
    assert.ok(files > 2000, `only ${files} files`);
    assert.ok(snippets > 20000);
  });
});

function walk(d: string): string[] {
  return readdirSync(d).flatMap((n) => {
    const p = join(d, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}
