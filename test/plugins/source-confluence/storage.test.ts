import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { headingPath, pageMarkdown, storageToMarkdown } from '../../../plugins/source-confluence/markdown.ts';
import { deriveConfluenceId, parseConfluenceSpec } from '../../../plugins/source-confluence/spec.ts';
import { slugify } from '../../../plugins/source-confluence/page-tree.ts';
import plugin from '../../../plugins/source-confluence/index.ts';
import { validate } from '../../../core/validate.ts';
import type { SourceDefinition } from '../../../core/define.ts';

const ctx = {
  headingOffset: 0,
  pageUrl: (title: string, space: string | null) => `https://wiki.example.com/display/${space ?? 'ENG'}/${encodeURIComponent(title)}`,
  attachmentUrl: (file: string) => `https://wiki.example.com/download/attachments/7/${encodeURIComponent(file)}`,
  selfUrl: 'https://wiki.example.com/pages/viewpage.action?pageId=7',
};
const md = (storage: string, offset = 0) => storageToMarkdown(storage, { ...ctx, headingOffset: offset });

describe('storage format to markdown', () => {
  test('code macros keep their language (Confluence names mapped), title and exact text', () => {
    const out = md(
      '<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">c#</ac:parameter><ac:plain-text-body><![CDATA[var x = a < b && c > d ? "<" : "&amp;";]]></ac:plain-text-body></ac:structured-macro>' +
        '<ac:structured-macro ac:name="noformat"><ac:plain-text-body><![CDATA[plain  text\n  indented]]></ac:plain-text-body></ac:structured-macro>' +
        '<ac:structured-macro ac:name="code"><ac:plain-text-body><![CDATA[Markdown example:\n```js\nx()\n```]]></ac:plain-text-body></ac:structured-macro>',
    );
    assert.ok(out.includes('```csharp\nvar x = a < b && c > d ? "<" : "&amp;";\n```'), out);
    assert.ok(out.includes('```\nplain  text\n  indented\n```'), out);
    assert.ok(out.includes('````\nMarkdown example:\n```js\nx()\n```\n````'), out);
  });

  test('HTML named entities and unknown ones', () => {
    assert.equal(md('<p>a&nbsp;b &mdash; c &copy; &notanentity; &lt;tag&gt; &amp;</p>'), 'a\u00a0b — c © &notanentity; <tag> &');
  });

  test('a body that is not well-formed XML is still converted', () => {
    const out = md('<p>line one<br>line two</p><p>unclosed <ac:structured-macro ac:name="code"><ac:parameter ac:name="language">sql</ac:parameter><ac:plain-text-body><![CDATA[SELECT 1 WHERE a > b]]></ac:plain-text-body></ac:structured-macro>');
    assert.match(out, /line one {2}\nline two/);
    assert.match(out, /```sql\nSELECT 1 WHERE a > b\n```/);
  });

  test('panels, titled panels, the cloud editor panel, expand, and dropped navigation macros', () => {
    const out = md(
      '<ac:structured-macro ac:name="warning"><ac:parameter ac:name="title">Data loss</ac:parameter><ac:rich-text-body><p>Back up first.</p></ac:rich-text-body></ac:structured-macro>' +
        '<ac:structured-macro ac:name="panel"><ac:parameter ac:name="title">Summary</ac:parameter><ac:rich-text-body><p>Short.</p></ac:rich-text-body></ac:structured-macro>' +
        '<ac:adf-extension><ac:adf-node type="panel"><ac:adf-attribute key="panel-type">success</ac:adf-attribute><ac:adf-content><p>It worked.</p></ac:adf-content></ac:adf-node><ac:adf-fallback><p>fallback</p></ac:adf-fallback></ac:adf-extension>' +
        '<ac:structured-macro ac:name="expand"><ac:rich-text-body><p>Inside the expand.</p></ac:rich-text-body></ac:structured-macro>' +
        '<ac:structured-macro ac:name="toc" /><ac:structured-macro ac:name="pagetree"><ac:parameter ac:name="root">x</ac:parameter></ac:structured-macro>',
    );
    assert.equal(
      out,
      '> **Warning:** Data loss\n> \n> Back up first.\n\n> **Summary**\n> \n> Short.\n\n> **Success:** It worked.\n\nInside the expand.',
    );
  });

  test('links: pages (same and other space, with anchors), attachments, external URLs, users', () => {
    const out = md(
      '<p><ac:link><ri:page ri:content-title="Setup Guide" /></ac:link> · ' +
        '<ac:link ac:anchor="step-2"><ri:page ri:space-key="OPS" ri:content-title="Runbook" /><ac:link-body><em>step two</em></ac:link-body></ac:link> · ' +
        '<ac:link><ri:attachment ri:filename="diagram v2.png" /></ac:link> · ' +
        '<ac:link><ri:url ri:value="https://example.org/spec" /><ac:plain-text-link-body><![CDATA[the spec]]></ac:plain-text-link-body></ac:link> · ' +
        '<ac:link><ri:user ri:account-id="557058:abc" /></ac:link>done · ' +
        '<ac:link ac:anchor="faq"><ac:plain-text-link-body><![CDATA[FAQ]]></ac:plain-text-link-body></ac:link> · ' +
        '<a href="https://example.com/x">plain</a></p>' +
        '<p><ac:image ac:alt="Flow"><ri:attachment ri:filename="flow.png" /></ac:image></p>',
    );
    assert.equal(
      out,
      '[Setup Guide](https://wiki.example.com/display/ENG/Setup%20Guide) · ' +
        '[_step two_](https://wiki.example.com/display/OPS/Runbook#step-2) · ' +
        '[diagram v2.png](https://wiki.example.com/download/attachments/7/diagram%20v2.png) · ' +
        '[the spec](https://example.org/spec) · done · ' +
        '[FAQ](https://wiki.example.com/pages/viewpage.action?pageId=7#faq) · ' +
        '[plain](https://example.com/x)\n\n' +
        '![Flow](https://wiki.example.com/download/attachments/7/flow.png)',
    );
  });

  test('tables: a first row without th becomes the header; lists, tasks, layouts and inline formatting', () => {
    const out = md(
      '<ac:layout><ac:layout-section ac:type="two_equal"><ac:layout-cell>' +
        '<table><tbody><tr><td>Name</td><td>Type</td></tr><tr><td><code>id</code></td><td>string</td></tr></tbody></table>' +
        '</ac:layout-cell><ac:layout-cell>' +
        '<ol><li>first</li><li>second<ul><li>nested</li></ul></li></ol>' +
        '<ac:task-list><ac:task><ac:task-status>incomplete</ac:task-status><ac:task-body>write docs</ac:task-body></ac:task></ac:task-list>' +
        '<p><s>old</s> <u>under</u> <time datetime="2024-05-01" /> <ac:emoticon ac:name="smile" ac:emoji-fallback="🙂" /></p>' +
        '</ac:layout-cell></ac:layout-section></ac:layout>',
    );
    assert.ok(out.includes('| Name | Type |\n| --- | --- |\n| `id` | string |'), out);
    assert.match(out, /1\. {1,2}first\n2\. {1,2}second\n {4}- {1,3}nested/);
    assert.match(out, /- {1,3}\[ \] write docs/);
    assert.ok(out.includes('~old~ under 2024-05-01 🙂'), out);
  });

  test('headings move below the breadcrumb headings and stop at h6', () => {
    assert.equal(md('<h1>A</h1><h2>B</h2><h3>C</h3>', 3), '#### A\n\n##### B\n\n###### C');
    assert.equal(md('<h1>A</h1><h3>C</h3>', 5), '###### A\n\n###### C');
  });

  test('the page document: hierarchy headings, deep trails merged into one heading', () => {
    assert.deepEqual(headingPath('Eng', [], 'Home'), ['Eng', 'Home']);
    assert.deepEqual(headingPath('Eng', ['A', 'B'], 'P'), ['Eng', 'A', 'B', 'P']);
    assert.deepEqual(headingPath('Eng', ['A', 'B', 'C', 'D'], 'P'), ['Eng', 'A › B › C', 'D', 'P']);
    const doc = pageMarkdown('Eng', ['#hash tag'], 'Page', '<h1>Intro</h1><p>x</p>', ctx);
    assert.equal(doc, '# Eng\n\n## \\#hash tag\n\n### Page\n\n#### Intro\n\nx\n');
    assert.equal(pageMarkdown('Eng', [], 'Empty', '', ctx), '# Eng\n\n## Empty\n');
  });
});

