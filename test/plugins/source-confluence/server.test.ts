import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runSource, runSourceContract } from '../../../core/testing/index.ts';
import { makeSpace } from './fixtures.ts';
import { startFakeConfluence, type FakeConfluence } from './fake-confluence.ts';
import { API_TOKEN, EMAIL, PAT, makeSource, previousOf } from './helpers.ts';
import { rejection } from '../../helpers/rejects-with.ts';

let fake: FakeConfluence;
let spec: Record<string, unknown>;

before(async () => {
  fake = await startFakeConfluence({ space: makeSpace(), email: EMAIL, apiToken: API_TOKEN, pat: PAT, context: '/confluence' });
});
after(() => fake.close());
beforeEach(() => {
  fake.space.pages = makeSpace().pages;
  fake.requests.length = 0;
  // No deployment given: a host that is not *.atlassian.net is a Server/Data Center site.
  spec = { siteUrl: `${fake.origin}/confluence/`, spaceKey: 'ENG', personalAccessToken: PAT };
});


describe('Confluence Server / Data Center (REST v1)', () => {
  test('reads the space with a Bearer token under the context path, paginating by start/limit', async () => {
    const { documents } = await runSource(makeSource(), spec);
    assert.equal(documents.length, 15);
    assert.ok(fake.requests.every((r) => r.authorization === `Bearer ${PAT}`));
    assert.ok(fake.requests.every((r) => r.path.startsWith('/confluence/rest/api/')));
    const listings = fake.requests.filter((r) => r.path === '/confluence/rest/api/content');
    // The server caps body listings at 4 results although 5 were asked for.
    assert.deepEqual(listings.map((r) => r.query.get('start')), ['0', '4', '8', '12']);
    assert.ok(listings.every((r) => r.query.get('expand') === 'version,ancestors,body.storage' && r.query.get('spaceKey') === 'ENG'));

    const auth = documents.find((d) => d.path === 'api-guide/authentication.md')!;
    assert.equal(auth.url, `${fake.origin}/confluence/pages/viewpage.action?pageId=106`);
    assert.match(auth.content, /^# Engineering\n\n## API Guide\n\n### Authentication\n\n#### Bearer tokens\n/);
    assert.match(auth.content, /\*\*QuasarClient\.java\*\*\n\n```java\nHttpRequest request = HttpRequest\.newBuilder/);
    assert.ok(auth.content.includes('if (retries < 3 && response.statusCode() >= 500) { retry(); }'), 'CDATA code keeps < and &&');
    assert.match(auth.content, /> \*\*Note:\*\* Tokens expire after 24\u00a0hours; refresh them with `quasarctl token refresh`\./);
    assert.match(auth.content, /> \*\*Tip:\*\* Store tokens in the OS keychain\./);
    assert.match(auth.content, /\*\*Token scopes\*\*\n\n- {1,3}`topics:read` lists topics/);

    const pagination = documents.find((d) => d.path === 'api-guide/pagination.md')!;
    assert.match(pagination.content, /```python\ncursor = None\n/);
    assert.match(pagination.content, /- {1,3}\[x\] Handle an empty last page\n- {1,3}\[ \] Retry on HTTP 429/);
    assert.ok(!/toc|maxLevel/i.test(pagination.content), 'the toc macro is dropped');

    const install = documents.find((d) => d.path === 'getting-started/installation.md')!;
    assert.ok(install.content.includes(`[the configuration guide](${fake.origin}/confluence/pages/viewpage.action?pageId=104#ports)`));
    assert.match(install.content, /```bash\ncurl -fsSL https:\/\/get\.quasar\.example\/install\.sh \| sh\n/);
    assert.match(install.content, /> \*\*Info:\*\* The installer verifies/);
    const release = documents.find((d) => d.path === 'release-notes/release-4-2.md')!;
    assert.match(release.content, /ships fix number 2 for the broker and the \*\*STABLE\*\* channel/);
  });

  test('a wrong personal access token fails with a clear error that holds no secret', async () => {
    const e = await rejection(runSource(makeSource(), { ...spec, personalAccessToken: 'wrong-pat-123456' }));
    assert.equal(e.code, 'unauthorized');
    assert.match(e.message, /refused the credentials \(HTTP 401\): check the personalAccessToken/);
    assert.ok(!e.message.includes('wrong-pat-123456'));
  });

  test('rootPageId reads the root and its descendants with their ancestors', async () => {
    const { documents } = await runSource(makeSource(), { ...spec, rootPageId: '105' });
    assert.deepEqual(documents.map((d) => d.path), ['api-guide.md', 'api-guide/authentication.md', 'api-guide/pagination.md']);
    assert.deepEqual(
      fake.requests.map((r) => r.path),
      ['/confluence/rest/api/space/ENG', '/confluence/rest/api/content/105', '/confluence/rest/api/content/105/descendant/page'],
    );
    const e = await rejection(runSource(makeSource(), { ...spec, rootPageId: '4242' }));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, /rootPageId 4242 was not found/);
  });

  test('a refresh lists without bodies and reads only the changed page', async () => {
    const first = await runSource(makeSource(), spec);
    fake.requests.length = 0;
    const page = fake.space.pages.find((p) => p.id === '103')!;
    page.version = 2;
    page.body += '<p>Mount a volume for the broker data.</p>';
    const second = await runSource(makeSource(), spec, { previous: previousOf(first.documents) });
    assert.deepEqual(
      fake.requests.filter((r) => /\/content\/\d+$/.test(r.path)).map((r) => r.path),
      ['/confluence/rest/api/content/103'],
    );
    assert.ok(fake.requests.filter((r) => r.path.endsWith('/content')).every((r) => r.query.get('expand') === 'version,ancestors'));
    const changed = second.documents.filter((d) => !d.unchanged);
    assert.deepEqual(changed.map((d) => d.path), ['getting-started/installation/docker-setup.md']);
    assert.match(changed[0].content, /Mount a volume for the broker data\./);
    assert.equal(second.documents.filter((d) => d.unchanged).length, 14);
  });

  test('an unknown space key is named in the error', async () => {
    const e = await rejection(runSource(makeSource(), { ...spec, spaceKey: 'DOCS' }));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, /Space "DOCS" was not found at .*\/confluence/);
  });

  test('403 says the account lacks permission', async () => {
    fake.failNext(403, 1);
    const e = await rejection(runSource(makeSource(), spec));
    assert.equal(e.code, 'forbidden');
    assert.match(e.message, /denied access to space "ENG" \(HTTP 403\): the account needs permission to view space "ENG"/);
  });

  test('a site URL that is not Confluence (wrong context path) gets a clear error', async () => {
    const e = await rejection(runSource(makeSource(), { ...spec, siteUrl: `${fake.origin}/wiki-not-here` }));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, /did not answer space "ENG" with Confluence REST JSON \(got text\/html\); check siteUrl and deployment \(server\)/);
  });

  test('a site that cannot be reached fails after the retries, naming the site', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const e = await rejection(runSource(makeSource({ maxAttempts: 2 }), { ...spec, siteUrl: `http://127.0.0.1:${port}` }));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, new RegExp(`Could not reach Confluence at http://127\\.0\\.0\\.1:${port} .*ECONNREFUSED.* after 2 attempts`));
  });

  test('spec combinations are checked with clear messages before any request', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...spec, email: EMAIL }, /either email \+ apiToken .* or personalAccessToken .*, not both/],
      [{ siteUrl: spec.siteUrl, spaceKey: 'ENG', email: EMAIL }, /"email" needs "apiToken" too/],
      [{ siteUrl: spec.siteUrl, spaceKey: 'ENG', apiToken: 'x' }, /"apiToken" needs "email" too/],
      [{ ...spec, siteUrl: 'ftp://wiki.example.com' }, /must be an http or https URL/],
      [{ ...spec, siteUrl: 'https://user:pw@wiki.example.com' }, /must not hold credentials/],
      [{ ...spec, rootPageId: 'abc' }, /numeric page ID/],
    ];
    for (const [bad, message] of cases) {
      const e = await rejection(runSource(makeSource(), bad));
      assert.equal(e.code, 'invalid_source');
      assert.match(e.message, message);
      assert.ok(!e.message.includes(PAT));
    }
    assert.equal(fake.requests.length, 0);
  });
});

runSourceContract('confluence (server)', async () => ({
  source: makeSource(),
  spec: { siteUrl: `${fake.origin}/confluence`, spaceKey: 'ENG', personalAccessToken: PAT },
}));
