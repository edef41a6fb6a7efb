import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { runSource, runSourceContract } from '../../../core/testing/index.ts';
import { makeSpace } from './fixtures.ts';
import { startFakeConfluence, type FakeConfluence } from './fake-confluence.ts';
import { API_TOKEN, EMAIL, PAT, makeSource, previousOf } from './helpers.ts';
import { rejection } from '../../helpers/rejects-with.ts';

let fake: FakeConfluence;
let spec: Record<string, unknown>;

before(async () => {
  fake = await startFakeConfluence({ space: makeSpace(), email: EMAIL, apiToken: API_TOKEN, pat: PAT });
});
after(() => fake.close());
beforeEach(() => {
  fake.space.pages = makeSpace().pages;
  fake.requests.length = 0;
  spec = { siteUrl: fake.origin, spaceKey: 'ENG', deployment: 'cloud', email: EMAIL, apiToken: API_TOKEN };
});


describe('Confluence Cloud (REST v2)', () => {
  test('reads every page of the space with Basic auth, following the cursor through several pages of results', async () => {
    const { documents, logs } = await runSource(makeSource(), spec);
    assert.equal(documents.length, 15);
    const listings = fake.requests.filter((r) => r.path === '/wiki/api/v2/spaces/98304/pages');
    assert.equal(listings.length, 3, '15 pages at 5 per request');
    assert.ok(listings.slice(1).every((r) => r.query.get('cursor')), 'the later listings follow _links.next');
    assert.ok(listings.every((r) => r.query.get('body-format') === 'storage'), 'a first read lists with bodies');
    assert.equal(fake.count(/^\/wiki\/api\/v2\/pages\//), 0, 'no page is fetched one by one on a first read');
    assert.ok(fake.requests.every((r) => r.authorization === 'Basic ' + Buffer.from(`${EMAIL}:${API_TOKEN}`).toString('base64')));

    const paths = documents.map((d) => d.path);
    assert.deepEqual(paths.slice(0, 7), [
      'api-guide.md',
      'api-guide/authentication.md',
      'api-guide/pagination.md',
      'engineering-home.md',
      'getting-started.md',
      'getting-started/configuration.md',
      'getting-started/installation.md',
    ]);
    assert.ok(paths.includes('getting-started/installation/docker-setup.md'));
    assert.ok(paths.includes('release-notes/release-4-5.md'));

    const docker = documents.find((d) => d.path === 'getting-started/installation/docker-setup.md')!;
    assert.equal(docker.url, `${fake.origin}/wiki/spaces/ENG/pages/103`);
    assert.equal(docker.title, 'Docker Setup');
    assert.deepEqual(docker.meta, { pageId: '103', version: '1' });
    assert.match(docker.hash!, /^v1-[0-9a-f]{12}$/);
    // The hierarchy is the heading path: Space > Parent > Child > Page > sections.
    assert.match(docker.content, /^# Engineering\n\n## Getting Started\n\n### Installation\n\n#### Docker Setup\n\n##### Compose file\n/);
    assert.match(docker.content, /\*\*docker-compose\.yml\*\*\n\n```yaml\nservices:\n  broker:\n    image: quasar\/broker:4\.2/);
    assert.match(docker.content, /> \*\*Warning:\*\* Exposed ports\n>\s*\n> Never expose port 7800/);
    assert.ok(docker.content.includes('```xml\n<config><![CDATA[raw]]></config>\n```'), 'split CDATA sections join back');

    const config = documents.find((d) => d.path === 'getting-started/configuration.md')!;
    assert.ok(config.content.includes('| **Setting** | Meaning | Default |\n| --- | --- | --- |\n| `broker.port` | TCP port of the broker | 7800 |'));
    assert.ok(config.content.includes('| How long messages are kept per topic \\| partition |'), 'cell paragraphs joined, pipes escaped');
    assert.ok(config.content.includes(`[installing quasarctl](${fake.origin}/wiki/spaces/ENG/pages/102)`), 'a link to a page of the space goes to its URL');
    assert.ok(config.content.includes(`[the security policies](${fake.origin}/wiki/display/SEC/Security+Policies)`), 'a page of another space is linked by title');

    const home = documents.find((d) => d.path === 'engineering-home.md')!;
    assert.equal(home.content, '# Engineering\n\n## Engineering Home\n\nWelcome to the **Engineering** space of the Quasar platform.\n', 'the children macro is dropped');
    assert.match(logs.at(-1)!.message, /read 15 pages of space "ENG" \(cloud\): 15 converted, 0 unchanged, 4 requests/);
  });

  test('the library is named as its space is', async () => {
    const { meta } = await runSource(makeSource(), spec);
    assert.equal(meta.title, 'Engineering');
  });

  test('wrong credentials fail with a clear error that holds no secret', async () => {
    const e = await rejection(runSource(makeSource(), { ...spec, apiToken: 'ATATT3x-wrong-token-99' }));
    assert.equal(e.code, 'unauthorized');
    assert.match(e.message, /refused the credentials \(HTTP 401\).*email \+ apiToken/);
    for (const secret of ['ATATT3x-wrong-token-99', EMAIL, Buffer.from(`${EMAIL}:ATATT3x-wrong-token-99`).toString('base64')]) {
      assert.ok(!e.message.includes(secret), 'the message must not echo a credential');
    }
    assert.equal(fake.requests.length, 1, 'a 401 is not retried');
  });

  test('no credentials on a site that needs them says which to give', async () => {
    const e = await rejection(runSource(makeSource(), { siteUrl: fake.origin, spaceKey: 'ENG', deployment: 'cloud' }));
    assert.equal(e.code, 'unauthorized');
    assert.match(e.message, /requires sign-in.*email \+ apiToken.*personalAccessToken/);
  });

  test('an unknown space key is named in the error', async () => {
    const e = await rejection(runSource(makeSource(), { ...spec, spaceKey: 'NOPE' }));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, /Space "NOPE" was not found/);
  });

  test('rootPageId reads only that page and the pages below it, with the full breadcrumb', async () => {
    const { documents } = await runSource(makeSource(), { ...spec, rootPageId: '101' });
    assert.deepEqual(
      documents.map((d) => d.path),
      ['getting-started.md', 'getting-started/configuration.md', 'getting-started/installation.md', 'getting-started/installation/docker-setup.md'],
    );
    assert.match(documents[3].content, /^# Engineering\n\n## Getting Started\n\n### Installation\n\n#### Docker Setup\n/);
    // The space is listed without bodies (3 requests); 4 bodies one by one would take more
    // requests than listing again with bodies (3), so it lists again.
    assert.equal(fake.count(/^\/wiki\/api\/v2\/pages\/\d+$/), 0);
    assert.equal(fake.requests.filter((r) => r.path.endsWith('/pages') && r.query.get('body-format') === 'storage').length, 3);
    assert.equal(fake.requests.length, 1 + 3 + 3);
  });

  test('a small subtree has its bodies read page by page', async () => {
    const { documents } = await runSource(makeSource(), { ...spec, rootPageId: '102' });
    assert.deepEqual(documents.map((d) => d.path), ['getting-started/installation.md', 'getting-started/installation/docker-setup.md']);
    assert.deepEqual(fake.requests.filter((r) => /^\/wiki\/api\/v2\/pages\/\d+$/.test(r.path)).map((r) => r.path), ['/wiki/api/v2/pages/102', '/wiki/api/v2/pages/103']);
    assert.ok(fake.requests.filter((r) => r.path.endsWith('/pages')).every((r) => !r.query.has('body-format')));
  });

  test('a rootPageId outside the space is refused', async () => {
    const e = await rejection(runSource(makeSource(), { ...spec, rootPageId: '999' }));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, /rootPageId 999 is not a current page of space "ENG"/);
  });

  test('a refresh re-reads only the page whose version changed', async () => {
    const first = await runSource(makeSource(), spec);
    fake.requests.length = 0;
    const page = fake.space.pages.find((p) => p.id === '104')!;
    page.version = 5;
    page.body = page.body.replace('at start-up', 'at start-up and on SIGHUP');

    const second = await runSource(makeSource(), spec, { previous: previousOf(first.documents) });
    const fetched = fake.requests.filter((r) => /^\/wiki\/api\/v2\/pages\/\d+$/.test(r.path)).map((r) => r.path);
    assert.deepEqual(fetched, ['/wiki/api/v2/pages/104'], 'only the changed page body is read');
    assert.ok(fake.requests.filter((r) => r.path.endsWith('/pages')).every((r) => !r.query.has('body-format')), 'the listing carries no bodies');
    assert.equal(fake.requests.length, 1 + 3 + 1);

    assert.deepEqual(second.documents.map((d) => d.path), first.documents.map((d) => d.path));
    const changed = second.documents.filter((d) => !d.unchanged);
    assert.deepEqual(changed.map((d) => d.path), ['getting-started/configuration.md']);
    assert.match(changed[0].content, /on SIGHUP/);
    assert.deepEqual(changed[0].meta, { pageId: '104', version: '5' });
    for (const d of second.documents.filter((x) => x.unchanged)) {
      assert.equal(d.content, '');
      assert.equal(d.hash, first.documents.find((f) => f.path === d.path)!.hash);
    }
  });

  test('a renamed parent re-reads its subtree (the breadcrumb changed), and many changes are read by listing again', async () => {
    const first = await runSource(makeSource(), spec);
    fake.requests.length = 0;
    for (const p of fake.space.pages) if (p.parentId === '114') p.version++;
    const second = await runSource(makeSource(), spec, { previous: previousOf(first.documents) });
    // 6 changed pages > 3 listing requests: one more listing with bodies instead of 6 page reads.
    assert.equal(fake.count(/^\/wiki\/api\/v2\/pages\/\d+$/), 0);
    assert.equal(fake.requests.filter((r) => r.query.get('body-format') === 'storage').length, 3);
    assert.equal(second.documents.filter((d) => !d.unchanged).length, 6);

    fake.requests.length = 0;
    fake.space.pages.find((p) => p.id === '101')!.title = 'Getting started';
    const third = await runSource(makeSource(), spec, { previous: previousOf(second.documents) });
    const reread = third.documents.filter((d) => !d.unchanged).map((d) => d.path);
    assert.deepEqual(reread, ['getting-started.md', 'getting-started/configuration.md', 'getting-started/installation.md', 'getting-started/installation/docker-setup.md']);
    assert.match(third.documents.find((d) => d.path === 'getting-started/installation.md')!.content, /^# Engineering\n\n## Getting started\n/);
  });

  test('a retried read of one page body puts that page\'s path on its job log line', async () => {
    const first = await runSource(makeSource(), spec);
    const page = fake.space.pages.find((p) => p.id === '104')!;
    page.version = 6;
    fake.failNext(503, 1, '0', undefined, /^\/wiki\/api\/v2\/pages\/104$/);
    const second = await runSource(makeSource(), spec, { previous: previousOf(first.documents) });
    assert.equal(fake.requests.filter((r) => r.status === 503).length, 1);
    const warn = second.logs.find((l) => l.level === 'warn');
    assert.deepEqual(warn, { level: 'warn', message: 'Confluence answered HTTP 503 for page 104; retrying in 5 ms', path: 'getting-started/configuration.md' });
    assert.deepEqual(second.documents.filter((d) => !d.unchanged).map((d) => d.path), ['getting-started/configuration.md']);
  });

  test('HTTP 429 with Retry-After is retried, then the read succeeds', async () => {
    fake.failNext(429, 2, '0');
    const { documents, logs } = await runSource(makeSource(), spec);
    assert.equal(documents.length, 15);
    assert.equal(fake.requests.filter((r) => r.status === 429).length, 2);
    // The shared retry (core/net/retry.ts) waits at least its back-off (5, then 10 ms here) and at
    // least what Retry-After asks; Retry-After: 0 does not make it hammer the site.
    assert.deepEqual(
      logs.filter((l) => l.level === 'warn').map((l) => l.message),
      ['Confluence answered HTTP 429 for space "ENG"; retrying in 5 ms', 'Confluence answered HTTP 429 for space "ENG"; retrying in 10 ms'],
    );
    fake.failNext(429, 1, '1');
    const slow = await runSource(makeSource(), spec);
    assert.deepEqual(
      slow.logs.filter((l) => l.level === 'warn').map((l) => l.message),
      ['Confluence answered HTTP 429 for space "ENG"; retrying in 1000 ms'],
      'a longer Retry-After is honoured',
    );
  });

  test('a site that keeps failing ends in a clear error after the attempts', async () => {
    fake.failNext(503, 100);
    const e = await rejection(runSource(makeSource({ maxAttempts: 3 }), spec));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, /kept answering HTTP 503 .* after 3 attempts; try again later/);
    assert.equal(fake.requests.length, 3);
    fake.failNext(503, 0);
  });

  test('too many pages for maxPages is refused with what to do', async () => {
    const e = await rejection(runSource(makeSource({ maxPages: 8 }), spec));
    assert.equal(e.code, 'too_large');
    assert.match(e.message, /more than 8 pages.*rootPageId.*maxPages/);
  });
});

runSourceContract('confluence (cloud)', async () => ({
  source: makeSource(),
  spec: { siteUrl: fake.origin, spaceKey: 'ENG', deployment: 'cloud', email: EMAIL, apiToken: API_TOKEN },
}));
