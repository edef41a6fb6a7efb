/**
 * /add (issue 20, docs/ui.md "Add a library"): forms built from GET /api/sources, in a real
 * browser (chromium) and over plain HTTP without JavaScript, against a real server with the real
 * source plugins and a third-party one.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ROOT, call, startApiServer, writeDocs, type ApiServer } from '../server/helpers/api-server.ts';
import { launchBrowser, newPage, saveScreenshot } from '../helpers/browser.ts';
import { RepoBuilder } from '../plugins/source-git/repo-builder.ts';
import { keptValues, problemsByField, readSchemaForm, schemaFields } from '../../server/ui/schema-form.ts';
import { seenWikiSpecs, wikiSpecSchema } from '../fixtures/ui-plugins/wiki-source.ts';
import { validate } from '../../core/validate.ts';

const PASSWORD = 'a-long-operator-password-1';
const PLANTED = 'planted-secret-value-7d1f';

const plugin = (name: string, options?: Record<string, unknown>) => ({ use: join(ROOT, 'plugins', name, 'index.ts'), ...(options ? { options } : {}) });

function startServer(): Promise<ApiServer> {
  return startApiServer({
    withoutTestSources: true,
    plugins: [
      plugin('source-git', { git: { allowFileUrls: true, statsTimeoutMs: 0, attempts: 1 } }),
      plugin('source-website'),
      plugin('source-llms-txt'),
      plugin('source-openapi'),
      plugin('source-package'),
      plugin('source-confluence'),
      { use: join(ROOT, 'test/fixtures/ui-plugins/wiki-source.ts') },
      { use: join(ROOT, 'test/fixtures/custom-source/notes-source.ts') },
    ],
  });
}

/** Signs the browser context in through the API (the sign-in page is ui-auth's) and changes the factory credentials. */
async function signIn(context: BrowserContext, base: string): Promise<string> {
  const login = await context.request.post(`${base}/api/auth/login`, { data: { username: 'admin', password: 'refdesk' } });
  assert.equal(login.status(), 200, await login.text());
  const first = (await login.json()).csrfToken as string;
  const changed = await context.request.post(`${base}/api/auth/credentials`, { data: { currentPassword: 'refdesk', newUsername: 'operator', newPassword: PASSWORD }, headers: { 'x-csrf-token': first } });
  assert.equal(changed.status(), 200, await changed.text());
  return (await changed.json()).csrfToken as string;
}

/** Signs a new browser context in with the credentials signIn set; the session's CSRF token. */
async function signInAgain(context: BrowserContext, base: string): Promise<string> {
  const r = await context.request.post(`${base}/api/auth/login`, { data: { username: 'operator', password: PASSWORD } });
  assert.equal(r.status(), 200, await r.text());
  return (await r.json()).csrfToken as string;
}

async function setAnonymousParse(context: BrowserContext, base: string, csrf: string, on: boolean): Promise<void> {
  const r = await context.request.patch(`${base}/api/settings`, { data: { anonymous: { parse: on } }, headers: { 'x-csrf-token': csrf } });
  assert.equal(r.status(), 200, await r.text());
}

