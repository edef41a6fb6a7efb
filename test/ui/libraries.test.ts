/**
 * The libraries pages (/libraries, /libraries/{libraryId}) in a real browser (Debian chromium via
 * playwright-core) against a real server on 127.0.0.1: an admin signed in through the auth API,
 * libraries added through the HTTP API (uploads, and llms.txt / website sources read from a
 * 127.0.0.1 server this test starts, which can hold a page back to keep a job running).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Browser } from 'playwright-core';
import { bearer, call, createKey, startApiServer, type ApiServer, type Reply } from '../server/helpers/api-server.ts';
import { listenOnLoopback } from '../helpers/listen.ts';
import { launchBrowser, newPage, saveScreenshot, type UiPage } from '../helpers/browser.ts';
import { SETUP_WIZARD_SETTING } from '../../server/ui/page-access.ts';
import { renameLibrary } from '../../server/api/service.ts';

const PASSWORD = 'correct-horse-battery-staple-41';
const XSS_TITLE = '<script>alert("title")</script>Evil docs';
const XSS_DESCRIPTION = '<img src=x onerror=alert("description")> described';
const XSS_FILE = '<img src=x onerror=alert(1)>.md';

let s: ApiServer;
let browser: Browser;
let cookie: { name: string; value: string };
let csrf: string;
let key: string;
let docs: Server;
let docsBase: string;
/** Paths the docs server holds back until released (a job reading one stays running). */
const held = new Map<string, ServerResponse[]>();
const pages: UiPage[] = [];

function sessionOf(r: Reply): { name: string; value: string } {
  const set = r.headers.getSetCookie().find((c) => c.startsWith('refdesk_session='));
  assert.ok(set, 'a session cookie');
  const [name, value] = set.split(';')[0].split('=');
  return { name, value };
}

/** An admin session: factory sign-in, then the credentials change (as the auth tests do). */
async function signIn(): Promise<void> {
  const first = await call(s.base, 'POST', '/api/auth/login', { json: { username: 'admin', password: 'refdesk' } });
  assert.equal(first.status, 200, first.text);
  cookie = sessionOf(first);
  const changed = await call(s.base, 'POST', '/api/auth/credentials', {
    json: { currentPassword: 'refdesk', newUsername: 'operator', newPassword: PASSWORD },
    headers: { cookie: `${cookie.name}=${cookie.value}`, 'x-csrf-token': first.body.csrfToken },
  });
  assert.equal(changed.status, 200, changed.text);
  csrf = changed.body.csrfToken;
  await s.kernel.store.setSetting(SETUP_WIZARD_SETTING, { skippedAt: new Date().toISOString() });
}

const cookieHeader = () => ({ cookie: `${cookie.name}=${cookie.value}` });

/** A signed-in page (own context). */
async function adminPage(opts: Parameters<typeof newPage>[1] = {}): Promise<UiPage> {
  const p = await newPage(browser, opts);
  await p.context.addCookies([{ ...cookie, url: s.base }]);
  p.page.on('dialog', (d) => void d.dismiss());
  pages.push(p);
  return p;
}

function release(path: string): void {
  for (const res of held.get(path) ?? []) res.end(`# Held page\n\nReleased content of ${path} about widgets and gadgets.\n\n## Widgets\n\nWidgets are configured with widget.configure().\n`);
  held.delete(path);
}

async function upload(name: string, files: Record<string, string>, fields: Record<string, string> = {}): Promise<Reply> {
  const form = new FormData();
  form.append('name', name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const [file, text] of Object.entries(files)) form.append('file', new Blob([text]), file);
  const r = await call(s.base, 'POST', '/api/libraries/upload', { headers: bearer(key), body: form });
  assert.equal(r.status, 202, r.text);
  return r;
}

async function addLlmsTxt(path: string): Promise<Reply> {
  const r = await call(s.base, 'POST', '/api/v2/add/llmstxt', { headers: bearer(key), json: { llmstxtUrl: `${docsBase}${path}` } });
  assert.equal(r.status, 200, r.text);
  return r;
}

