/**
 * /settings in a real browser (chromium via playwright-core) against a real server: each
 * section saves through the same functions as the API (checked through the API and the store),
 * errors land beside their fields with the values kept, planted secrets never reach a page, the
 * audit log page or a flash message, no CSP console errors; screenshots of every section.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createKey, startApiServer, type ApiServer } from '../server/helpers/api-server.ts';
import { launchBrowser, newPage, saveScreenshot, type UiPage } from '../helpers/browser.ts';
import { send, startServer as startHttp, type TestServer } from '../helpers/route-server.ts';
import { getAnonymousPermissions, getStoredUploadLimits } from '../../core/settings.ts';
import { getPolicy } from '../../server/access/policy.ts';
import { SETTINGS_SECTIONS } from '../../server/ui/pages/settings.ts';
import { PASSWORD, firstAdminSession, realConsoleErrors, signIn } from './settings-session.ts';

const LLM_KEY = 'sk-PlantedLlmKey-7c1d9e2f4a6b8c0d';
const EMBED_KEY = 'sk-PlantedEmbedKey-0f1e2d3c4b5a6978';
const GITHUB_TOKEN = 'ghp_PlantedGithubToken1234567890abcd';
const HOST_TOKEN = 'glpat-PlantedHostToken-99887766';
const TYPED_KEY = 'sk-PlantedTypedKeyOfARefusedForm-5544';
const SECRETS = [LLM_KEY, EMBED_KEY, GITHUB_TOKEN, HOST_TOKEN, TYPED_KEY];

/** The `Cookie` header of a browser context (for plain form posts without JavaScript). */
async function cookieHeader(context: BrowserContext): Promise<string> {
  return (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
}

function assertNoSecrets(html: string, where: string): void {
  for (const s of SECRETS) {
    assert.ok(!html.includes(s), `${where} holds a planted secret`);
    assert.ok(!html.includes(s.slice(4, 20)), `${where} holds part of a planted secret`);
  }
}

const json = (res: ServerResponse, status: number, body: unknown) => send(res, status, JSON.stringify(body), 'application/json');

/** A loopback server shaped like the OpenAI API (/v1/models, /v1/embeddings) behind a Bearer key. */
async function openAiLike(): Promise<TestServer> {
  return startHttp(async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!(url.pathname === '/v1/embeddings' ? [LLM_KEY, EMBED_KEY] : [LLM_KEY]).includes(key)) {
      return json(res, 401, { error: { message: `Incorrect API key provided: ${String(req.headers.authorization ?? '').slice(7)}.`, type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    if (req.method === 'GET' && url.pathname === '/v1/models') return json(res, 200, { object: 'list', data: [{ id: 'local-chat', object: 'model' }, { id: 'local-embed', object: 'model' }] });
    if (req.method === 'POST' && url.pathname === '/v1/embeddings') {
      for await (const _ of req);
      return json(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2, 0.3, 0.4] }], model: 'local-embed' });
    }
    return json(res, 404, { error: { message: `Unknown request URL: ${req.method} ${url.pathname}`, type: 'invalid_request_error' } });
  });
}