describe('spec', () => {
  const def = plugin.definitions[0] as SourceDefinition;

  test('deployment defaults to cloud for atlassian.net, the base URL gets /wiki on cloud only', () => {
    const cloud = parseConfluenceSpec({ siteUrl: 'https://acme.atlassian.net/wiki/', spaceKey: 'ENG', email: 'a@b.c', apiToken: 't' });
    assert.equal(cloud.deployment, 'cloud');
    assert.equal(cloud.base, 'https://acme.atlassian.net/wiki');
    assert.equal(cloud.authorization, 'Basic ' + Buffer.from('a@b.c:t').toString('base64'));
    const server = parseConfluenceSpec({ siteUrl: 'https://wiki.corp.example/confluence', spaceKey: 'OPS', personalAccessToken: 'p' });
    assert.equal(server.deployment, 'server');
    assert.equal(server.base, 'https://wiki.corp.example/confluence');
    assert.equal(server.authorization, 'Bearer p');
    const forced = parseConfluenceSpec({ siteUrl: 'https://confluence.acme.io', spaceKey: 'X', deployment: 'cloud' });
    assert.equal(forced.base, 'https://confluence.acme.io/wiki');
    assert.equal(forced.authKind, 'anonymous');
  });

  test('deriveId follows the agreed convention', () => {
    assert.equal(def.deriveId!({ siteUrl: 'https://acme.atlassian.net', spaceKey: 'ENG' }), '/confluence/acme_atlassian_net_eng');
    assert.equal(def.deriveId!({ siteUrl: 'http://wiki.local:8090/confluence', spaceKey: '~jdoe' }), '/confluence/wiki_local_8090_jdoe');
    assert.equal(deriveConfluenceId({ siteUrl: 'https://acme.atlassian.net/wiki', spaceKey: 'Dev' }), '/confluence/acme_atlassian_net_dev');
  });

  test('the spec schema marks both tokens writeOnly and refuses unknown fields and bad values', () => {
    const props = def.specSchema.properties as Record<string, { writeOnly?: boolean }>;
    assert.equal(props.apiToken.writeOnly, true);
    assert.equal(props.personalAccessToken.writeOnly, true);
    assert.equal(props.email.writeOnly, undefined);
    assert.deepEqual(validate(def.specSchema, { siteUrl: 'https://a.atlassian.net', spaceKey: 'ENG' }, 'spec'), []);
    const problems = validate(def.specSchema, { siteUrl: 'a.atlassian.net', spaceKey: 'E G', deployment: 'saas', token: 'x' }, 'spec');
    assert.equal(problems.length, 4, problems.join('; '));
    assert.ok(problems.every((p) => !p.includes('a.atlassian.net')), 'values are not echoed');
  });

  test('slugs', () => {
    assert.equal(slugify('Getting Started!'), 'getting-started');
    assert.equal(slugify('Café & Crème — FAQ'), 'cafe-creme-faq');
    assert.equal(slugify('日本語'), '');
  });
});
