/**
 * Sign-in, sign-out and the first-launch wizard of the web UI (server/ui/pages/login.ts,
 * setup.ts): the plain forms over HTTP without JavaScript (CSRF, errors, lockout, the setup
 * token), and in a real browser the wizard end to end from a fresh data directory, keyboard-only
 * sign-in and sign-out, with screenshots of each page in both themes.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { ensureSetupToken } from '../../server/auth/local-files.ts';
import { LOCK_AFTER_FAILURES } from '../../server/auth/login-limiter.ts';
import { call, startApiServer, type ApiServer } from '../server/helpers/api-server.ts';
import { listenOnLoopback } from '../helpers/listen.ts';
import { launchBrowser, newPage, saveScreenshot } from '../helpers/browser.ts';

const NEW_PASSWORD = 'correct horse battery staple';
const LLM_KEY = 'sk-PlantedWizardLlmKey-7f6e5d4c3b2a';
const GH_TOKEN = 'ghp_PlantedWizardGithubToken_99887766';

interface FormReply {
  status: number;
  location: string | null;
  cookie: string | null;
  html: string;
  headers: Headers;
}

/** POSTs an urlencoded form as a browser without JavaScript would (no redirects followed). */
async function postForm(base: string, path: string, fields: Record<string, string>, cookie?: string | null, headers: Record<string, string> = {}): Promise<FormReply> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}), ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  const set = res.headers.get('set-cookie');
  return { status: res.status, location: res.headers.get('location'), cookie: set ? set.split(';')[0]! : null, html: await res.text(), headers: res.headers };
}