describe('/settings in a real browser', () => {
  let server: ApiServer;
  let browser: Browser;
  let vendor: TestServer;
  let ui: UiPage;
  let page: Page;
  const pages: UiPage[] = [];
  const badAssets: string[] = [];
  const track = (p: UiPage) => {
    p.page.on('response', (r) => {
      if (r.url().includes('/ui/assets/') && r.status() !== 200) badAssets.push(`${r.status()} ${r.url()}`);
    });
    pages.push(p);
    return p;
  };

  const open = async (section: string) => {
    const res = await page.goto(`${server.base}/settings?section=${section}`);
    assert.equal(res?.status(), 200, section);
    return res!;
  };
  const source = async () => {
    const html = await page.content();
    return html;
  };

  before(async () => {
    server = await startApiServer({ licence: { trial: true, days: 20, licensee: 'Example Org', plan: 'team' } });
    browser = await launchBrowser();
    vendor = await openAiLike();
    ui = await newPage(browser);
    track(ui);
    page = ui.page;
    page.on('dialog', (d) => void d.accept());
    await firstAdminSession(ui.context, server.base);
  });

  after(async () => {
    for (const p of pages) assert.deepEqual(realConsoleErrors(p.consoleErrors), [], 'no console errors (CSP) on any page');
    assert.deepEqual(badAssets, [], 'every UI asset loaded');
    await browser?.close();
    await vendor?.close();
    await server?.close();
  });

  test('signed out, /settings leads to /login with the way back', async () => {
    const r = await fetch(`${server.base}/settings?section=keys`, { redirect: 'manual' });
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), '/login?next=%2Fsettings%3Fsection%3Dkeys');
    // A form posted after the session ended goes to sign in, then back to the page (not the post's path).
    const post = await fetch(`${server.base}/settings/access`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'anonymous.delete=on', redirect: 'manual' });
    assert.equal(post.status, 303);
    assert.equal(post.headers.get('location'), '/login?next=%2Fsettings');
    assert.equal((await getAnonymousPermissions(server.kernel.store)).delete, false);
  });

  test('every section is reachable as ?section= with a tab marked current, and the trial banner shows', async () => {
    for (const s of SETTINGS_SECTIONS) {
      await open(s.id);
      assert.equal(await page.locator('nav[aria-label="Settings sections"] a[aria-current="page"]').innerText(), s.label);
      assert.match(await page.locator('p.banner').innerText(), /^Trial licence for Example Org: 20 days left/);
    }
    // An unknown section is the first one.
    await page.goto(`${server.base}/settings?section=nope`);
    assert.equal(await page.locator('a[aria-current="page"]', { hasText: 'AI providers' }).count(), 1);
  });

  test('AI providers: saved through the page, kept across a reload, keys write-only; a refused change keeps the values and names the field', async () => {
    await open('providers');
    assert.equal((await server.kernel.providers.resolved()).llm, null, 'no LLM yet (and the providers have read the settings once)');
    await page.getByLabel('LLM provider').selectOption('custom');
    await page.getByLabel('Model', { exact: true }).fill('local-chat');
    await page.getByLabel('Base URL', { exact: true }).fill(`${vendor.base}/v1`);
    await page.getByLabel('API key', { exact: true }).fill(LLM_KEY);
    await page.getByLabel('Embedding model').fill('local-embed');
    await page.getByRole('button', { name: 'Save providers' }).click();
    await page.waitForURL(/section=providers&done=saved/);
    assert.equal(await page.locator('#flash').innerText(), 'Settings saved.');
    assert.equal((await server.kernel.providers.resolved()).llm?.model, 'local-chat', 'the running server uses the new settings at once');
    await page.reload();
    assert.equal(await page.getByLabel('LLM provider').inputValue(), 'custom');
    assert.equal(await page.getByLabel('Model', { exact: true }).inputValue(), 'local-chat');
    assert.equal(await page.getByLabel('Base URL', { exact: true }).inputValue(), `${vendor.base}/v1`);
    assert.equal(await page.getByLabel('API key', { exact: true }).inputValue(), '', 'the key field is never filled');
    assert.match(await page.locator('#llm-apiKey-state').innerText(), /Currently: set \(ends in 0c0d\)|Currently: set/);
    assert.match(await page.locator('#embedding-effective').innerText(), /embeddings through the LLM's endpoint/);
    assertNoSecrets(await source(), 'the providers page');

    // The embedding key, then a refused change (a bad base URL) with a key typed in.
    await page.getByLabel('Embedding provider').selectOption('openai');
    await page.getByLabel('Embedding base URL').fill(`${vendor.base}/v1`);
    await page.getByLabel('Embedding API key').fill(EMBED_KEY);
    await page.getByRole('button', { name: 'Save providers' }).click();
    await page.waitForURL(/done=saved/);
    assert.match(await page.locator('#embedding-apiKey-state').innerText(), /set/);
    await page.getByLabel('Base URL', { exact: true }).fill('ftp://models.example/v1');
    await page.getByLabel('API key', { exact: true }).fill(TYPED_KEY);
    const refused = page.waitForResponse((r) => r.url().endsWith('/settings/providers'));
    await page.getByRole('button', { name: 'Save providers' }).click();
    assert.equal((await refused).status(), 400);
    await page.waitForLoadState();
    assert.match(await page.locator('#llm-baseUrl-error').innerText(), /must be an http or https URL/);
    assert.equal(await page.getByLabel('Base URL', { exact: true }).inputValue(), 'ftp://models.example/v1', 'the value is kept');
    assert.equal(await page.getByLabel('API key', { exact: true }).inputValue(), '', 'a typed key is not echoed');
    assert.match(await page.locator('#flash').innerText(), /Nothing was saved/);
    assertNoSecrets(await source(), 'the refused providers form');
    // Nothing of the refused change was stored.
    const stored = await (await page.request.get(`${server.base}/api/settings`)).json();
    assert.equal(stored.llm.baseUrl, `${vendor.base}/v1`);
    assert.equal(stored.llm.apiKey.last4, LLM_KEY.slice(-4));
    await saveScreenshot(page, 'settings-providers', 'light');
  });

  test('Test connection: success against an OpenAI-shaped loopback server, then the refused key, with htmx and without JavaScript', async () => {
    await open('providers');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.locator('#test-result li').first().waitFor();
    const ok = await page.locator('#test-result').innerText();
    assert.match(ok, /LLM: connected to/);
    assert.match(ok, /Embeddings: connected to .*4 dimensions/);
    assert.equal(new URL(page.url()).pathname, '/settings', 'htmx swapped the result in place');
    assert.ok(vendor.hits('/v1/models').length >= 1);

    // A key the endpoint refuses: the error, never the key.
    const r = await page.request.patch(`${server.base}/api/settings`, { data: { llm: { apiKey: 'sk-wrong-key-000000000000' }, embedding: { apiKey: 'sk-wrong-key-000000000000' } }, headers: { 'x-csrf-token': await page.locator('meta[name="csrf-token"]').getAttribute('content') ?? '' } });
    assert.equal(r.status(), 200, await r.text());
    await open('providers');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.locator('#test-result li').first().waitFor();
    const refused = await page.locator('#test-result').innerText();
    assert.match(refused, /LLM: failed: HTTP 401: the endpoint refused the key: check the API key/);
    assert.ok(!refused.includes('sk-wrong-key-000000000000'));
    await saveScreenshot(page, 'settings-test-connection', 'light');

    // Without JavaScript: a plain form post answers the whole section with the result.
    const csrf = (await page.locator('meta[name="csrf-token"]').getAttribute('content'))!;
    const plain = await fetch(`${server.base}/settings/test`, { method: 'POST', headers: { cookie: await cookieHeader(ui.context), 'content-type': 'application/x-www-form-urlencoded', origin: server.base }, body: new URLSearchParams({ _csrf: csrf }), redirect: 'manual' });
    assert.equal(plain.status, 200);
    const html = await plain.text();
    assert.match(html, /<h1>Settings<\/h1>/);
    assert.match(html, /the endpoint refused the key/);
    assert.ok(!html.includes('sk-wrong-key-000000000000'));

    // The right keys again for the rest of the suite.
    await open('providers');
    await page.getByLabel('API key', { exact: true }).fill(LLM_KEY);
    await page.getByLabel('Embedding API key').fill(EMBED_KEY);
    await page.getByRole('button', { name: 'Save providers' }).click();
    await page.waitForURL(/done=saved/);
  });

  test('git tokens: github.com and a self-managed host, write-only; removing a host', async () => {
    await open('git');
    await page.getByLabel('GitHub token (github.com)').fill(GITHUB_TOKEN);
    await page.locator('#git-host-0-host').fill('git.example.com');
    await page.locator('#git-host-0-provider').selectOption('gitlab');
    await page.locator('#git-host-0-token').fill(HOST_TOKEN);
    await page.getByRole('button', { name: 'Save git tokens' }).click();
    await page.waitForURL(/section=git&done=saved/);
    assert.equal(await page.locator('#git-host-0-host').inputValue(), 'git.example.com');
    assert.match(await page.locator('#git-githubToken-state').innerText(), /set/);
    assert.match(await page.locator('#git-host-0-token-state').innerText(), /set/);
    assert.match(await page.locator('#git-gitlabToken-state').innerText(), /not set/);
    assertNoSecrets(await source(), 'the git page');
    // A bad host name is refused beside its row; nothing changes.
    await page.locator('#git-host-1-host').fill('https://bad.example/path');
    await page.getByRole('button', { name: 'Save git tokens' }).click();
    await page.locator('#git-host-1-host-error').waitFor();
    assert.match(await page.locator('#git-host-1-host-error').innerText(), /must be a host name/);
    assert.equal(await page.locator('#git-host-1-host').inputValue(), 'https://bad.example/path');
    const hostsNow = async () => ((await (await page.request.get(`${server.base}/api/settings`)).json()).git.hosts as Array<{ host: string; token: { set: boolean } }>).map((h) => `${h.host}:${h.token.set}`);
    assert.deepEqual(await hostsNow(), ['git.example.com:true']);
    // A second host (GitHub Enterprise), then removed again; the first keeps its token throughout.
    await open('git');
    await page.locator('#git-host-1-host').fill('ghe.example.com:8443');
    await page.locator('#git-host-1-provider').selectOption('github');
    await page.getByRole('button', { name: 'Save git tokens' }).click();
    await page.waitForURL(/done=saved/);
    assert.deepEqual(await hostsNow(), ['git.example.com:true', 'ghe.example.com:8443:false']);
    await page.locator('.host-row', { has: page.locator('input[value="ghe.example.com:8443"]') }).getByLabel('Remove this host').check();
    await page.getByRole('button', { name: 'Save git tokens' }).click();
    await page.waitForURL(/done=saved/);
    assert.deepEqual(await hostsNow(), ['git.example.com:true']);
    assertNoSecrets(await source(), 'the git page');
    await saveScreenshot(page, 'settings-git', 'light');
  });

  test('access: anonymous parse On opens parsing to a signed-out browser, Off closes it; upload limits and MCP', async () => {
    const anon = await newPage(browser);
    track(anon);
    const anonParse = async () => (await anon.context.request.post(`${server.base}/api/parse`, { data: {} })).status();
    assert.equal(await anonParse(), 401);
    await open('access');
    await page.getByLabel('Add and parse libraries').check();
    await page.getByLabel('Most files per upload').fill('25');
    await page.getByLabel('Require an API key for /mcp').check();
    await page.getByRole('button', { name: 'Save access' }).click();
    await page.waitForURL(/section=access&done=saved/);
    assert.equal((await getAnonymousPermissions(server.kernel.store)).parse, true);
    assert.deepEqual(await getStoredUploadLimits(server.kernel.store), { maxBytes: null, maxFiles: 25 });
    assert.notEqual(await anonParse(), 401, 'a signed-out caller may parse now');
    const add = await anon.page.goto(`${server.base}/add`);
    assert.ok(!new URL(anon.page.url()).pathname.startsWith('/login'), `a signed-out browser is not sent to sign in for /add (status ${add?.status()})`);
    await page.reload();
    assert.equal(await page.getByLabel('Add and parse libraries').isChecked(), true);
    assert.equal(await page.getByLabel('Most files per upload').inputValue(), '25');
    // A limit out of range is refused beside its field, the others untouched.
    await page.getByLabel('Add and parse libraries').uncheck();
    await page.getByLabel('Most files per upload').fill('200000');
    await page.getByRole('button', { name: 'Save access' }).click();
    await page.locator('#uploads-maxFiles-error').waitFor();
    assert.match(await page.locator('#uploads-maxFiles-error').innerText(), /must be <= 100000/);
    assert.equal(await page.getByLabel('Most files per upload').inputValue(), '200000');
    assert.equal(await page.getByLabel('Add and parse libraries').isChecked(), false, 'the submitted values are kept');
    assert.equal((await getAnonymousPermissions(server.kernel.store)).parse, true, 'nothing of a refused change is saved');
    await saveScreenshot(page, 'settings-access-error', 'light');
    // Off again.
    await page.getByLabel('Most files per upload').fill('25');
    await page.getByRole('button', { name: 'Save access' }).click();
    await page.waitForURL(/done=saved/);
    assert.equal(await anonParse(), 401);
  });

  test('API keys: created and shown once with a copy button, listed by prefix with its usage, revoked behind a confirmation', async () => {
    await open('keys');
    await page.getByLabel('Name').fill('ci-bot');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.locator('#new-key');
    await shown.waitFor();
    const key = await shown.innerText();
    assert.match(key, /^rdk_[A-Za-z0-9_-]{20,}$/);
    assert.equal(await page.locator('button[data-copy="#new-key"]').count(), 1);
    await saveScreenshot(page, 'settings-keys-created', 'light');
    // Used twice, then listed by its prefix with that usage; the key itself is never shown again.
    for (let i = 0; i < 2; i++) assert.equal((await fetch(`${server.base}/api/v2/libs/search?libraryName=x&query=y`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
    await open('keys');
    assert.ok(!(await source()).includes(key), 'the key is shown once only');
    const row = page.locator('tr', { hasText: 'ci-bot' });
    assert.match(await row.innerText(), new RegExp(`${key.slice(0, 8)}`));
    assert.match(await row.locator('td.num').innerText(), /^2 \/ 600$/);
    // Without JavaScript the revoke form asks first (a confirmation page), and nothing is revoked yet.
    const id = (await row.getAttribute('data-key-id'))!;
    const csrf = (await page.locator('meta[name="csrf-token"]').getAttribute('content'))!;
    const ask = await fetch(`${server.base}/settings/keys/${id}/revoke`, { method: 'POST', headers: { cookie: await cookieHeader(ui.context), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrf }), redirect: 'manual' });
    assert.equal(ask.status, 200);
    assert.match(await ask.text(), /Revoke ci-bot/);
    assert.equal((await fetch(`${server.base}/api/v2/libs/search?libraryName=x&query=y`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
    // With JavaScript: the data-confirm dialog (accepted), then revoked.
    await open('keys');
    await page.locator('tr', { hasText: 'ci-bot' }).getByRole('button', { name: /Revoke/ }).click();
    await page.waitForURL(/section=keys&done=revoked/);
    assert.match(await page.locator('#flash').innerText(), /revoked/);
    assert.equal(await page.locator('tr', { hasText: 'ci-bot' }).count(), 0);
    assert.equal((await fetch(`${server.base}/api/v2/libs/search?libraryName=x&query=y`, { headers: { authorization: `Bearer ${key}` } })).status, 401);
  });

  test('a key name that came from an API client is shown as text, never as markup', async () => {
    const key = await createKey(server.base, { name: '<img src=x onerror=alert(1)><script>alert(2)</script>' });
    let dialogs = 0;
    const count = () => dialogs++;
    page.on('dialog', count);
    try {
      await open('keys');
      assert.equal(await page.locator('img[src="x"]').count(), 0);
      assert.equal(await page.locator('main script').count(), 0);
      assert.match(await page.locator('table').innerText(), /<img src=x onerror=alert\(1\)><script>alert\(2\)<\/script>/);
      assert.equal(dialogs, 0);
    } finally {
      page.off('dialog', count);
    }
    const id = (await server.kernel.store.listApiKeys()).find((k) => key.startsWith(k.prefix))!.id;
    await server.kernel.store.revokeApiKey(id);
  });

  test('policies: a source type turned off through the page is the policy the API serves', async () => {
    await open('policies');
    await page.getByLabel('Websites').uncheck();
    await page.getByLabel('Blocked libraries (quality bar; one library ID a line)').fill('/acme/old-docs');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.waitForURL(/section=policies&done=policy/);
    const policy = await getPolicy(server.kernel.store);
    assert.equal(policy.sourceTypes.websites.enabled, false);
    assert.equal(policy.sourceTypes.public_repos.enabled, true);
    assert.deepEqual(policy.libraryFilters.quality.blockedLibraries, ['/acme/old-docs']);
    assert.equal(await page.getByLabel('Websites').isChecked(), false);
    // A bad value is refused beside its field.
    await page.getByLabel('Blocked libraries (quality bar; one library ID a line)').fill('/acme/old-docs\nnot a library id');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.locator('#policy-blocked-error').waitFor();
    assert.match(await page.locator('#policy-blocked-error').innerText(), /not a library id|library ID/i);
    assert.match(await page.getByLabel('Blocked libraries (quality bar; one library ID a line)').inputValue(), /not a library id/);
    assert.deepEqual((await getPolicy(server.kernel.store)).libraryFilters.quality.blockedLibraries, ['/acme/old-docs']);
  });

  test('an expired licence: the banner says so on every section, and the policy can be read but not changed', async () => {
    const expired = await startApiServer({ licence: { days: -3 } });
    const ex = track(await newPage(browser));
    try {
      await firstAdminSession(ex.context, expired.base);
      await ex.page.goto(`${expired.base}/settings?section=policies`);
      assert.match(await ex.page.locator('p.banner').innerText(), /^The licence expired on \d{4}-\d\d-\d\d/);
      assert.equal(await ex.page.getByRole('button', { name: 'Save policy' }).isDisabled(), true);
      const csrf = (await ex.page.locator('meta[name="csrf-token"]').getAttribute('content'))!;
      const r = await ex.context.request.post(`${expired.base}/settings/policies`, { form: { _csrf: csrf, 'libraryFilters.mode': 'none' } });
      assert.equal(r.status(), 403);
      assert.match(await r.text(), /needs a valid licence/);
      assert.equal((await getPolicy(expired.kernel.store)).sourceTypes.websites.enabled, true, 'nothing changed');
      await ex.page.goto(`${expired.base}/settings?section=access`);
      assert.match(await ex.page.locator('p.banner').innerText(), /expired/);
    } finally {
      await ex.context.close();
      await expired.close();
    }
  });

  test('licence: licensee, plan, trial, days left; the support bundle downloads through its route', async () => {
    await open('licence');
    const facts = await page.locator('dl.facts').innerText();
    assert.match(facts, /Example Org/);
    assert.match(facts, /team/);
    assert.match(facts, /trial/);
    assert.match(facts, /Days left\s+20/);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download support bundle' }).click()]);
    assert.match(download.suggestedFilename(), /^refdesk-support-.*\.zip$/);
  });

  test('a form post without the CSRF token changes nothing and says why', async () => {
    const before = await getAnonymousPermissions(server.kernel.store);
    const r = await fetch(`${server.base}/settings/access`, { method: 'POST', headers: { cookie: await cookieHeader(ui.context), 'content-type': 'application/x-www-form-urlencoded' }, body: 'anonymous.delete=on', redirect: 'manual' });
    assert.equal(r.status, 403);
    assert.match(await r.text(), /nothing was changed/);
    assert.deepEqual(await getAnonymousPermissions(server.kernel.store), before);
  });

  test('audit log: the changes made above, paged, without a secret', async () => {
    await open('audit');
    const text = await page.locator('table.audit').innerText();
    for (const action of ['settings.change', 'keys.create', 'keys.revoke', 'policy.change', 'auth.credentials']) assert.match(text, new RegExp(action.replace('.', '\\.')));
    assert.match(text, /llm\.apiKey/);
    assertNoSecrets(await source(), 'the audit page');
    const older = page.getByRole('link', { name: 'Older entries' });
    if ((await server.kernel.store.listAudit({ limit: 100 })).length > 25) {
      await older.click();
      await page.waitForURL(/before=\d+/);
      assert.ok((await page.locator('table.audit tbody tr').count()) > 0);
    }
  });

  test('screenshots of every section, light and dark, and one at phone width', async () => {
    const dark = await newPage(browser, { colorScheme: 'dark' });
    const phone = await newPage(browser, { width: 390 });
    track(dark);
    track(phone);
    await signIn(dark.context, server.base, 'operator', PASSWORD);
    await signIn(phone.context, server.base, 'operator', PASSWORD);
    // A key in use, so the keys section shows a row.
    const key = await createKey(server.base, { name: 'docs-site' });
    await fetch(`${server.base}/api/v2/libs/search?libraryName=x&query=y`, { headers: { authorization: `Bearer ${key}` } });
    for (const s of SETTINGS_SECTIONS) {
      for (const [p, theme] of [[page, 'light'], [dark.page, 'dark']] as const) {
        await p.goto(`${server.base}/settings?section=${s.id}`);
        assertNoSecrets(await p.content(), `section ${s.id}`);
        await saveScreenshot(p, `settings-${s.id}`, theme);
      }
    }
    await phone.page.goto(`${server.base}/settings?section=keys`);
    const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling at phone width (${overflow}px)`);
    await saveScreenshot(phone.page, 'settings-phone', 'light');
  });

  test('account: a wrong current password is named beside its field; new credentials; sign out everywhere ends every session', async () => {
    const other = await newPage(browser);
    track(other);
    await signIn(other.context, server.base, 'operator', PASSWORD);
    await open('account');
    await page.getByLabel('Current password').fill('not-the-password');
    await page.getByLabel('New password').fill('another-long-password-2');
    await page.getByRole('button', { name: 'Change credentials' }).click();
    await page.locator('#currentPassword-error').waitFor();
    assert.match(await page.locator('#currentPassword-error').innerText(), /currentPassword is wrong/);
    assert.equal(await page.getByLabel('Current password').inputValue(), '', 'passwords are never echoed');
    assert.equal(await page.getByLabel('New username').inputValue(), 'operator');
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password').fill('another-long-password-2');
    await page.getByRole('button', { name: 'Change credentials' }).click();
    await page.waitForURL(/section=account&done=credentials/);
    assert.match(await page.locator('#flash').innerText(), /Credentials changed/);
    assert.equal(await page.getByRole('link', { name: 'Run the setup wizard again' }).getAttribute('href'), '/setup?again=1');
    // The other browser's session ended with the change; sign it in again, then sign out everywhere.
    assert.equal((await other.context.request.get(`${server.base}/api/auth/session`)).status(), 401);
    await signIn(other.context, server.base, 'operator', 'another-long-password-2');
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.waitForURL(/\/login/);
    assert.equal((await other.context.request.get(`${server.base}/api/auth/session`)).status(), 401);
    assert.equal((await page.request.get(`${server.base}/api/auth/session`)).status(), 401);
  });
});
