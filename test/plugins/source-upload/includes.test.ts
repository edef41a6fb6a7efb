import assert from 'node:assert/strict';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SourceDocument, StoredSnippet } from '../../../core/contracts.ts';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import type { Kernel } from '../../../core/kernel.ts';
import { runSource } from '../../../core/testing/index.ts';
import { UploadSource } from '../../../plugins/source-upload/upload-source.ts';
import { buildTarGz, buildZip } from './archive-builders.ts';
import { tempDir, writeTree } from './helpers.ts';
import { BASE_PLUGINS, openTestKernel, type TestKernel } from '../../helpers/test-kernel.ts';

const lines = (...ls: string[]) => ls.join('\n');

/** A Hugo-style site: pages under content/en/ include fragments of content/en/_common/. */
const GLOB_TABLE = lines('Path|Pattern|Match', ':--|:--|:--', '`images/a.jpg`|`images/*.jpg`|`true`', '`images/a.jpg`|`*.jpg`|`false`');
const SITE: Record<string, string> = {
  'content/en/_common/_index.md': lines('---', 'cascade:', '  build:', '    render: never', '---', ''),
  'content/en/_common/glob-patterns.md': lines('---', '_comment: Do not remove front matter.', '---', '', GLOB_TABLE, ''),
  'content/en/functions/resources/Match.md': lines(
    '---', //  1
    'title: resources.Match', //  2
    '---', //  3
    '', //  4
    'Returns the global resources matching a glob pattern.', //  5
    '', //  6
    '## Patterns', //  7
    '', //  8
    '{{% include "/_common/glob-patterns.md" %}}', //  9
    '', // 10
    '## Example', // 11
    '', // 12
    '```go-html-template', // 13
    '{{ range resources.Match "images/*.jpg" }}{{ end }}', // 14
    '```', // 15
    '', // 16
  ),
  'content/en/methods/page/Resources.md': lines(
    '---', // 1
    'title: Resources', // 2
    '---', // 3
    '', // 4
    '## Match', // 5
    '', // 6
    '{{< include "_common/glob-patterns" >}}', // 7
    '', // 8
    '{{% include "/_common/missing-fragment.md" %}}', // 9
    '', // 10
  ),
};

describe('an uploaded Hugo site through the kernel: stored snippets hold the included text and cite the original lines', () => {
  let dir: string;
  let tk: TestKernel;
  let kernel: Kernel;
  let site: string;

  before(async () => {
    tk = await openTestKernel({ prefix: 'refdesk-upload-includes-', plugins: [...BASE_PLUGINS, 'plugins/source-upload'] });
    ({ dir, kernel } = tk);
    site = join(dir, 'site');
    await writeTree(site, SITE);
  });
  after(() => tk?.close());

  const ingest = async (): Promise<{ snippets: StoredSnippet[]; log: string[] }> => {
    const { job } = await addLibrary(kernel, { source: 'upload', name: 'hugo-site', spec: { path: site } });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    return {
      snippets: await kernel.store.getSnippets('/docs/hugo-site', ''),
      log: (await kernel.store.getJobLog(job.id)).map((l) => `${l.level} ${l.message}`),
    };
  };
  const of = (snippets: StoredSnippet[], path: string) => snippets.filter((s) => s.sourcePath === `content/en/${path}`);

  test('a section whose body is one include line answers with the fragment, spanning its own lines', async () => {
    const { snippets, log } = await ingest();
    const patterns = of(snippets, 'functions/resources/Match.md').find((s) => s.title === 'Patterns')!;
    assert.ok(patterns, 'the Patterns section has a snippet');
    assert.ok(patterns.content.includes('`images/a.jpg`|`images/*.jpg`|`true`'), patterns.content);
    assert.ok(!patterns.content.includes('include'), 'no directive is shown to the reader');
    assert.ok(!patterns.content.includes('_comment'), "the fragment's front matter is left out");
    assert.deepEqual([patterns.lineStart, patterns.lineEnd], [7, 10]);
    const example = of(snippets, 'functions/resources/Match.md').find((s) => s.type === 'code')!;
    assert.deepEqual([example.lineStart, example.lineEnd], [13, 15], 'lines after the include are the file’s own');
    for (const s of of(snippets, 'functions/resources/Match.md')) assert.ok(s.lineEnd <= 16, `${s.title}: ${s.lineStart}-${s.lineEnd}`);

    // The {{< >}} form, without an extension, resolved against the content root.
    const match = of(snippets, 'methods/page/Resources.md').find((s) => s.title === 'Match')!;
    assert.ok(match.content.includes('`images/a.jpg`|`*.jpg`|`false`'), match.content);
    // The section's text ends with the include on line 7 (the unresolved directive on line 9 is dropped).
    assert.deepEqual([match.lineStart, match.lineEnd], [5, 7]);

    // The fragment stays a document of its own, with its own lines.
    const fragment = of(snippets, '_common/glob-patterns.md');
    assert.equal(fragment.length, 1);
    assert.deepEqual([fragment[0].lineStart, fragment[0].lineEnd], [1, 8]);

    // A missing target stays unexpanded (the chunker drops the line) and is logged.
    assert.ok(
      log.some((l) => l === 'warn content/en/methods/page/Resources.md: an include directive was left as written: "/_common/missing-fragment.md" is not a file of the upload'),
      log.join('\n'),
    );
    assert.ok(!match.content.includes('missing-fragment'));
  });

  test('a refresh after a fragment changed re-chunks the pages that include it', async () => {
    await ingest();
    await writeFile(join(site, 'content/en/_common/glob-patterns.md'), lines('---', '---', '', GLOB_TABLE, '`docs/b.md`|`**.md`|`true`', ''));
    const { snippets } = await ingest();
    const match = of(snippets, 'methods/page/Resources.md').find((s) => s.title === 'Match')!;
    assert.ok(match.content.includes('`docs/b.md`|`**.md`|`true`'), match.content);
  });
});

