import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCorpora } from '../../helpers/corpora.ts';
import { allLinks, parseLlmsTxt } from '../../../plugins/source-llms-txt/parse-llms-txt.ts';
import { detectFullKind, splitContextFile, splitFullFile } from '../../../plugins/source-llms-txt/split-full.ts';
import { pageCandidates, pagePath, uniquePath } from '../../../plugins/source-llms-txt/page-url.ts';
import { deriveLlmsTxtId } from '../../../plugins/source-llms-txt/derive-id.ts';
import { fixture } from './fixture-site.ts';

const skip = hasCorpora ? false : 'shared corpora not present';

describe('llms.txt parsing', () => {
  test('deno fixture: title, summary, every section, links before the first H2, the Optional section', { skip }, () => {
    const doc = parseLlmsTxt(fixture('denoland-docs/llms.txt'), 'https://docs.deno.com/llms.txt');
    assert.equal(doc.title, 'Deno');
    assert.match(doc.summary, /^Deno is a secure JavaScript\/TypeScript runtime built on V8 and Rust, distributed as a single binary\./);
    assert.ok(!doc.summary.includes('\n'));
    assert.deepEqual(
      doc.sections.map((s) => [s.name, s.links.length, s.optional]),
      [['', 4, false], ['Runtime', 13, false], ['Deploy', 3, false], ['Sandbox', 5, false], ['Examples', 7, false], ['Optional', 4, true]],
    );
    const cfg = doc.sections[1].links[2];
    assert.deepEqual(
      { title: cfg.title, url: cfg.url, description: cfg.description, section: cfg.section, line: cfg.line },
      { title: 'Configuration (deno.json)', url: 'https://docs.deno.com/runtime/fundamentals/configuration', description: 'Project config, tasks, import maps, TypeScript settings', section: 'Runtime', line: 19 },
    );
    assert.deepEqual(doc.skipped, []);
    assert.equal(allLinks(doc).length, 36);
    assert.ok(allLinks(doc).filter((l) => l.optional).every((l) => l.section === 'Optional'));
  });

  test('fasthtml fixture: details kept apart from the link sections', { skip }, () => {
    const doc = parseLlmsTxt(fixture('fasthtml/llms.txt'), 'https://www.fastht.ml/docs/llms.txt');
    assert.equal(doc.title, 'FastHTML');
    assert.match(doc.summary, /^FastHTML is a python library/);
    assert.match(doc.details, /^Things to remember when writing FastHTML apps:/);
    assert.match(doc.details, /Use `serve\(\)` for running uvicorn/);
    assert.deepEqual(doc.sections.map((s) => [s.name, s.links.length]), [['Docs', 3], ['API', 2], ['Examples', 2], ['Optional', 14]]);
    assert.deepEqual(doc.skipped, []);
  });

  test('malformed and stray lines are skipped with their line number and a reason; relative links resolve', () => {
    const text = [
      '# Tool',
      '> One line summary',
      '',
      '## Docs',
      '- [Guide](guide.md): the guide',
      'some stray text',
      '- [Broken link(no-close',
      '- [Mail](mailto:a@b.c): not http',
      '### A sub heading',
      '* [Api](/api/ "title"): the API',
      '# Second title',
      '## Optional',
      '- [Extra](https://other.example/extra)',
    ].join('\n');
    const doc = parseLlmsTxt(text, 'https://tool.example/docs/llms.txt');
    assert.deepEqual(
      doc.sections.map((s) => s.links.map((l) => l.url)),
      [['https://tool.example/docs/guide.md', 'https://tool.example/api/'], ['https://other.example/extra']],
    );
    assert.deepEqual(doc.skipped.map((s) => s.line), [6, 7, 8, 9, 11]);
    assert.match(doc.skipped[0].reason, /not a list item/);
    assert.match(doc.skipped[1].reason, /not a markdown link/);
    assert.match(doc.skipped[2].reason, /not an http\(s\) URL/);
    assert.match(doc.skipped[4].reason, /second H1/);
  });

  test('a file with no H1 still gives its links', () => {
    const doc = parseLlmsTxt('- [A](https://x.example/a)\n\n## S\n- [B](https://x.example/b)\n', 'https://x.example/llms.txt');
    assert.equal(doc.title, '');
    assert.deepEqual(allLinks(doc).map((l) => l.title), ['A', 'B']);
  });
});

