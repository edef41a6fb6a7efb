/**
 * A settings change made on /settings persists across a restart of the real `refdesk serve`
 * process on the same data directory (and the page shows it again after the restart).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, newPage } from '../helpers/browser.ts';
import { makeDataDir, removeDataDir, startServer, stopAll } from '../e2e/refdesk-process.ts';
import { PASSWORD, firstAdminSession, realConsoleErrors, signIn } from './settings-session.ts';

const dataDir = makeDataDir('refdesk-ui-settings-');
after(async () => {
  await stopAll();
  removeDataDir(dataDir);
});

test('settings saved on the page survive a restart of the server process', async () => {
  const browser = await launchBrowser();
  try {
    let server = await startServer(dataDir, 90_000);
    const first = await newPage(browser);
    await firstAdminSession(first.context, server.base);
    const { page } = first;
    await page.goto(`${server.base}/settings?section=access`);
    await page.getByLabel('Refresh libraries').check();
    await page.getByLabel('Most files per upload').fill('42');
    await page.getByRole('button', { name: 'Save access' }).click();
    await page.waitForURL(/done=saved/);
    await page.goto(`${server.base}/settings?section=providers`);
    await page.getByLabel('LLM provider').selectOption('anthropic');
    await page.getByLabel('Model', { exact: true }).fill('claude-test-model');
    await page.getByRole('button', { name: 'Save providers' }).click();
    await page.waitForURL(/done=saved/);
    await server.stop();

    server = await startServer(dataDir, 90_000);
    const again = await newPage(browser);
    await signIn(again.context, server.base, 'operator', PASSWORD);
    await again.page.goto(`${server.base}/settings?section=access`);
    assert.equal(await again.page.getByLabel('Refresh libraries').isChecked(), true);
    assert.equal(await again.page.getByLabel('Delete libraries').isChecked(), false);
    assert.equal(await again.page.getByLabel('Most files per upload').inputValue(), '42');
    await again.page.goto(`${server.base}/settings?section=providers`);
    assert.equal(await again.page.getByLabel('LLM provider').inputValue(), 'anthropic');
    assert.equal(await again.page.getByLabel('Model', { exact: true }).inputValue(), 'claude-test-model');
    assert.deepEqual(realConsoleErrors([...first.consoleErrors, ...again.consoleErrors]), []);
    await server.stop();
  } finally {
    await browser.close();
  }
});