async function getPage(base: string, path: string, cookie?: string | null, headers: Record<string, string> = {}): Promise<FormReply> {
  const res = await fetch(base + path, { headers: { ...(cookie ? { cookie } : {}), ...headers }, redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location'), cookie: null, html: await res.text(), headers: res.headers };
}

/** The CSRF token a page's forms carry. */
function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  assert.ok(m, 'the page has a form with _csrf');
  return m[1]!;
}

async function signIn(base: string, username: string, password: string): Promise<string> {
  const r = await postForm(base, '/login', { username, password, next: '/' });
  assert.equal(r.status, 303, r.html);
  assert.ok(r.cookie);
  return r.cookie!;
}

/** Signs in with the factory credentials and changes them through the wizard's first step. */
async function changeFactoryCredentials(base: string, username = 'ops'): Promise<string> {
  const cookie = await signIn(base, 'admin', 'refdesk');
  const page = await getPage(base, '/setup', cookie);
  const r = await postForm(base, '/setup', { _csrf: csrfOf(page.html), step: 'credentials', currentPassword: 'refdesk', newUsername: username, newPassword: NEW_PASSWORD, repeatPassword: NEW_PASSWORD }, cookie);
  assert.equal(r.status, 303, r.html);
  assert.equal(r.location, '/setup?step=llm&saved=credentials');
  return cookie;
}

describe('sign-in and setup forms without JavaScript', () => {
  let s: ApiServer;
  before(async () => {
    s = await startApiServer({ app: { auth: { sleep: async () => {} } } });
  });
  after(() => s.close());

  test('the login form signs in with the API\'s session cookie; wrong credentials and empty fields are shown beside it', async () => {
    const page = await getPage(s.base, '/login');
    assert.equal(page.status, 200);
    assert.match(page.html, /<label for="username">Username<\/label>/);
    assert.match(page.html, /<label for="password">Password<\/label>/);
    assert.match(page.html, /<button type="submit">Sign in<\/button>/);
    assert.match(page.html, /First launch/);
    assert.doesNotMatch(page.html, /name="setupToken"/, 'no setup token field on the server\'s own machine');

    const wrong = await postForm(s.base, '/login', { username: 'admin', password: 'not-the-password', next: '/settings' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.cookie, null);
    assert.match(wrong.html, /role="alert">Wrong username or password\./);
    assert.match(wrong.html, /value="admin"/, 'the user name is kept');
    assert.doesNotMatch(wrong.html, /not-the-password/, 'the password is never echoed');
    assert.match(wrong.html, /name="next" value="\/settings"/);

    const script = await postForm(s.base, '/login', { username: '<script>alert(1)</script>', password: 'x', next: '/"><script>alert(2)</script>' });
    assert.equal(script.status, 401);
    assert.ok(!script.html.includes('<script>alert'), 'what the visitor typed is escaped');
    assert.match(script.html, /name="next" value="\/&quot;&gt;&lt;script&gt;/, 'next is kept, escaped');

    const empty = await postForm(s.base, '/login', { username: '', password: '' });
    assert.equal(empty.status, 400);
    assert.match(empty.html, /Enter your user name\./);

    // The factory credentials open a session that must change them first: on to the wizard.
    const ok = await postForm(s.base, '/login', { username: 'admin', password: 'refdesk', next: '/settings' });
    assert.equal(ok.status, 303);
    assert.equal(ok.location, '/setup');
    const session = await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: ok.cookie! } });
    assert.equal(session.status, 200);
    assert.equal(session.body.mustChangeCredentials, true);
    // A signed-in visitor of /login goes on.
    assert.equal((await getPage(s.base, '/login', ok.cookie)).location, '/setup');
    // An off-site next is never followed.
    const offsite = await getPage(s.base, '/login?next=%2F%2Fevil.example%2F', ok.cookie);
    assert.equal(offsite.location, '/setup');
  });

  test('a form post without _csrf is refused and changes nothing; with it the credentials change', async () => {
    const cookie = await signIn(s.base, 'admin', 'refdesk');
    const fields = { step: 'credentials', currentPassword: 'refdesk', newUsername: 'ops', newPassword: NEW_PASSWORD, repeatPassword: NEW_PASSWORD };
    const refused = await postForm(s.base, '/setup', fields, cookie);
    assert.equal(refused.status, 403);
    assert.match(refused.html, /Form refused/);
    const forged = await postForm(s.base, '/setup', { ...fields, _csrf: 'forged' }, cookie);
    assert.equal(forged.status, 403);
    const crossSite = await postForm(s.base, '/setup', { ...fields, _csrf: csrfOf((await getPage(s.base, '/setup', cookie)).html) }, cookie, { origin: 'https://evil.example' });
    assert.equal(crossSite.status, 403);
    assert.equal(await s.kernel.store.getAdminAccount(), null, 'nothing changed');

    const page = await getPage(s.base, '/setup', cookie);
    const mismatch = await postForm(s.base, '/setup', { ...fields, repeatPassword: 'something else entirely', _csrf: csrfOf(page.html) }, cookie);
    assert.equal(mismatch.status, 400);
    assert.match(mismatch.html, /Does not match the new password/);
    const short = await postForm(s.base, '/setup', { ...fields, newPassword: 'short', repeatPassword: 'short', _csrf: csrfOf(page.html) }, cookie);
    assert.equal(short.status, 400);
    assert.match(short.html, /New password must be at least 12 characters/);
    assert.match(short.html, /aria-invalid="true"/);
    assert.equal(await s.kernel.store.getAdminAccount(), null);

    const done = await postForm(s.base, '/setup', { ...fields, _csrf: csrfOf(page.html) }, cookie);
    assert.equal(done.status, 303, done.html);
    assert.equal((await s.kernel.store.getAdminAccount())?.username, 'ops');
    // The factory credentials no longer sign in; the new ones do.
    assert.equal((await postForm(s.base, '/login', { username: 'admin', password: 'refdesk' })).status, 401);
    await signIn(s.base, 'ops', NEW_PASSWORD);
  });

  test('settings steps save through the settings API\'s function, refuse bad input beside the field, and finishing ends the wizard', async () => {
    const cookie = await signIn(s.base, 'ops', NEW_PASSWORD);
    const page = await getPage(s.base, '/setup?step=llm', cookie);
    assert.equal(page.status, 200);
    const csrf = csrfOf(page.html);
    const bad = await postForm(s.base, '/setup', { _csrf: csrf, step: 'llm', action: 'save', provider: 'custom', model: 'm', baseUrl: 'ftp://nope', apiKey: LLM_KEY }, cookie);
    assert.equal(bad.status, 400);
    assert.match(bad.html, /Base URL: must be an http or https URL/);
    assert.doesNotMatch(bad.html, new RegExp(LLM_KEY), 'a key is never echoed');
    assert.match(bad.html, /value="ftp:\/\/nope"/, 'other values are kept');
    const skip = await postForm(s.base, '/setup', { _csrf: csrf, step: 'llm', action: 'skip' }, cookie);
    assert.equal(skip.location, '/setup?step=embedding&skipped=llm');
    const anon = await postForm(s.base, '/setup', { _csrf: csrf, step: 'anonymous', action: 'save', refresh: 'on' }, cookie);
    assert.equal(anon.status, 303);
    assert.equal(anon.location, '/libraries');
    const settings = await call(s.base, 'GET', '/api/settings', { headers: { cookie } });
    assert.deepEqual(settings.body.anonymous, { parse: false, refresh: true, delete: false, supportBundle: false });
    assert.equal(settings.body.llm.provider, null, 'the refused change changed nothing');
    const audit = await s.kernel.store.listAudit({ limit: 50 });
    assert.ok(audit.some((e) => e.action === 'settings.change' && e.outcome === 'failure'), 'a refused change is audited like the API\'s');
    assert.ok(audit.some((e) => e.action === 'settings.change' && e.outcome === 'success' && JSON.stringify(e.details).includes('anonymous.refresh')));
    const setup = await call(s.base, 'GET', '/api/setup', { headers: { cookie } });
    assert.equal(setup.body.wizard.done, true);
    assert.ok(setup.body.wizard.finishedAt);
    // Setup is done: /setup goes on to the libraries, `/setup?again=1` re-enters the wizard.
    assert.equal((await getPage(s.base, '/setup', cookie)).location, '/libraries');
    assert.equal((await getPage(s.base, '/', cookie)).location, '/libraries');
    const again = await getPage(s.base, '/setup?again=1', cookie);
    assert.equal(again.status, 200);
    assert.match(again.html, /Step 2 of 5: LLM provider/);
    assert.match(again.html, /name="again" value="1"/);
    assert.match(again.html, /wizard-step-done"><span>Admin credentials<\/span><span class="visually-hidden"> \(set\)/);
    const emb = await getPage(s.base, '/setup?step=git&again=1', cookie);
    assert.match(emb.html, /wizard-step-open"><a href="\/setup\?step=llm&amp;again=1">LLM provider<\/a><span class="visually-hidden"> \(not set\)/);
    const next = await postForm(s.base, '/setup', { _csrf: csrf, step: 'llm', again: '1', action: 'skip' }, cookie);
    assert.equal(next.location, '/setup?step=embedding&again=1&skipped=llm');
    // "Skip the rest of setup" leaves the wizard and records it as skipped.
    const leave = await postForm(s.base, '/setup', { _csrf: csrf, step: 'embedding', again: '1', action: 'skip-all' }, cookie);
    assert.equal(leave.location, '/libraries');
    const skipped = await call(s.base, 'GET', '/api/setup', { headers: { cookie } });
    assert.equal(skipped.body.wizard.done, true);
    assert.ok(skipped.body.wizard.skippedAt);
    // Signed out, /setup leads to sign-in and back.
    assert.equal((await getPage(s.base, '/setup')).location, '/login?next=%2Fsetup');
  });

  test('sign out needs the CSRF token; sign out everywhere ends every session', async () => {
    const a = await signIn(s.base, 'ops', NEW_PASSWORD);
    const b = await signIn(s.base, 'ops', NEW_PASSWORD);
    const refused = await postForm(s.base, '/logout', {}, a);
    assert.equal(refused.status, 403);
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: a } })).status, 200, 'still signed in');
    const logoutPage = await getPage(s.base, '/logout', a);
    assert.match(logoutPage.html, /Sign out everywhere/);
    const out = await postForm(s.base, '/logout', { _csrf: csrfOf(logoutPage.html) }, a);
    assert.equal(out.status, 303);
    assert.equal(out.location, '/login?signed_out=1');
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: a } })).status, 401);
    assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie: b } })).status, 200, 'the other session stays');
    assert.match((await getPage(s.base, '/login?signed_out=1')).html, /Signed out\./);

    const c = await signIn(s.base, 'ops', NEW_PASSWORD);
    const all = await postForm(s.base, '/logout', { _csrf: csrfOf((await getPage(s.base, '/logout', c)).html), all: '1' }, c);
    const ended = Number(/^\/login\?signed_out=all&ended=(\d+)$/.exec(all.location ?? '')?.[1]);
    assert.ok(ended >= 2, `every session of the account ended (${all.location})`);
    for (const cookie of [b, c]) assert.equal((await call(s.base, 'GET', '/api/auth/session', { headers: { cookie } })).status, 401);
    assert.match((await getPage(s.base, all.location!)).html, new RegExp(`Signed out everywhere: ${ended} sessions ended\\.`));
    // Signed out, /logout leads to the sign-in page.
    assert.equal((await getPage(s.base, '/logout')).location, '/login');
  });

  test('signed out, the admin pages lead to /login', async (t) => {
    for (const path of ['/libraries', '/settings', '/add']) {
      const r = await getPage(s.base, path);
      if (r.status === 404) {
        // The page itself is another part of issue 20 (ui-libraries, ui-settings, ui-add): not on this branch yet.
        t.diagnostic(`${path}: not served on this branch yet`);
        continue;
      }
      assert.equal(r.status, 303, path);
      assert.equal(r.location, `/login?next=${encodeURIComponent(path)}`, path);
    }
  });

  test('too many wrong passwords lock the sign-in, and the page says for how long', async () => {
    let last: FormReply | undefined;
    for (let i = 0; i <= LOCK_AFTER_FAILURES; i++) last = await postForm(s.base, '/login', { username: 'ops', password: `wrong-${i}` });
    assert.equal(last!.status, 429);
    const retry = Number(last!.headers.get('retry-after'));
    assert.ok(retry > 0, 'Retry-After');
    assert.match(last!.html, new RegExp(`try again in ${retry} seconds`));
    // The right password too, until the lock ends (as for the API).
    assert.equal((await postForm(s.base, '/login', { username: 'ops', password: NEW_PASSWORD })).status, 429);
  });
});