describe('full files', () => {
  test('the fasthtml context file splits into its <doc> wrappers with sections and URLs from the prelude', { skip }, () => {
    const text = fixture('fasthtml/llms-ctx-full.txt');
    assert.equal(detectFullKind(text), 'ctx');
    const { project, parts } = splitContextFile(text);
    assert.equal(project?.title, 'FastHTML');
    assert.match(project!.summary, /fastcore's `FT` "FastTags"/);
    assert.match(project!.content, /^Things to remember/);
    assert.ok(!project!.content.includes('<docs>'));
    assert.equal(parts.length, 21);
    assert.deepEqual(
      Object.entries(parts.reduce<Record<string, number>>((acc, p) => ({ ...acc, [p.section]: (acc[p.section] ?? 0) + 1 }), {})),
      [['docs', 3], ['api', 2], ['examples', 2], ['optional', 14]],
    );
    assert.equal(parts[0].title, 'FastHTML concise guide');
    assert.equal(parts[0].url, 'https://www.fastht.ml/docs/ref/concise_guide.html.md');
    assert.match(parts[0].content, /^# Concise reference/);
    assert.ok(parts.every((p) => !p.content.includes('</doc>') && p.url.startsWith('https://')));
    assert.match(parts[5].content, /^from asyncio import sleep/);
  });

  test('an llms-full.txt splits at H1s outside code fences and picks up Source: lines', () => {
    const text = [
      '# Intro',
      'Source: https://tool.example/intro',
      '',
      'Welcome.',
      '',
      '```bash',
      '# not a heading',
      'tool run',
      '```',
      '# Install',
      '',
      'Install it.',
      '# Install',
      'Again.',
    ].join('\n');
    assert.equal(detectFullKind(text), 'full');
    const parts = splitFullFile(text);
    assert.deepEqual(parts.map((p) => [p.title, p.url]), [['Intro', 'https://tool.example/intro'], ['Install', ''], ['Install', '']]);
    assert.match(parts[0].content, /# not a heading\ntool run/);
    assert.equal(detectFullKind('# One\n\n- [a](https://x/a)\n'), null);
  });
});

describe('page URLs and paths', () => {
  test('the .md variant comes first, index.html.md for a directory, text files as they are', () => {
    assert.deepEqual(pageCandidates('https://d.example/runtime/modules'), ['https://d.example/runtime/modules.md', 'https://d.example/runtime/modules']);
    assert.deepEqual(pageCandidates('https://d.example/deploy/'), ['https://d.example/deploy/index.html.md', 'https://d.example/deploy/']);
    assert.deepEqual(pageCandidates('https://d.example/a/page.html'), ['https://d.example/a/page.html.md', 'https://d.example/a/page.html']);
    assert.deepEqual(pageCandidates('https://d.example/agents.md'), ['https://d.example/agents.md']);
    assert.deepEqual(pageCandidates('https://d.example/x/app.py'), ['https://d.example/x/app.py']);
  });

  test('paths are the URL path, host-prefixed off-site, never with empty, . or .. segments', () => {
    const base = 'https://docs.example/llms.txt';
    assert.equal(pagePath('https://docs.example/runtime/modules', base), 'runtime/modules');
    assert.equal(pagePath('https://docs.example/deploy/', base), 'deploy');
    assert.equal(pagePath('https://docs.example/', base), 'index');
    assert.equal(pagePath('https://raw.example:8443/a/b.md', base), 'raw.example_8443/a/b.md');
    assert.equal(pagePath('https://docs.example/a?page=2', base), 'a_q_page=2');
    const taken = new Set<string>(['a.md']);
    assert.equal(uniquePath('a.md', taken), 'a-2.md');
    assert.equal(uniquePath('a.md', taken), 'a-3.md');
  });

  test('deriveId: /llmstxt/<host with . as _>-<last segment>', () => {
    assert.equal(deriveLlmsTxtId({ url: 'https://docs.deno.com/llms.txt' }), '/llmstxt/docs_deno_com-llms.txt');
    assert.equal(deriveLlmsTxtId({ url: 'https://www.fastht.ml/docs/llms-ctx-full.txt' }), '/llmstxt/www_fastht_ml-llms-ctx-full.txt');
    assert.equal(deriveLlmsTxtId({ url: 'http://127.0.0.1:8080/' }), '/llmstxt/127_0_0_1_8080', 'a non-default port is part of the name');
    assert.equal(deriveLlmsTxtId({ url: 'https://docs.deno.com:443/llms.txt' }), '/llmstxt/docs_deno_com-llms.txt', 'a default port is not');
    assert.throws(() => deriveLlmsTxtId({ url: 'not a url' }), /absolute http\(s\) URL/);
  });
});