/** Waits until the library's newest job has ended; returns it. */
async function jobEnded(server: ApiServer, libraryId: string): Promise<{ state: string; error?: unknown }> {
  for (let i = 0; i < 400; i++) {
    const [job] = await server.kernel.store.listJobs({ libraryId, limit: 1 });
    if (job && ['succeeded', 'failed', 'interrupted'].includes(job.state)) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the job of ${libraryId} did not end`);
}

/**
 * Console errors but the 404s of /login and /libraries/{id}: those pages belong to the other UI
 * parts of issue 20 and are not in this branch yet (the redirects to them are tested here).
 */
const realErrors = (errors: string[]) => errors.filter((e) => !/status of 404 \(Not Found\)/.test(e));

async function submitAndLand(page: Page, path: RegExp): Promise<string> {
  await Promise.all([page.waitForURL(path), page.getByRole('button', { name: 'Add library' }).click()]);
  return new URL(page.url()).pathname;
}

describe('schema-to-form renderer', () => {
  test("a third-party source's schema becomes labelled fields of every kind; the post reads back into a valid spec", () => {
    const fields = schemaFields(wikiSpecSchema, 'spec', { values: { 'spec.site': 'https://w.example', 'spec.apiSecret': PLANTED }, errors: { 'spec.space': 'Required.' } });
    const byName = Object.fromEntries(fields.map((f) => [f.name, f]));
    assert.deepEqual(
      fields.map((f) => [f.name, f.kind]),
      [
        ['spec.site', 'text'],
        ['spec.space', 'text'],
        ['spec.format', 'select'],
        ['spec.includeDrafts', 'checkbox'],
        ['spec.followLinks', 'checkbox'],
        ['spec.maxPages', 'number'],
        ['spec.labels', 'lines'],
        ['spec.auth', 'fieldset'],
        ['spec.apiSecret', 'password'],
      ],
    );
    assert.equal(byName['spec.site'].value, 'https://w.example');
    assert.equal(byName['spec.site'].required, true);
    assert.equal(byName['spec.format'].required, false);
    assert.equal(byName['spec.site'].hint, 'Address of the wiki, e.g. https://wiki.example.com.');
    assert.equal(byName['spec.space'].error, 'Required.');
    assert.equal(byName['spec.apiSecret'].value, '', 'a secret is never filled back in');
    assert.equal(byName['spec.apiSecret'].label, 'API secret');
    assert.equal(byName['spec.maxPages'].step, '1');
    assert.equal(byName['spec.maxPages'].min, '1');
    assert.equal(byName['spec.followLinks'].checked, true, 'a default of true shows checked');
    assert.deepEqual(byName['spec.format'].options, [['', '(default)'], ['markdown', 'markdown'], ['html', 'html']]);
    assert.deepEqual(byName['spec.auth'].children.map((f) => [f.name, f.kind]), [['spec.auth.user', 'text'], ['spec.auth.mode', 'select']]);

    const form = { _csrf: 'x', 'spec.site': ' https://w.example ', 'spec.space': 'ENG', 'spec.format': 'html', 'spec.includeDrafts': 'true', 'spec.maxPages': '25', 'spec.labels': 'api\n\n guide \n', 'spec.auth.user': 'bot', 'spec.auth.mode': '', 'spec.apiSecret': PLANTED };
    const read = readSchemaForm(wikiSpecSchema, 'spec', form);
    assert.deepEqual(read.errors, {});
    assert.deepEqual(read.value, { site: 'https://w.example', space: 'ENG', format: 'html', includeDrafts: true, followLinks: false, maxPages: 25, labels: ['api', 'guide'], auth: { user: 'bot' }, apiSecret: PLANTED });
    assert.deepEqual(validate(wikiSpecSchema, read.value, 'spec'), []);
    assert.ok(!Object.values(keptValues(wikiSpecSchema, 'spec', form)).includes(PLANTED), 'kept values leave the secret out');
    assert.ok(!('_csrf' in keptValues(wikiSpecSchema, 'spec', form)));

    const bad = readSchemaForm(wikiSpecSchema, 'spec', { 'spec.maxPages': '2.5', 'spec.format': 'pdf' });
    assert.deepEqual(Object.keys(bad.errors).sort(), ['spec.format', 'spec.maxPages']);
    const problems = problemsByField(validate(wikiSpecSchema, { site: 'ftp://x', labels: [''] }, 'spec'));
    assert.equal(problems['spec.space'], 'Required.');
    assert.match(problems['spec.site'], /pattern/);
    assert.ok(problems['spec.labels']);
  });
});

describe('/add in a real browser', () => {
  let server: ApiServer;
  let browser: Browser;
  let bare: string;
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    const repo = new RepoBuilder(join(server.scratch, 'git'), 'handbook');
    repo.commit({ 'README.md': '# Handbook\n\nHow we work.\n', 'docs/intro.md': '# Intro\n\nThe handbook intro.\n' });
    bare = repo.publish();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('an admin adds an uploaded folder, a git repository, an OpenAPI file and a third-party source; errors stand beside their fields; no CSP errors', async () => {
    const { page, context, consoleErrors } = await newPage(browser);
    await signIn(context, server.base);

    // Every enabled kind has a tab, the third-party one included; ?kind= picks one without JS.
    await page.goto(`${server.base}/add`);
    const tabs = await page.locator('nav[aria-label="Source kinds"] a').allTextContents();
    for (const t of ['Git repository', 'Website (crawled)', 'llms.txt', 'OpenAPI by URL', 'OpenAPI file', 'npm package', 'PyPI package', 'Uploaded files or archive', 'Confluence space', 'Team wiki space (a third-party source)']) {
      assert.ok(tabs.includes(t), `tab ${t} in ${tabs.join(', ')}`);
    }
    // Tabs in the config's order (no list of kinds in the UI): the first is this server's first source, upload.
    assert.equal(tabs[0], 'Uploaded files or archive');
    assert.equal(await page.locator('a[aria-current="page"]', { hasText: 'Uploaded files or archive' }).count(), 1);
    for (const kind of ['git', 'website', 'confluence', 'upload']) {
      await page.goto(`${server.base}/add?kind=${kind}`);
      await saveScreenshot(page, `add-${kind}`, 'light');
    }
    await page.goto(`${server.base}/add?kind=confluence`);
    assert.equal(await page.locator('#f-spec-apiToken').getAttribute('type'), 'password');
    assert.equal(await page.getByLabel('Space key').count(), 1);

    // Upload a folder of markdown files: land on the library's page; the build finishes.
    const folder = writeDocs(server.scratch, 'guide', { 'intro.md': '# Intro\n\nStart here.\n', 'usage/config.md': '# Config\n\nSet `port`.\n' });
    await page.goto(`${server.base}/add?kind=upload`);
    await page.getByLabel('Name').fill('team-guide');
    await page.getByLabel('Title').fill('Team guide');
    await page.locator('#f-folder').setInputFiles(folder);
    assert.equal(await submitAndLand(page, /\/libraries\/docs\/team-guide$/), '/libraries/docs/team-guide');
    assert.equal((await jobEnded(server, '/docs/team-guide')).state, 'succeeded');
    const lib = await server.kernel.store.getLibrary('/docs/team-guide');
    assert.equal(lib?.title, 'Team guide');
    // Each file kept its path inside the chosen folder (the upload source drops the folder's own name).
    assert.deepEqual([...(await server.kernel.store.getDocuments('/docs/team-guide', '')).keys()].sort(), ['intro.md', 'usage/config.md']);

    // A git repository made by this test (file URL, allowed by the operator's git options): its job starts.
    await page.goto(`${server.base}/add?kind=git`);
    await page.getByLabel('URL').fill(`file://${bare}`);
    await page.getByLabel('Branch').fill('main');
    const gitPath = await submitAndLand(page, /\/libraries\/.+/);
    const gitId = gitPath.slice('/libraries'.length);
    const [gitJob] = await server.kernel.store.listJobs({ libraryId: gitId, limit: 1 });
    assert.ok(gitJob, `a job for ${gitId}`);
    assert.equal((await jobEnded(server, gitId)).state, 'succeeded');

    // An OpenAPI specification by file.
    const specFile = join(server.scratch, 'petstore.json');
    writeFileSync(specFile, JSON.stringify({ openapi: '3.0.3', info: { title: 'Petstore', version: '1.0.0' }, paths: { '/pets': { get: { summary: 'List pets', responses: { 200: { description: 'ok' } } } } } }));
    await page.goto(`${server.base}/add?kind=openapi-file`);
    await page.getByLabel('Specification file').setInputFiles(specFile);
    await page.getByLabel('Title').fill('petstore');
    assert.equal(await submitAndLand(page, /\/libraries\/openapi\/petstore$/), '/libraries/openapi/petstore');
    assert.equal((await jobEnded(server, '/openapi/petstore')).state, 'succeeded');

    // A schema error shows beside its field, the values kept and the secret not echoed.
    await page.goto(`${server.base}/add?kind=git`);
    await page.getByLabel('URL').fill('https://git.example.com/acme/handbook.git');
    await page.getByLabel('Branch').fill('bad..branch');
    await page.getByLabel('Token').fill(PLANTED);
    await page.getByRole('button', { name: 'Add library' }).click();
    await page.locator('#f-spec-branch-error').waitFor();
    assert.match(await page.locator('#f-spec-branch-error').innerText(), /pattern/);
    assert.equal(await page.locator('#f-spec-branch').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('URL').inputValue(), 'https://git.example.com/acme/handbook.git');
    assert.equal(await page.getByLabel('Branch').inputValue(), 'bad..branch');
    assert.equal(await page.getByLabel('Token').inputValue(), '');
    assert.ok(!(await page.content()).includes(PLANTED));
    const summary = await page.locator('#add-errors[role="alert"]').innerText();
    assert.match(summary, /Not added: some fields need fixing/);
    assert.match(summary, /Branch: Must match pattern/);
    assert.equal(await page.locator('#add-errors a').getAttribute('href'), '#f-spec-branch');
    assert.ok(new URL(page.url()).pathname === '/add');
    await saveScreenshot(page, 'add-error', 'light');

    // The third-party source's form: every field kind, posted as the spec its schema describes.
    await page.goto(`${server.base}/add?kind=wiki`);
    await page.getByLabel('Site').fill('https://wiki.example.com');
    await page.getByLabel('Space (required)', { exact: true }).fill('ENG');
    await page.getByLabel('Format').selectOption('html');
    await page.getByLabel('Include drafts').check();
    await page.getByLabel('Follow links').uncheck();
    await page.getByLabel('Max pages').fill('30');
    await page.getByLabel('Labels').fill('api\nguide');
    await page.getByLabel('User').fill('reader');
    await page.getByLabel('API secret').fill(PLANTED);
    await saveScreenshot(page, 'add-third-party', 'light');
    assert.equal(await submitAndLand(page, /\/libraries\/wiki\/eng$/), '/libraries/wiki/eng');
    assert.equal((await jobEnded(server, '/wiki/eng')).state, 'succeeded');
    assert.deepEqual(seenWikiSpecs.at(-1), { site: 'https://wiki.example.com', space: 'ENG', format: 'html', includeDrafts: true, followLinks: false, maxPages: 30, labels: ['api', 'guide'], auth: { user: 'reader' }, apiSecret: PLANTED });
    const stored = await server.kernel.store.getLibrary('/wiki/eng');
    assert.ok(!JSON.stringify(stored).includes(PLANTED), 'the secret is sealed at rest');

    assert.deepEqual(realErrors(consoleErrors), []);
    await context.close();
  });

  test('a custom source without deriveId: its form comes from GET /api/sources, its ID from the first string field (issue 23)', async () => {
    const { page, context, consoleErrors } = await newPage(browser);
    await signInAgain(context, server.base);
    const listed = (await call(server.base, 'GET', '/api/sources')).body.sources.find((x: { kind: string }) => x.kind === 'notes');
    await page.goto(`${server.base}/add`);
    assert.ok((await page.locator('nav[aria-label="Source kinds"] a').allTextContents()).includes(listed.title), 'a tab titled as GET /api/sources lists it');
    await page.goto(`${server.base}/add?kind=notes`);
    assert.equal(await page.locator('#f-spec-token').getAttribute('type'), 'password', 'the writeOnly token is a password field');
    await page.getByLabel('Project').fill('Ops Handbook');
    await page.getByLabel('Topics').fill('incident review\npager rotation');
    await page.getByLabel('Token').fill(PLANTED);
    assert.equal(await submitAndLand(page, /\/libraries\/notes\/ops-handbook$/), '/libraries/notes/ops-handbook');
    assert.equal((await jobEnded(server, '/notes/ops-handbook')).state, 'succeeded');
    const answer = await call(server.base, 'GET', `/api/v2/context?libraryId=/notes/ops-handbook&query=${encodeURIComponent('pager rotation')}`);
    assert.equal(answer.status, 200, answer.text);
    assert.match(answer.text, /the pager rotation page explains `pager_rotation\(\)`/);
    assert.ok(!JSON.stringify(await server.kernel.store.getLibrary('/notes/ops-handbook')).includes(PLANTED));
    assert.deepEqual(realErrors(consoleErrors), []);
    await context.close();
  });

  test('dark theme and phone width', async () => {
    const dark = await newPage(browser, { colorScheme: 'dark' });
    // The first test changed the factory credentials: sign in with the new ones.
    await signInAgain(dark.context, server.base);
    for (const kind of ['git', 'website', 'confluence', 'upload']) {
      await dark.page.goto(`${server.base}/add?kind=${kind}`);
      await saveScreenshot(dark.page, `add-${kind}`, 'dark');
    }
    await dark.page.goto(`${server.base}/add?kind=wiki`);
    await saveScreenshot(dark.page, 'add-third-party', 'dark');
    assert.deepEqual(dark.consoleErrors, []);
    await dark.context.close();

    const phone = await newPage(browser, { width: 390 });
    await signInAgain(phone.context, server.base);
    await phone.page.goto(`${server.base}/add?kind=git`);
    const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `no sideways scrolling at phone width (${overflow}px)`);
    await saveScreenshot(phone.page, 'add-git-phone', 'light');
    assert.deepEqual(phone.consoleErrors, []);
    await phone.context.close();
  });

  test('without JavaScript in the browser: the upload form (multipart, token in its action) and a spec form still add', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      await signInAgain(context, server.base);
      const page = await context.newPage();
      const folder = writeDocs(server.scratch, 'nojs', { 'one.md': '# One\n\nFirst.\n' });
      await page.goto(`${server.base}/add?kind=upload`);
      await page.getByLabel('Name').fill('no-js');
      await page.locator('#f-files').setInputFiles(join(folder, 'one.md'));
      assert.equal(await submitAndLand(page, /\/libraries\/docs\/no-js$/), '/libraries/docs/no-js');
      await page.goto(`${server.base}/add?kind=wiki`);
      await page.getByLabel('Site').fill('https://wiki.example.com');
      await page.getByLabel('Space (required)', { exact: true }).fill('NoJs');
      assert.equal(await submitAndLand(page, /\/libraries\/wiki\/nojs$/), '/libraries/wiki/nojs');
      assert.equal((await jobEnded(server, '/docs/no-js')).state, 'succeeded');
    } finally {
      await context.close();
    }
  });

  test('anonymous parse: Off, a signed-out browser is sent to /login; On, it may add a git repository or an upload, and only those', async () => {
    const admin = await newPage(browser);
    const csrf = await signInAgain(admin.context, server.base);
    const visitor = await newPage(browser);

    await setAnonymousParse(admin.context, server.base, csrf, false);
    await visitor.page.goto(`${server.base}/add?kind=upload`);
    assert.equal(new URL(visitor.page.url()).pathname, '/login');
    assert.equal(new URL(visitor.page.url()).searchParams.get('next'), '/add?kind=upload');

    await setAnonymousParse(admin.context, server.base, csrf, true);
    await visitor.page.goto(`${server.base}/add`);
    assert.equal(new URL(visitor.page.url()).pathname, '/add');
    // In the config's order (the upload source comes first in this server's config).
    assert.deepEqual(await visitor.page.locator('nav[aria-label="Source kinds"] a').allTextContents(), ['Uploaded files or archive', 'Git repository']);
    await visitor.page.goto(`${server.base}/add?kind=git`);
    assert.equal(await visitor.page.locator('#f-spec-branch').count(), 0, 'signed out, git takes an address only (POST /api/parse)');
    const npm = await visitor.page.goto(`${server.base}/add?kind=npm`);
    assert.equal(npm?.status(), 404);

    const folder = writeDocs(server.scratch, 'visitor', { 'a.md': '# A\n\nAlpha.\n', 'b.md': '# B\n\nBeta.\n' });
    await visitor.page.goto(`${server.base}/add?kind=upload`);
    await visitor.page.getByLabel('Name').fill('visitor-notes');
    await visitor.page.locator('#f-files').setInputFiles([join(folder, 'a.md'), join(folder, 'b.md')]);
    // Signed out, the library's page is not open: the visitor follows its job by the job's token.
    assert.equal(await submitAndLand(visitor.page, /\/add\/queued\?job=/), '/add/queued');
    assert.match(await visitor.page.locator('main').innerText(), /\/docs\/visitor-notes/);
    assert.equal((await jobEnded(server, '/docs/visitor-notes')).state, 'succeeded');
    await visitor.page.reload();
    assert.match(await visitor.page.locator('main').innerText(), /succeeded/);
    const status = await visitor.page.getByRole('link', { name: 'Job status' }).getAttribute('href');
    assert.equal((await visitor.context.request.get(`${server.base}${status}`)).status(), 200);
    // Without the token the job is not shown.
    const bare = await fetch(`${server.base}/add/queued?job=${encodeURIComponent(new URL(visitor.page.url()).searchParams.get('job')!)}`);
    assert.equal(bare.status, 401);
    assert.doesNotMatch(await bare.text(), /visitor-notes/);

    // Off again: the open page's form is refused and leads to sign-in.
    await visitor.page.goto(`${server.base}/add?kind=upload`);
    await setAnonymousParse(admin.context, server.base, csrf, false);
    await visitor.page.getByLabel('Name').fill('late');
    await visitor.page.locator('#f-files').setInputFiles(join(folder, 'a.md'));
    await visitor.page.getByRole('button', { name: 'Add library' }).click();
    await visitor.page.waitForURL(/\/login/);
    assert.equal(await server.kernel.store.getLibrary('/docs/late'), null);
    assert.deepEqual(realErrors(visitor.consoleErrors), []);
    await admin.context.close();
    await visitor.context.close();
  });
});

