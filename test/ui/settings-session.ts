/**
 * Admin sessions for the settings page's browser tests: signed in through the API (the browser
 * context's own cookie jar), as the sign-in page would leave them.
 */
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';

export const PASSWORD = 'a-long-operator-password-1';

/** Signs a browser context in through the API (its cookie jar is the browser's); answers the CSRF token. */
export async function signIn(context: BrowserContext, base: string, username: string, password: string): Promise<string> {
  const r = await context.request.post(`${base}/api/auth/login`, { data: { username, password } });
  assert.equal(r.status(), 200, await r.text());
  return (await r.json()).csrfToken as string;
}

/** A fresh server's first sign-in: the factory credentials, changed to operator / PASSWORD. */
export async function firstAdminSession(context: BrowserContext, base: string): Promise<void> {
  const csrf = await signIn(context, base, 'admin', 'refdesk');
  const r = await context.request.post(`${base}/api/auth/credentials`, { data: { currentPassword: 'refdesk', newUsername: 'operator', newPassword: PASSWORD }, headers: { 'x-csrf-token': csrf } });
  assert.equal(r.status(), 200, await r.text());
}

/**
 * Console errors that matter (a CSP refusal, a script error): Chromium also logs every 4xx
 * answer as "Failed to load resource" (a refused form answers 400; /favicon.ico and the other
 * parts' placeholder pages 404), which this leaves out.
 */
export function realConsoleErrors(errors: string[]): string[] {
  return errors.filter((e) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(e));
}