describe('first sign-in from another machine', () => {
  let s: ApiServer;
  before(async () => {
    s = await startApiServer({ app: { auth: { sleep: async () => {} } } });
  });
  after(() => s.close());

  test('the login page asks for the setup token and says where it is, without showing it', async () => {
    const { token } = await ensureSetupToken(s.dataDir);
    const relayed = { 'x-forwarded-for': '203.0.113.7' };
    const page = await getPage(s.base, '/login', null, relayed);
    assert.match(page.html, /<label for="setupToken">Setup token<\/label>/);
    assert.match(page.html, /DATA_DIR\/setup-token/);
    assert.ok(!page.html.includes(token), 'the token itself is never on the page');
    const without = await postForm(s.base, '/login', { username: 'admin', password: 'refdesk' }, null, relayed);
    assert.equal(without.status, 403);
    assert.match(without.html, /setup token/);
    const wrong = await postForm(s.base, '/login', { username: 'admin', password: 'refdesk', setupToken: 'not-the-token' }, null, relayed);
    assert.equal(wrong.status, 401);
    assert.match(wrong.html, /Wrong setup token/);
    const ok = await postForm(s.base, '/login', { username: 'admin', password: 'refdesk', setupToken: token }, null, relayed);
    assert.equal(ok.status, 303);
    assert.equal(ok.location, '/setup');
  });

  test('an expired licence is said on the login page', async () => {
    const expired = await startApiServer({ licence: { days: -3 } });
    try {
      const page = await getPage(expired.base, '/login');
      assert.equal(page.status, 200);
      assert.match(page.html, /licence expired on \d{4}-\d{2}-\d{2}/);
    } finally {
      await expired.close();
    }
  });
});

