/**
 * The Notion source against a loopback server shaped like Notion's API (test/fake-notion.ts),
 * with Refdesk's test kit (`refdesk/testing`): the documents it reads, the requests it makes
 * (bearer token, Notion-Version, pagination), its errors, and the source contract suite.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runSource, runSourceContract } from 'refdesk/testing';
import plugin, { notionSpecSchema, type NotionOptions } from '../src/index.ts';
import { blocksToMarkdown, richTextToMarkdown } from '../src/markdown.ts';
import { startFakeNotion, WORKSPACE, type FakeNotion } from './fake-notion.ts';

const TOKEN = 'secret_notion-example-0123456789';
let notion: FakeNotion;

before(async () => {
  notion = await startFakeNotion({ token: TOKEN, pages: WORKSPACE });
});
after(() => notion?.close());

/** The source as the kernel makes it: its definition's create with options and a fetch. */
function notionSource(options: Partial<NotionOptions> = {}) {
  const def = plugin.definitions.find((d) => d.kind === 'notion')!;
  const full: NotionOptions = { apiUrl: notion.url, notionVersion: '2022-06-28', pageSize: 2, maxPages: 1000, ...options };
  return def.create(full, { fetch: { fetch: (url: string | URL, init?: RequestInit) => fetch(url, init) } } as never) as ReturnType<typeof def.create> & { read: any };
}

test('the definition: kind notion, /notion/<workspace> IDs, a writeOnly token', () => {
  const def = plugin.definitions[0] as any;
  assert.equal(def.kind, 'notion');
  assert.equal(def.idPrefix, 'notion');
  assert.equal(def.deriveId, undefined, 'the ID comes from the first string field, workspace');
  assert.equal(Object.keys(notionSpecSchema.properties)[0], 'workspace');
  assert.equal(notionSpecSchema.properties.token.writeOnly, true);
});

test('reads every page the integration sees, paginated, as markdown documents', async () => {
  notion.requests.length = 0;
  const { documents, logs } = await runSource(notionSource() as any, { workspace: 'Acme', token: TOKEN });
  assert.deepEqual(
    documents.map((d) => d.path),
    ['deploy-runbook-1a2b3c4d.md', 'rate-limits-1a2b3c4d.md'],
    'archived pages are left out',
  );
  const runbook = documents[0];
  assert.equal(runbook.title, 'Deploy runbook');
  assert.match(runbook.url!, /^https:\/\/www\.notion\.so\/Deploy-runbook-/);
  assert.equal(
    runbook.content,
    [
      '# Deploy runbook',
      '',
      'How we ship the **billing** service.',
      '',
      '## Roll back a release',
      '',
      '1. Find the previous tag with `git tag --sort=-v:refname`.',
      '2. Run the rollback job.',
      '  - It takes about five minutes.',
      '',
      '```bash',
      'deployctl rollback --service billing --to previous',
      '```',
      '',
      'When the rollback fails',
      '',
      '  Page the on-call engineer, see [the rota](https://example.com/rota).',
      '',
      '- [x] Announce it in #releases',
      '',
    ].join('\n'),
  );
  assert.deepEqual(logs.filter((l) => l.level === 'warn'), []);
  // Every request carried the token and the version; search and the runbook's blocks took several pages.
  assert.ok(notion.requests.every((r) => r.auth === `Bearer ${TOKEN}` && r.version === '2022-06-28'));
  const searches = notion.requests.filter((r) => r.path === '/v1/search');
  assert.deepEqual(searches.map((r) => r.body.start_cursor ?? null), [null, '2'], 'search follows next_cursor');
  assert.ok(searches.every((r) => r.body.page_size === 2 && r.body.filter.value === 'page'));
  const runbookCalls = notion.requests.filter((r) => r.path.startsWith(`/v1/blocks/${WORKSPACE[0].id}/children`));
  assert.equal(runbookCalls.length, 4, '7 blocks at 2 an answer');
  assert.ok(notion.requests.some((r) => r.path.startsWith('/v1/blocks/b6/children')), "a toggle's children are read");
});

test('query narrows the search; maxPages stops the read with a warning', async () => {
  const only = await runSource(notionSource() as any, { workspace: 'Acme', token: TOKEN, query: 'rate' });
  assert.deepEqual(only.documents.map((d) => d.title), ['Rate limits']);
  const capped = await runSource(notionSource({ maxPages: 1 }) as any, { workspace: 'Acme', token: TOKEN });
  assert.equal(capped.documents.length, 1);
  assert.match(capped.logs.find((l) => l.level === 'warn')!.message, /stopped after 1 pages/);
});

test("a wrong token fails with Notion's answer and never shows the token", async () => {
  await assert.rejects(runSource(notionSource() as any, { workspace: 'Acme', token: 'secret_wrong-token' }), (e: Error) => {
    assert.match(e.message, /^Notion answered 401 unauthorized\. Check the integration token of this library\.$/);
    assert.ok(!e.message.includes('secret_wrong-token'));
    return true;
  });
});

test('rich text: annotations and links', () => {
  assert.equal(
    richTextToMarkdown([
      { plain_text: 'Use ' },
      { plain_text: 'npm ci', annotations: { code: true } },
      { plain_text: ' — ', annotations: {} },
      { plain_text: 'docs', href: 'https://example.com', annotations: { italic: true } },
    ]),
    'Use `npm ci` — [*docs*](https://example.com)',
  );
  assert.equal(blocksToMarkdown([{ id: 'x', type: 'image', image: {} }]), '', 'unknown block types are left out');
});

runSourceContract('notion', async () => ({ source: notionSource() as any, spec: { workspace: 'Acme', token: TOKEN } }));