/** Polls the job through the API until `done(state)`; returns the state. */
async function waitForJob(jobId: string, done: (state: string) => boolean, what: string): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const r = await call(s.base, 'GET', `/api/jobs/${jobId}`, { headers: bearer(key) });
    if (done(r.body.state)) return r.body.state;
    await new Promise((ok) => setTimeout(ok, 25));
  }
  throw new Error(`job ${jobId} did not ${what}`);
}

const jobEnded = (jobId: string) => waitForJob(jobId, (st) => ['succeeded', 'failed', 'interrupted'].includes(st), 'end');
const jobRunning = (jobId: string) => waitForJob(jobId, (st) => st === 'running', 'start').then(() => {});

const rowIds = (p: UiPage) => p.page.locator('#library-list tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-library-id')));

describe('libraries pages in a browser', () => {
  before(async () => {
    s = await startApiServer();
    browser = await launchBrowser();
    docs = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path.startsWith('/broken')) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream broke');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      if (path.startsWith('/held/')) {
        held.set(path, [...(held.get(path) ?? []), res]);
        res.write('');
        return;
      }
      res.end(`# Page ${path}\n\nSome documentation.\n`);
    });
    docsBase = await listenOnLoopback(docs);
    await signIn();
    key = await createKey(s.base, { name: 'ui-test', role: 'admin' });
  });

  after(async () => {
    for (const p of pages) await p.context.close().catch(() => {});
    await browser?.close();
    for (const path of [...held.keys()]) release(path);
    docs?.closeAllConnections();
    await new Promise<void>((ok) => (docs ? docs.close(() => ok()) : ok()));
    await s?.close();
  });

  test('signed out: /libraries and a library page lead to /login', async () => {
    for (const path of ['/libraries', '/libraries/docs/guide']) {
      const r = await call(s.base, 'GET', path);
      assert.equal(r.status, 303, path);
      assert.equal(r.headers.get('location'), `/login?next=${encodeURIComponent(path)}`);
    }
  });

  test('empty list: says how to add the first library (the Add page, the CLI, the API)', async () => {
    for (const theme of ['light', 'dark'] as const) {
      const p = await adminPage({ colorScheme: theme });
      const res = await p.page.goto(`${s.base}/libraries`);
      assert.equal(res?.status(), 200);
      const empty = p.page.locator('.empty-state');
      assert.match(await empty.innerText(), /No libraries yet/);
      assert.equal(await empty.locator('a[href="/add"]').count(), 1);
      assert.match(await empty.innerText(), /refdesk add \.\/docs --name/);
      assert.match(await empty.innerText(), /\/api\/parse/);
      await saveScreenshot(p.page, 'libraries-empty', theme);
      assert.deepEqual(p.consoleErrors, []);
    }
  });

  test('an uploaded library reaches finalized on its page, its log visible; uploaded again, the open page follows the new job', async () => {
    const added = await upload('guide', { 'intro.md': '# Guide\n\nThe guide explains how to configure widgets.\n\n## Configure\n\nCall `widget.configure({ size: 3 })` to configure a widget.\n', 'api/reference.md': '# Reference\n\nThe gadget API reference.\n' }, { title: 'The Guide', description: 'How to use widgets' });
    assert.equal(added.body.libraryId, '/docs/guide');
    const p = await adminPage();
    await p.page.goto(`${s.base}/libraries/docs/guide`);
    // Running when the page opened (streamed) or already done (rendered): either way it ends finalized.
    await p.page.locator('[data-library-state]', { hasText: 'finalized' }).waitFor({ timeout: 15_000 });
    await p.page.locator('[data-job-state]', { hasText: 'succeeded' }).waitFor();
    const log = await p.page.locator('[data-job-log]').innerText();
    assert.match(log, /started: reading upload source for \/docs\/guide/);
    assert.match(log, /intro\.md: \d+ snippets/);
    assert.match(log, /finalized: 2 documents/);
    assert.equal(await p.page.locator('h1').innerText(), 'The Guide');
    const built = await p.page.locator('.spec').innerText();
    assert.match(built, /upload/);
    assert.match(built, /\(uploaded file\)/, 'the server path of the upload is not shown');
    assert.equal(await p.page.locator('progress').getAttribute('value'), '1');
    // Uploaded again while the page is open: the page finds the new job, follows it live to the end.
    await p.page.evaluate(() => ((window as unknown as { marker: number }).marker = 7));
    const again = await upload('guide', { 'intro.md': '# Guide\n\nThe guide explains how to configure widgets.\n\n## Configure\n\nCall `widget.configure({ size: 3 })` to configure a widget.\n', 'api/reference.md': '# Reference\n\nThe gadget API reference.\n', 'api/more.md': '# More\n\nMore about gadgets.\n' }, { title: 'The Guide', description: 'How to use widgets' });
    await p.page.locator(`#job-heading code`, { hasText: String(again.body.jobId).slice(0, 12) }).waitFor({ timeout: 15_000 });
    await p.page.locator('[data-job-state]', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
    await p.page.locator('[data-job-log]', { hasText: 'finalized: 3 documents' }).waitFor();
    await p.page.locator('#library-summary table').nth(1).locator('tbody tr').nth(1).waitFor();
    assert.equal(await p.page.evaluate(() => (window as unknown as { marker?: number }).marker), 7, 'followed without a reload');
    assert.deepEqual(p.consoleErrors, []);
  });

  test('a running job streams its stage, progress and log lines live, then its final state', async () => {
    const added = await addLlmsTxt('/held/live.txt');
    const id = added.body.libraryName as string;
    await jobRunning(added.body.jobId);
    const light = await adminPage({ colorScheme: 'light' });
    const dark = await adminPage({ colorScheme: 'dark' });
    for (const p of [light, dark]) {
      await p.page.goto(`${s.base}/libraries${id}`);
      assert.equal(await p.page.locator('[data-job-state]').innerText(), 'running');
      assert.equal(await p.page.locator('progress#job-progress').count(), 1);
      assert.match(await p.page.locator('[data-job-log]').innerText(), /started: reading llmstxt source/);
      await p.page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    }
    await saveScreenshot(light.page, 'library-running', 'light');
    await saveScreenshot(dark.page, 'library-running', 'dark');
    release('/held/live.txt');
    for (const p of [light, dark]) {
      await p.page.locator('[data-job-state]', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
      await p.page.locator('#job-status', { hasText: 'the library is finalized' }).waitFor();
      assert.match(await p.page.locator('[data-job-log]').innerText(), /finalized: 1 documents/);
      // The summary reloaded itself when the stream ended; the page itself did not reload.
      await p.page.locator('[data-library-state]', { hasText: 'finalized' }).waitFor();
      assert.equal(await p.page.evaluate(() => (window as unknown as { marker?: number }).marker), 42);
      assert.equal(await p.page.locator('[data-job-stage]').innerText(), 'done');
      assert.match(await p.page.locator('#job-heading').innerText(), /^Last job /);
      assert.deepEqual(p.consoleErrors, []);
    }
    await saveScreenshot(light.page, 'library-finished', 'light');
    await saveScreenshot(dark.page, 'library-finished', 'dark');
  });

  test('a failing source shows its error in the log', async () => {
    const r = await call(s.base, 'POST', '/api/v2/add/website', { headers: bearer(key), json: { websiteUrl: `${docsBase}/broken/index.html` } });
    assert.equal(r.status, 200, r.text);
    assert.equal(await jobEnded(r.body.jobId), 'failed');
    const p = await adminPage();
    await p.page.goto(`${s.base}/libraries${r.body.libraryName}`);
    assert.equal(await p.page.locator('[data-job-state]').innerText(), 'failed');
    const error = p.page.locator('#job .log li.lvl-error');
    assert.match(await error.innerText(), /failed: GET http:\/\/127\.0\.0\.1:\d+\/broken\/index\.html answered 500/);
    assert.match(await p.page.locator('[data-job-error]').innerText(), /answered 500/);
    assert.deepEqual(p.consoleErrors, []);
  });

  test('what a library was built from is shown without its secrets (page and log)', async () => {
    const planted = 'ghp_PLANTEDsecretTOKEN0123456789abcdef';
    const r = await call(s.base, 'POST', '/api/v2/add/repo/git', { headers: bearer(key), json: { docsRepoUrl: 'https://git.example.com/team/private-docs', gitToken: planted } });
    assert.equal(r.status, 200, r.text);
    assert.equal(await jobEnded(r.body.jobId), 'failed');
    const page = await call(s.base, 'GET', `/libraries${r.body.libraryName}`, { headers: cookieHeader() });
    assert.equal(page.status, 200);
    assert.ok(!page.text.includes(planted), 'the token is not on the page');
    assert.match(page.text, /<dt>token<\/dt><dd><code>\[set\]<\/code><\/dd>/);
    assert.match(page.text, /reads file:\/\/ repositories only/);
    const del = await call(s.base, 'DELETE', `/api/libraries${r.body.libraryName}`, { headers: bearer(key) });
    assert.equal(del.status, 200, del.text);
  });

  test('refresh queues a new build through the same function as the API; the page follows it live', async () => {
    const id = '/llmstxt/127_0_0_1-live.txt';
    const p = await adminPage();
    await p.page.goto(`${s.base}/libraries${id}`);
    const jobRows = p.page.locator('#library-summary table').nth(1).locator('tbody tr');
    const before = await jobRows.count();
    await p.page.getByRole('button', { name: 'Refresh' }).click();
    await p.page.waitForURL(/\?queued=/);
    assert.match(await p.page.locator('#flash').innerText(), /Refresh queued as job/);
    assert.equal(await jobRows.count(), before + 1);
    await p.page.locator('[data-job-state]', { hasText: 'running' }).waitFor();
    // Again while it runs: the API's answer (the build under way), said so.
    await p.page.getByRole('button', { name: 'Refresh' }).click();
    await p.page.waitForURL(/\?running=/);
    assert.match(await p.page.locator('#flash').innerText(), /already under way/);
    assert.equal(await jobRows.count(), before + 1);
    release('/held/live.txt');
    await p.page.locator('[data-job-state]', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
    const jobs = await call(s.base, 'GET', `/api/jobs?libraryId=${id}`, { headers: bearer(key) });
    assert.equal(jobs.body.jobs.length, 2);
    assert.equal(jobs.body.jobs[0].state, 'succeeded');
    assert.deepEqual(p.consoleErrors, []);
    // An uploaded library cannot be refreshed from its source: the API's 409 message on the page.
    const up = await adminPage();
    const res = await up.page.goto(`${s.base}/libraries/docs/guide`);
    assert.equal(res?.status(), 200);
    await up.page.getByRole('button', { name: 'Refresh' }).click();
    await up.page.locator('#flash .flash-error').waitFor();
    assert.match(await up.page.locator('#flash').innerText(), /re-upload to refresh/);
    assert.deepEqual(up.consoleErrors, ['Failed to load resource: the server responded with a status of 409 (Conflict)']);
  });

  test('the list: every library with its facts; filter by text and state (htmx and plain GET); live state updates', async () => {
    const light = await adminPage({ colorScheme: 'light' });
    const res = await light.page.goto(`${s.base}/libraries`);
    assert.equal(res?.status(), 200);
    const ids = await rowIds(light);
    assert.ok(ids.includes('/docs/guide'));
    assert.equal(ids.length, 3, JSON.stringify(ids));
    const guide = light.page.locator('tr[data-library-id="/docs/guide"]');
    const text = await guide.innerText();
    for (const want of ['/docs/guide', 'The Guide', 'upload', 'default', 'finalized']) assert.ok(text.includes(want), `${want} in ${text}`);
    assert.match(text, /\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    await saveScreenshot(light.page, 'libraries', 'light');
    // Text filter: typing narrows the table in place (htmx) and the URL follows.
    await light.page.getByLabel('Filter', { exact: true }).fill('guide');
    await light.page.waitForURL(/\?q=guide/);
    await light.page.waitForFunction(() => document.querySelectorAll('#library-list tbody tr').length === 1);
    assert.deepEqual(await rowIds(light), ['/docs/guide']);
    // State filter: the failed website only.
    await light.page.getByLabel('Filter', { exact: true }).fill('');
    await light.page.getByLabel('State').selectOption('error');
    await light.page.waitForURL(/state=error/);
    await light.page.waitForFunction(() => document.querySelectorAll('#library-list tbody tr').length === 1);
    assert.match((await rowIds(light))[0]!, /^\/websites\//);
    assert.deepEqual(light.consoleErrors, []);
    // Without JavaScript: the same filters as a plain GET, and a bad state named beside the field.
    const plain = await call(s.base, 'GET', '/libraries?q=GUIDE&state=finalized', { headers: cookieHeader() });
    assert.equal(plain.status, 200);
    assert.match(plain.text, /data-library-id="\/docs\/guide"/);
    assert.doesNotMatch(plain.text, /data-library-id="\/llmstxt/);
    const bad = await call(s.base, 'GET', '/libraries?state=exploded', { headers: cookieHeader() });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /id="filter-error">Query parameter &quot;state&quot; must be one of initial, processing, finalized, error/);
    const none = await call(s.base, 'GET', '/libraries?q=nothing-matches-this', { headers: cookieHeader() });
    assert.match(none.text, /No library matches this filter \(3 in all\)/);
    // Dark and phone-width views of the filled list.
    const dark = await adminPage({ colorScheme: 'dark' });
    await dark.page.goto(`${s.base}/libraries`);
    await saveScreenshot(dark.page, 'libraries', 'dark');
    for (const theme of ['light', 'dark'] as const) {
      const phone = await adminPage({ colorScheme: theme, width: 390 });
      await phone.page.goto(`${s.base}/libraries`);
      assert.ok(await phone.page.locator('tr[data-library-id="/docs/guide"] td').first().isVisible());
      assert.equal(await phone.page.locator('th.hide-narrow').first().isVisible(), false);
      assert.ok((await phone.page.evaluate(() => document.documentElement.scrollWidth)) <= 400, 'no sideways scrolling at phone width');
      await saveScreenshot(phone.page, 'libraries-phone', theme);
      assert.deepEqual(phone.consoleErrors, []);
    }
    // Live: a build starts; the list polls while it runs and announces when it ends.
    const live = await addLlmsTxt('/held/list.txt');
    await jobRunning(live.body.jobId);
    const watcher = await adminPage();
    await watcher.page.goto(`${s.base}/libraries`);
    const row = watcher.page.locator(`tr[data-library-id="${live.body.libraryName}"]`);
    assert.match(await row.innerText(), /job running/);
    assert.ok(await watcher.page.locator('#library-list[hx-trigger^="every"]').count(), 'the table polls while a build runs');
    release('/held/list.txt');
    await watcher.page.locator('#libraries-status', { hasText: `${live.body.libraryName} is now finalized` }).waitFor({ timeout: 15_000 });
    assert.match(await row.innerText(), /finalized/);
    assert.doesNotMatch(await row.innerText(), /job running/);
    assert.equal(await watcher.page.locator('#library-list[hx-trigger]').count(), 0, 'polling stops once nothing is being built');
    assert.deepEqual(watcher.consoleErrors, []);
  });

  test('try a question: the context answer exactly as the API gives it, each snippet with its source path and lines', async () => {
    const p = await adminPage();
    await p.page.goto(`${s.base}/libraries/docs/guide`);
    await p.page.getByLabel('Question', { exact: true }).fill('configure a widget');
    await p.page.getByRole('button', { name: 'Ask' }).click();
    await p.page.locator('#answer article.snippet').first().waitFor();
    const api = await call(s.base, 'GET', '/api/v2/context?libraryId=/docs/guide&query=configure%20a%20widget&type=txt');
    assert.equal(api.status, 200);
    assert.equal(await p.page.locator('[data-raw-answer]').textContent(), api.text);
    const first = await p.page.locator('#answer article.snippet').first().innerText();
    assert.match(first, /intro\.md lines \d+–\d+/);
    assert.match(first, /widget\.configure/);
    // JSON: the same snippets, the body as the API's JSON.
    await p.page.getByLabel('JSON (type=json)').check();
    await p.page.getByRole('button', { name: 'Ask' }).click();
    await p.page.locator('#answer summary', { hasText: 'type=json' }).waitFor();
    const apiJson = await call(s.base, 'GET', '/api/v2/context?libraryId=/docs/guide&query=configure%20a%20widget&type=json');
    assert.deepEqual(JSON.parse((await p.page.locator('[data-raw-answer]').textContent())!), apiJson.body);
    await saveScreenshot(p.page, 'library-question', 'light');
    // An error of the API (a library still being built) is shown in the answer box.
    const r = await call(s.base, 'GET', '/libraries/docs/guide?query=' + 'x'.repeat(600), { headers: cookieHeader() });
    assert.equal(r.status, 200);
    assert.match(r.text, /role="alert">The question is longer than 500 characters/);
    assert.deepEqual(p.consoleErrors, []);
  });

  test('keyboard only: every control of both pages is reached with Tab, and a question is asked with Enter', async () => {
    const p = await adminPage();
    const tabThrough = async (count: number): Promise<string[]> => {
      const seen: string[] = [];
      for (let i = 0; i < count; i++) {
        await p.page.keyboard.press('Tab');
        seen.push(await p.page.evaluate(() => {
          const el = document.activeElement as HTMLElement | null;
          return el ? `${el.tagName.toLowerCase()}:${el.getAttribute('name') ?? ''}:${(el.textContent ?? '').trim().slice(0, 30)}` : '';
        }));
      }
      return seen;
    };
    await p.page.goto(`${s.base}/libraries`);
    const list = await tabThrough(12);
    for (const want of ['input:q:', 'select:state:', 'button::Filter', 'a::/docs/guide']) assert.ok(list.some((x) => x.startsWith(want)), `${want} in ${list.join(' | ')}`);
    await p.page.goto(`${s.base}/libraries/docs/guide`);
    const detail = await tabThrough(40);
    for (const want of ['button::Refresh', 'button::Delete…', 'ol::', 'input:query:', 'input:type:', 'button::Ask']) assert.ok(detail.some((x) => x.startsWith(want)), `${want} in ${detail.join(' | ')}`);
    await p.page.focus('#ask-query');
    await p.page.keyboard.type('configure widget');
    await p.page.keyboard.press('Enter');
    await p.page.locator('#answer article.snippet').first().waitFor();
    assert.deepEqual(p.consoleErrors, []);
  });

  test('a library whose title, description, file names, log lines and snippets carry script payloads stays inert', async () => {
    // Its build waits behind a held one (jobs run one at a time), so its log lines stream in live.
    const gate = await addLlmsTxt('/held/gate.txt');
    await jobRunning(gate.body.jobId);
    const xss = await upload('xss', { [XSS_FILE]: '# <script>alert("heading")</script> Heading\n\nThe <img src=x onerror=alert("snippet")> payload explains widgets.\n' }, { title: XSS_TITLE, description: XSS_DESCRIPTION });
    const p = await adminPage();
    const dialogs: string[] = [];
    p.page.on('dialog', (d) => void dialogs.push(d.message()));
    await p.page.goto(`${s.base}/libraries/docs/xss`);
    assert.equal(await p.page.locator('#job[data-events-url]').count(), 1, 'followed live');
    release('/held/gate.txt');
    await p.page.locator('[data-job-state]', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
    assert.match(await p.page.locator('[data-job-log]').innerText(), /<img src=x onerror=alert\(1\)>\.md: \d+ snippets/, 'streamed as text');
    assert.equal(await p.page.locator('main img').count(), 0);
    assert.equal(await jobEnded(xss.body.jobId), 'succeeded');
    await p.page.goto(`${s.base}/libraries`);
    assert.match(await p.page.locator('tr[data-library-id="/docs/xss"]').innerText(), /<script>alert\("title"\)<\/script>Evil docs/);
    await p.page.goto(`${s.base}/libraries/docs/xss`);
    assert.equal(await p.page.locator('h1').innerText(), XSS_TITLE);
    assert.match(await p.page.locator('.library-id').innerText(), /<img src=x onerror=alert\("description"\)> described/);
    assert.match(await p.page.locator('[data-job-log]').innerText(), /<img src=x onerror=alert\(1\)>\.md: \d+ snippets/);
    await p.page.getByLabel('Question', { exact: true }).fill('payload widgets');
    await p.page.getByRole('button', { name: 'Ask' }).click();
    await p.page.locator('#answer article.snippet').first().waitFor();
    const answer = await p.page.locator('#answer').innerText();
    assert.ok(answer.includes(XSS_FILE), 'the file name is shown as text');
    assert.ok(answer.includes('onerror=alert("snippet")'), 'the snippet text is shown as text');
    assert.equal(await p.page.locator('main img, main script:not([src="/ui/assets/library.js"])').count(), 0, 'no element came from a payload');
    await new Promise((ok) => setTimeout(ok, 300));
    assert.deepEqual(dialogs, []);
    assert.deepEqual(p.consoleErrors, []);
  });

  test('unknown and invalid library IDs get a 404 page; a form without its CSRF token changes nothing', async () => {
    for (const path of ['/libraries/docs/nope', '/libraries/docs/guide@9.9.9', '/libraries/a/../b', '/libraries/Ⅱ/x']) {
      const r = await call(s.base, 'GET', encodeURI(path), { headers: cookieHeader() });
      assert.equal(r.status, 404, `${path}: ${r.text.slice(0, 200)}`);
      assert.match(r.headers.get('content-type') ?? '', /text\/html/);
      assert.match(r.text, /<h1>Library not found<\/h1>/);
    }
    const p = await adminPage();
    const res = await p.page.goto(`${s.base}/libraries/docs/nope`);
    assert.equal(res?.status(), 404);
    assert.match(await p.page.locator('main').innerText(), /Library "\/docs\/nope" not found/);
    assert.deepEqual(p.consoleErrors, ['Failed to load resource: the server responded with a status of 404 (Not Found)'], 'only the page\'s own status');
    // A renamed library's old page leads to its new one.
    await renameLibrary(s.kernel, '/llmstxt/127_0_0_1-live.txt', '/docs/renamed-live');
    const moved = await call(s.base, 'GET', '/libraries/llmstxt/127_0_0_1-live.txt', { headers: cookieHeader() });
    assert.equal(moved.status, 303);
    assert.equal(moved.headers.get('location'), '/libraries/docs/renamed-live');
    const forged = await call(s.base, 'POST', '/libraries/docs/guide', { headers: { ...cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' }, body: 'action=delete&confirm=%2Fdocs%2Fguide' });
    assert.equal(forged.status, 403);
    assert.match(forged.text, /Nothing was changed/);
    assert.equal((await call(s.base, 'GET', '/api/libraries/docs/guide')).status, 200, 'still there');
  });

  test('delete: with JavaScript a confirmation naming the library; without, a page where the ID is typed', async () => {
    const p = await adminPage();
    await p.page.goto(`${s.base}/libraries/docs/guide`);
    const asked: string[] = [];
    p.page.removeAllListeners('dialog');
    p.page.once('dialog', (d) => {
      asked.push(d.message());
      void d.accept();
    });
    await p.page.getByRole('button', { name: 'Delete…' }).click();
    await p.page.waitForURL(/\/libraries\?deleted=/);
    assert.match(asked[0] ?? '', /Delete library \/docs\/guide \(The Guide\)\?/);
    assert.match(await p.page.locator('#flash').innerText(), /Deleted \/docs\/guide/);
    assert.equal(await p.page.locator('tr[data-library-id="/docs/guide"]').count(), 0);
    assert.equal((await call(s.base, 'GET', '/api/libraries/docs/guide')).status, 404);
    assert.deepEqual(p.consoleErrors, []);

    // No JavaScript: the Delete button leads to a page naming the library; the ID must be typed.
    const context = await browser.newContext({ javaScriptEnabled: false });
    await context.addCookies([{ ...cookie, url: s.base }]);
    const page = await context.newPage();
    try {
      await page.goto(`${s.base}/libraries/docs/xss`);
      await page.getByRole('button', { name: 'Delete…' }).click();
      assert.equal(await page.locator('h1').innerText(), 'Delete /docs/xss?');
      await page.getByLabel('Library ID to delete').fill('/docs/guide');
      await page.getByRole('button', { name: 'Delete /docs/xss' }).click();
      assert.match(await page.locator('#confirm-error').innerText(), /is not this library's ID: type \/docs\/xss exactly/);
      assert.equal((await call(s.base, 'GET', '/api/libraries/docs/xss')).status, 200, 'nothing deleted yet');
      await page.getByLabel('Library ID to delete').fill('/docs/xss');
      await page.getByRole('button', { name: 'Delete /docs/xss' }).click();
      await page.waitForURL(/\/libraries\?deleted=/);
      assert.equal(await page.locator('tr[data-library-id="/docs/xss"]').count(), 0);
      assert.equal((await call(s.base, 'GET', '/api/libraries/docs/xss')).status, 404);
    } finally {
      await context.close();
    }
  });
});