describe('include targets in uploaded folders and archives', () => {
  const CODE = 'def handler(event):\n    return {"ok": True}\n';
  const PAGE = lines('# Handlers', '', 'Write a handler:', '', '--8<-- "src/handler.py"', '', 'Deploy it.');

  const check = (docs: SourceDocument[]) => {
    const page = docs.find((d) => d.path === 'docs/handlers.md')!;
    assert.equal(page.content, lines('# Handlers', '', 'Write a handler:', '', '```python', 'def handler(event):', '    return {"ok": True}', '```', '', 'Deploy it.'));
    assert.deepEqual(page.lineMap, [1, 2, 3, 4, 5, 5, 5, 5, 6, 7]);
    assert.ok(!docs.some((d) => d.path === 'src/handler.py'), 'an included code file is not a document');
  };

  test('a folder: code outside the documents is included; .., hidden files, excluded prefixes and outside symlinks are refused', async (t) => {
    const root = await tempDir(t);
    const outside = await tempDir(t);
    await writeFile(join(outside, 'secret.md'), 'SECRET outside the upload\n');
    await writeTree(root, {
      'docs/handlers.md': PAGE,
      'src/handler.py': CODE,
      'docs/refused.md': lines(
        '# Refused',
        '!include ../../outside/secret.md',
        '!include .env.md',
        '!include private/notes.md',
        '!include link.md',
        '!include docs/refused.md',
      ),
      '.env.md': 'SECRET hidden\n',
      'private/notes.md': 'SECRET excluded\n',
    });
    await symlink(join(outside, 'secret.md'), join(root, 'link.md'));
    const res = await runSource(new UploadSource(), { path: root, exclude: ['private/'] });
    check(res.documents);
    const refused = res.documents.find((d) => d.path === 'docs/refused.md')!;
    assert.ok(!refused.content.includes('SECRET'), refused.content);
    assert.equal(refused.lineMap, undefined);
    const warning = res.logs.find((l) => l.level === 'warn' && l.message.startsWith('docs/refused.md:'))!;
    assert.ok(warning, JSON.stringify(res.logs));
    assert.match(warning.message, /5 include directives were left as written/);
    assert.match(warning.message, /"\.\.\/\.\.\/outside\/secret\.md" leaves the upload/);
    assert.match(warning.message, /"link\.md" is not a file of the upload/);
    assert.match(warning.message, /"docs\/refused\.md" is not included again: docs\/refused\.md -> docs\/refused\.md is a cycle/);
  });

  test('a zip: code entries that are not documents are read for includes', async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'site.zip');
    await writeFile(file, buildZip([
      { name: 'proj-main/docs/handlers.md', data: PAGE, method: 'deflate' },
      { name: 'proj-main/src/handler.py', data: CODE, method: 'deflate' },
    ]));
    check((await runSource(new UploadSource(), { path: file })).documents);
  });

  test('a tar.gz: one more pass reads the included files; fragments outside the include filter still expand', async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'site.tgz');
    await writeFile(file, buildTarGz([
      { name: 'proj-main/docs/handlers.md', data: PAGE },
      { name: 'proj-main/docs/config.md', data: lines('# Config', '', '!include ../shared/options.md') },
      { name: 'proj-main/shared/options.md', data: 'Options are **on** by default.\n\n--8<-- "src/handler.py"\n' },
      { name: 'proj-main/src/handler.py', data: CODE },
    ]));
    const res = await runSource(new UploadSource(), { path: file, include: ['docs/'] });
    assert.deepEqual(res.documents.map((d) => d.path), ['docs/config.md', 'docs/handlers.md']);
    check(res.documents);
    const config = res.documents.find((d) => d.path === 'docs/config.md')!;
    assert.equal(config.content, lines('# Config', '', 'Options are **on** by default.', '', '```python', 'def handler(event):', '    return {"ok": True}', '```'));
    assert.deepEqual(config.lineMap, [1, 2, 3, 3, 3, 3, 3, 3]);
    assert.ok(!res.logs.some((l) => l.level === 'warn'), JSON.stringify(res.logs));
  });

  test('a single uploaded file has no tree to include from: its directives stay and are reported', async (t) => {
    const dir = await tempDir(t);
    await writeTree(dir, { 'page.md': '# Page\n\n{{% include "/_common/a.md" %}}\n', '_common/a.md': 'Fragment.\n' });
    const res = await runSource(new UploadSource(), { path: join(dir, 'page.md') });
    assert.equal(res.documents[0].content, '# Page\n\n{{% include "/_common/a.md" %}}\n');
    assert.ok(res.logs.some((l) => l.level === 'warn' && l.message.includes('"/_common/a.md" is not a file of the upload')));
  });
});