describe('/add over plain HTTP (no JavaScript)', () => {
  let server: ApiServer;
  let cookie = '';
  let csrf = '';
  before(async () => {
    server = await startServer();
    const first = await call(server.base, 'POST', '/api/auth/login', { json: { username: 'admin', password: 'refdesk' } });
    cookie = first.headers.getSetCookie().find((c) => c.startsWith('refdesk_session='))!.split(';')[0];
    const changed = await call(server.base, 'POST', '/api/auth/credentials', { json: { currentPassword: 'refdesk', newUsername: 'operator', newPassword: PASSWORD }, headers: { cookie, 'x-csrf-token': first.body.csrfToken } });
    csrf = changed.body.csrfToken;
  });
  after(async () => {
    await server?.close();
  });

  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const urlencoded = { 'content-type': 'application/x-www-form-urlencoded' };

  function multipart(fields: Record<string, string>, files: Array<[string, string, string]>): FormData {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    for (const [field, name, content] of files) fd.append(field, new Blob([content], { type: 'text/markdown' }), name);
    return fd;
  }

  test('a signed-in form posts with the session _csrf and answers 303 to the library; without it 403 csrf_failed', async () => {
    const page = await call(server.base, 'GET', '/add?kind=wiki', { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.match(page.text, new RegExp(`name="_csrf" value="${csrf}"`));
    const body = { 'spec.site': 'https://wiki.example.com', 'spec.space': 'Docs', 'spec.maxPages': '5' };
    const refused = await call(server.base, 'POST', '/add?kind=wiki', { headers: { cookie, ...urlencoded }, body: form(body) });
    assert.equal(refused.status, 403);
    assert.match(refused.text, /csrf_failed[\s\S]*CSRF token/);
    const ok = await call(server.base, 'POST', '/add?kind=wiki', { headers: { cookie, ...urlencoded }, body: form({ ...body, _csrf: csrf }) });
    assert.equal(ok.status, 303, ok.text);
    assert.equal(ok.headers.get('location'), '/libraries/wiki/docs');
    assert.equal((await jobEnded(server, '/wiki/docs')).state, 'succeeded');
  });

  test('a schema error answers 400 with the form, the message beside the field and the values kept (secrets not echoed)', async () => {
    const r = await call(server.base, 'POST', '/add?kind=wiki', { headers: { cookie, ...urlencoded }, body: form({ _csrf: csrf, 'spec.site': 'ftp://nope', 'spec.space': 'has space', 'spec.maxPages': 'many', 'spec.apiSecret': PLANTED }) });
    assert.equal(r.status, 400);
    assert.match(r.text, /id="f-spec-maxPages-error">Give a whole number\./);
    assert.match(r.text, /id="f-spec-site"[^>]*value="ftp:\/\/nope"/);
    assert.ok(!r.text.includes(PLANTED));
    const schema = await call(server.base, 'POST', '/add?kind=wiki', { headers: { cookie, ...urlencoded }, body: form({ _csrf: csrf, 'spec.site': 'ftp://nope', 'spec.space': 'has space' }) });
    assert.equal(schema.status, 400);
    assert.match(schema.text, /id="f-spec-site-error">Must match pattern/);
    assert.match(schema.text, /id="f-spec-space-error">Must match pattern/);
    // A URL the network guard refuses (a literal private address) shows as the form's error.
    const guarded = await call(server.base, 'POST', '/add?kind=llmstxt', { headers: { cookie, ...urlencoded }, body: form({ _csrf: csrf, 'spec.url': 'http://10.1.2.3/llms.txt' }) });
    assert.equal(guarded.status, 403, guarded.text);
    assert.match(guarded.text, /id="add-errors" role="alert">\s*<p>Not added: Refusing to fetch from &quot;10\.1\.2\.3&quot;/);
    assert.match(guarded.text, /value="http:\/\/10\.1\.2\.3\/llms\.txt"/);
  });

  test('multipart forms: an upload needs ?_csrf= (session) and lands on the library; the API rule is the same', async () => {
    const files: Array<[string, string, string]> = [['file', 'intro.md', '# Intro\n\nHello.\n']];
    const without = await call(server.base, 'POST', '/add?kind=upload', { headers: { cookie }, body: multipart({ name: 'plain' }, files) });
    assert.equal(without.status, 403);
    assert.match(without.text, /csrf_failed/);
    const apiWithout = await call(server.base, 'POST', '/api/libraries/upload', { headers: { cookie }, body: multipart({ name: 'plain' }, files) });
    assert.equal(apiWithout.status, 403);
    assert.equal(apiWithout.body.error, 'csrf_failed');
    assert.equal(await server.kernel.store.getLibrary('/docs/plain'), null);
    const page = await call(server.base, 'GET', '/add?kind=upload', { headers: { cookie } });
    const action = /id="add-form" method="post" action="([^"]+)"/.exec(page.text)![1].replace(/&amp;/g, '&');
    assert.equal(action, `/add?kind=upload&_csrf=${encodeURIComponent(csrf)}`);
    // A browser sends an empty part for the file input left empty: skipped.
    const fd = multipart({ name: 'plain' }, files);
    fd.append('file', new Blob([]), '');
    const ok = await call(server.base, 'POST', action, { headers: { cookie }, body: fd });
    assert.equal(ok.status, 303, ok.text);
    assert.equal(ok.headers.get('location'), '/libraries/docs/plain');
    const bad = await call(server.base, 'POST', action, { headers: { cookie }, body: multipart({ name: 'bad name!', title: 'Kept title' }, files) });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /id="f-title"[^>]*value="Kept title"/);
    const empty = await call(server.base, 'POST', action, { headers: { cookie }, body: multipart({ name: 'nothing' }, []) });
    assert.equal(empty.status, 400);
    assert.match(empty.text, /No files/);
    // The upload limits of the settings apply as on the API, and say so on the form.
    const limit = await call(server.base, 'PATCH', '/api/settings', { json: { uploads: { maxBytes: 1000 } }, headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(limit.status, 200, limit.text);
    const big = await call(server.base, 'POST', action, { headers: { cookie }, body: multipart({ name: 'big', title: 'Big one' }, [['file', 'big.md', `# Big\n\n${'x'.repeat(3000)}\n`]]) });
    assert.equal(big.status, 422, big.text);
    assert.match(big.text, /<p>Not added: The upload is larger than 1000 bytes/);
    assert.match(big.text, /id="f-title"[^>]*value="Big one"/);
    assert.equal(await server.kernel.store.getLibrary('/docs/big'), null);
    await call(server.base, 'PATCH', '/api/settings', { json: { uploads: null }, headers: { cookie, 'x-csrf-token': csrf } });
  });

  test('signed out with anonymous parse On: the form token (cookie + _csrf) is required, cross-site posts are refused', async () => {
    const on = await call(server.base, 'PATCH', '/api/settings', { json: { anonymous: { parse: true } }, headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(on.status, 200, on.text);
    const page = await call(server.base, 'GET', '/add?kind=git');
    assert.equal(page.status, 200);
    const formCookie = page.headers.getSetCookie().find((c) => c.startsWith('refdesk_form='))!;
    assert.match(formCookie, /HttpOnly/);
    assert.match(formCookie, /SameSite=Strict/);
    const anonCookie = formCookie.split(';')[0];
    const token = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
    const body = { url: 'https://github.com/acme/widgets' };
    const noToken = await call(server.base, 'POST', '/add?kind=git', { headers: { cookie: anonCookie, ...urlencoded }, body: form(body) });
    assert.equal(noToken.status, 403);
    assert.match(noToken.text, /csrf_failed[\s\S]*form token/);
    const noCookie = await call(server.base, 'POST', '/add?kind=git', { headers: urlencoded, body: form({ ...body, _csrf: token }) });
    assert.equal(noCookie.status, 403);
    const otherCookie = await call(server.base, 'POST', '/add?kind=git', { headers: { cookie: `refdesk_form=${'x'.repeat(43)}`, ...urlencoded }, body: form({ ...body, _csrf: token }) });
    assert.equal(otherCookie.status, 403);
    const crossSite = await call(server.base, 'POST', '/add?kind=git', { headers: { cookie: anonCookie, origin: 'https://evil.example', ...urlencoded }, body: form({ ...body, _csrf: token }) });
    assert.equal(crossSite.status, 403);
    assert.match(crossSite.text, /another site/);
    // An admin-only kind is not offered to a signed-out visitor.
    const npm = await call(server.base, 'POST', '/add?kind=npm', { headers: { cookie: anonCookie, ...urlencoded }, body: form({ 'spec.name': 'zod', _csrf: token }) });
    assert.equal(npm.status, 404);
    const bad = await call(server.base, 'POST', '/add?kind=git', { headers: { cookie: anonCookie, ...urlencoded }, body: form({ url: 'file:///etc', _csrf: token }) });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /Not added: .*file/);
    const ok = await call(server.base, 'POST', '/add?kind=git', { headers: { cookie: anonCookie, ...urlencoded }, body: form({ ...body, _csrf: token }) });
    assert.equal(ok.status, 303, ok.text);
    assert.match(ok.headers.get('location')!, /^\/add\/queued\?job=[^&]+&token=[\w-]+$/);
    // Multipart: the token in the action's query string.
    const upPage = await call(server.base, 'GET', '/add?kind=upload', { headers: { cookie: anonCookie } });
    const action = /id="add-form" method="post" action="([^"]+)"/.exec(upPage.text)![1].replace(/&amp;/g, '&');
    const upNoToken = await call(server.base, 'POST', '/add?kind=upload', { headers: { cookie: anonCookie }, body: multipart({ name: 'anon' }, [['file', 'a.md', '# A\n']]) });
    assert.equal(upNoToken.status, 403);
    const up = await call(server.base, 'POST', action, { headers: { cookie: anonCookie }, body: multipart({ name: 'anon' }, [['file', 'a.md', '# A\n']]) });
    assert.equal(up.status, 303, up.text);
    assert.match(up.headers.get('location')!, /^\/add\/queued\?job=[^&]+&token=[\w-]+$/);
    const off = await call(server.base, 'PATCH', '/api/settings', { json: { anonymous: { parse: false } }, headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(off.status, 200);
    const afterOff = await call(server.base, 'POST', action, { headers: { cookie: anonCookie }, body: multipart({ name: 'anon2' }, [['file', 'a.md', '# A\n']]) });
    assert.equal(afterOff.status, 303);
    assert.equal(afterOff.headers.get('location'), '/login?next=%2Fadd%3Fkind%3Dupload', 'the form token stays out of the sign-in link');
    assert.equal(await server.kernel.store.getLibrary('/docs/anon2'), null);
  });
});
