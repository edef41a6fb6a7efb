/**
 * A real browser for the web UI's tests: Debian's chromium (`apt-get install chromium`, done by
 * .ci/run) driven by playwright-core, headless, no browser download. CHROMIUM_PATH overrides the
 * executable.
 *
 *   const browser = await launchBrowser();
 *   const page = await newPage(browser, { colorScheme: 'dark' });   // console errors collected
 *   ...
 *   assert.deepEqual(page.consoleErrors, []);                        // CSP violations show here
 *   await saveScreenshot(page.page, 'libraries', 'dark');
 */
import { mkdirSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ROOT } from '../server/helpers/api-server.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The flags that keep chromium quiet on a machine without outside network (see the env notes). */
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

export interface UiPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and page errors seen so far (a CSP violation is one). */
  consoleErrors: string[];
}

export interface PageOptions {
  colorScheme?: 'light' | 'dark';
  /** Viewport width (default 1280; 390 for a phone). */
  width?: number;
}

/** A fresh context (own cookies) and page that records console errors. */
export async function newPage(browser: Browser, opts: PageOptions = {}): Promise<UiPage> {
  const width = opts.width ?? 1280;
  const context = await browser.newContext({ colorScheme: opts.colorScheme ?? 'light', viewport: { width, height: width < 600 ? 844 : 900 } });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  return { page, context, consoleErrors };
}

/** Where a test run writes its screenshots (kept out of git; copied to docs/img with UPDATE_SCREENSHOTS=1). */
export const SCREENSHOT_DIR = join(ROOT, 'test-output', 'screenshots');

/**
 * Saves a full-page screenshot as test-output/screenshots/<name>-<theme>.png, and with
 * UPDATE_SCREENSHOTS=1 also as docs/img/<name>-<theme>.png (the set docs/ui.md shows).
 */
export async function saveScreenshot(page: Page, name: string, theme: 'light' | 'dark'): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = join(SCREENSHOT_DIR, `${name}-${theme}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.UPDATE_SCREENSHOTS === '1') {
    mkdirSync(join(ROOT, 'docs', 'img'), { recursive: true });
    copyFileSync(file, join(ROOT, 'docs', 'img', `${name}-${theme}.png`));
  }
  return file;
}