/** A loopback server shaped like the OpenAI API's model list (what Test connection asks). */
async function fakeOpenAi(): Promise<{ base: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    if (req.url === '/v1/models' && req.headers.authorization === `Bearer ${LLM_KEY}`) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'tiny-model', object: 'model', owned_by: 'test' }] }));
      return;
    }
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
  });
  const base = await listenOnLoopback(server);
  return { base: `${base}/v1`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

/** Screenshots of the page in both themes. */
async function shoot(page: Page, name: string): Promise<void> {
  await saveScreenshot(page, name, 'light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await saveScreenshot(page, name, 'dark');
  await page.emulateMedia({ colorScheme: 'light' });
}

describe('in a real browser', () => {
  let s: ApiServer;
  let browser: Browser;
  before(async () => {
    s = await startApiServer({ app: { auth: { sleep: async () => {} } } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser.close();
    await s.close();
  });

  test('the wizard end to end from a fresh data directory: factory sign-in, forced credential change, steps saved and skipped, lands on /libraries', async () => {
    const openai = await fakeOpenAi();
    const { page, consoleErrors } = await newPage(browser);
    try {
      await page.goto(`${s.base}/`);
      assert.equal(new URL(page.url()).pathname, '/login');
      assert.equal(new URL(page.url()).searchParams.get('next'), '/setup');
      await shoot(page, 'login');
      await page.getByLabel('Username').fill('admin');
      await page.getByLabel('Password', { exact: true }).fill('wrong password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Wrong username or password.' }).waitFor();
      await shoot(page, 'login-error');
      await page.getByLabel('Password', { exact: true }).fill('refdesk');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/setup');

      // Step 1: the factory credentials must be changed first; other pages lead back here.
      await page.getByRole('heading', { name: 'Step 1 of 5: Admin credentials' }).waitFor();
      await shoot(page, 'setup-credentials');
      await page.goto(`${s.base}/`);
      assert.equal(new URL(page.url()).pathname, '/setup', 'a factory session is held at the wizard');
      await page.getByLabel('Current password').fill('refdesk');
      await page.getByLabel('New user name').fill('operator');
      await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await page.getByLabel('Repeat the new password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Change credentials and continue' }).click();
      await page.waitForURL('**/setup?step=llm&saved=credentials');
      assert.match(await page.locator('#flash').innerText(), /Credentials changed/);

      // Step 2: an OpenAI-compatible server on this machine, tested from the page (htmx).
      await shoot(page, 'setup-llm');
      await page.getByLabel('Provider', { exact: true }).selectOption('custom');
      await page.getByLabel('Model', { exact: true }).fill('tiny-model');
      await page.getByLabel('Base URL', { exact: true }).fill(openai.base);
      await page.getByLabel('API key', { exact: true }).fill(LLM_KEY);
      await page.getByRole('button', { name: 'Test connection' }).click();
      await page.locator('#test-result').getByText('Connection works').waitFor();
      assert.match(page.url(), /step=llm/, 'htmx swapped the result in; the page stayed');
      await page.locator('#llm-apiKey-hint').getByText('A key is saved (ending in 3b2a)').waitFor();
      assert.ok(openai.seen.some((l) => l.startsWith('GET /v1/models Bearer')), openai.seen.join('\n'));
      assert.ok(!(await page.content()).includes(LLM_KEY), 'the key is never written into the page');
      await shoot(page, 'setup-llm-tested');
      await page.getByRole('button', { name: 'Save and continue' }).click();
      await page.waitForURL('**/setup?step=embedding&saved=llm');

      // Step 3 skipped, step 4 saved, step 5 saved and finished.
      await shoot(page, 'setup-embedding');
      await page.getByRole('button', { name: 'Skip this step' }).click();
      await page.waitForURL('**/setup?step=git&skipped=embedding');
      await shoot(page, 'setup-git');
      await page.getByLabel('GitHub token', { exact: true }).fill(GH_TOKEN);
      await page.getByRole('button', { name: 'Save and continue' }).click();
      await page.waitForURL('**/setup?step=anonymous&saved=git');
      await shoot(page, 'setup-anonymous');
      await page.getByLabel('Add libraries', { exact: true }).check();
      // Chromium reports the deliberate 401 of the wrong password as a failed load; nothing else may show.
      const refusedSignIn = 'Failed to load resource: the server responded with a status of 401 (Unauthorized)';
      assert.deepEqual(consoleErrors.filter((e) => e !== refusedSignIn), [], 'no console errors (CSP) on the sign-in and wizard pages');
      assert.equal(consoleErrors.length, 1);
      await page.getByRole('button', { name: 'Save and finish' }).click();
      await page.waitForURL('**/libraries');

      // What the wizard chose is what the settings API answers.
      const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
      const settings = await call(s.base, 'GET', '/api/settings', { headers: { cookie } });
      assert.equal(settings.status, 200, settings.text);
      assert.equal(settings.body.llm.provider, 'custom');
      assert.equal(settings.body.llm.model, 'tiny-model');
      assert.equal(settings.body.llm.baseUrl, openai.base);
      assert.equal(settings.body.llm.apiKey.set, true);
      assert.equal(settings.body.embedding.provider, null, 'skipped');
      assert.equal(settings.body.git.githubToken.set, true);
      assert.equal(settings.body.anonymous.parse, true);
      const setup = await call(s.base, 'GET', '/api/setup', { headers: { cookie } });
      assert.ok(setup.body.wizard.finishedAt);
      assert.equal(setup.body.steps[0].done, true);
      // The secrets typed into the wizard are in no audit entry.
      const auditText = JSON.stringify(await s.kernel.store.listAudit({ limit: 100 }));
      for (const secret of [LLM_KEY, GH_TOKEN, NEW_PASSWORD]) assert.ok(!auditText.includes(secret));
    } finally {
      await page.context().close();
      await openai.close();
    }
  });

  test('keyboard-only sign-in (Tab, typing, Enter), then sign out from the nav', async () => {
    const { page, consoleErrors } = await newPage(browser, { colorScheme: 'dark' });
    try {
      await page.goto(`${s.base}/login?next=%2Fsetup%3Fagain%3D1`);
      // The user name field has the focus on arrival; Tab moves to the password, Enter sends.
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'username');
      await page.keyboard.type('operator');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'password');
      await page.keyboard.type(NEW_PASSWORD);
      await page.keyboard.press('Enter');
      await page.waitForURL('**/setup?again=1');
      await page.getByRole('heading', { name: 'Step 2 of 5: LLM provider' }).waitFor();
      // The skip link, then the nav, are reachable from the keyboard.
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
      for (let i = 0; i < 8 && !(await page.evaluate(() => document.activeElement?.textContent ?? '')).startsWith('Sign out'); i++) await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Sign out (operator)');
      await page.keyboard.press('Enter');
      await page.waitForURL('**/login?signed_out=1');
      assert.match(await page.locator('#flash').innerText(), /Signed out\./);
      await page.goto(`${s.base}/setup?again=1`);
      assert.equal(new URL(page.url()).pathname, '/login');
      assert.deepEqual(consoleErrors, []);
    } finally {
      await page.context().close();
    }
  });

  test('the sign-out page and the login page at phone width', async () => {
    const phone = await newPage(browser, { width: 390 });
    const desk = await newPage(browser);
    try {
      await phone.page.goto(`${s.base}/login`);
      await saveScreenshot(phone.page, 'login-phone', 'light');
      const width = await phone.page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `no sideways scrolling at phone width (${width}px)`);
      await desk.page.goto(`${s.base}/login?next=%2Flogout`);
      await desk.page.getByLabel('Username').fill('operator');
      await desk.page.getByLabel('Password').fill(NEW_PASSWORD);
      await desk.page.getByRole('button', { name: 'Sign in' }).click();
      await desk.page.waitForURL('**/logout');
      await shoot(desk.page, 'logout');
      await desk.page.getByRole('button', { name: 'Sign out everywhere' }).click();
      await desk.page.waitForURL('**/login?signed_out=all**');
      assert.match(await desk.page.locator('#flash').innerText(), /Signed out everywhere/);
      assert.deepEqual([...phone.consoleErrors, ...desk.consoleErrors], []);
    } finally {
      await phone.context.close();
      await desk.context.close();
    }
  });

});
