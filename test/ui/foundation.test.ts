import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderPage } from '../../server/ui/render.ts';
import { UI_CSP } from '../../server/ui/security.ts';
import { safeNext } from '../../server/ui/page-access.ts';
import { startApiServer } from '../server/helpers/api-server.ts';
import { launchBrowser, newPage } from '../helpers/browser.ts';

test('pages escape what they are given: a title with a script tag renders as text', () => {
  const ctx = { set() {}, status: 0, type: '', body: '' } as unknown as Parameters<typeof renderPage>[0];
  renderPage(ctx, 'message', { title: '<script>alert(1)</script>', user: null }, { message: '<img src=x onerror=alert(1)>' });
  const html = String((ctx as unknown as { body: string }).body);
  assert.ok(!html.includes('<script>alert(1)'));
  assert.ok(!html.includes('<img src=x'));
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
});

test('safeNext follows only same-site paths', () => {
  assert.equal(safeNext('/libraries/docs/x?y=1'), '/libraries/docs/x?y=1');
  for (const bad of ['//evil.example/x', 'https://evil.example', '/\\evil', 'javascript:alert(1)', '', undefined, 42]) assert.equal(safeNext(bad), '/libraries');
});

test('UI assets come from the package with the UI security headers; the layout holds its CSP in a real browser', async () => {
  const server = await startApiServer();
  const browser = await launchBrowser();
  try {
    for (const name of ['htmx.min.js', 'sse.js', 'app.js', 'app.css']) {
      const res = await fetch(`${server.base}/ui/assets/${name}`);
      assert.equal(res.status, 200, name);
      assert.equal(res.headers.get('content-security-policy'), UI_CSP);
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.ok((await res.text()).length > 100, name);
    }
    assert.equal((await fetch(`${server.base}/ui/assets/nope.js`)).status, 404);
    // `/` on a fresh data directory leads a signed-out visitor towards sign-in and the wizard.
    const root = await fetch(`${server.base}/`, { redirect: 'manual' });
    assert.equal(root.status, 303);
    assert.equal(root.headers.get('location'), '/login?next=%2Fsetup');
    // The browser the UI tests drive starts and reaches the server.
    const { page, consoleErrors } = await newPage(browser);
    const res = await page.goto(`${server.base}/ui/assets/app.css`);
    assert.equal(res?.status(), 200);
    assert.deepEqual(consoleErrors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
