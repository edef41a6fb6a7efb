/**
 * Who may see a UI page, and where everyone else goes. The UI adds no behaviour the HTTP API
 * lacks: a page needs what its API routes need (a signed-in admin session, or an anonymous
 * permission that is On), and a signed-out visitor of any other page is sent to /login.
 */
import type { Context } from 'koa';
import type { Kernel } from '../../core/kernel.ts';
import { getAnonymousPermissions, type AnonymousPermission } from '../../core/settings.ts';
import type { Access, LicenceView } from '../access.ts';
import type { AuthService } from '../auth/sessions.ts';
import type { ApiService } from '../api/service.ts';
import type { JobRunner } from '../job-runner.ts';
import { InstalledLicence } from '../licence.ts';
import type { UiUser } from './render.ts';
import { redirect } from './render.ts';
import { getWizardState } from '../setup-state.ts';

/** What the UI's page modules are given (the same objects the API routes use). */
export interface UiDeps {
  kernel: Kernel;
  service: ApiService;
  jobs: JobRunner;
  access: Access;
  auth: AuthService;
  /** The installed licence, when the server checks one. */
  licence?: LicenceView;
}

export { SETUP_WIZARD_SETTING } from '../setup-state.ts';

/**
 * The signed-in admin session of this request, or null when signed out. An unknown or expired
 * session cookie counts as signed out (the API answers 401; a page sends the visitor to /login).
 */
export async function uiUser(ctx: Context, deps: UiDeps): Promise<UiUser | null> {
  try {
    const caller = await deps.access.caller(ctx);
    if (caller.kind !== 'session') return null;
    return { username: caller.session.username, csrfToken: caller.session.csrfToken, mustChangeCredentials: caller.session.mustChangeCredentials };
  } catch {
    return null;
  }
}

/** Whether the factory credentials were changed (an admin account exists in the store). */
export async function credentialsChanged(deps: UiDeps): Promise<boolean> {
  return (await deps.kernel.store.getAdminAccount()) !== null;
}

/** Setup is done once the credentials are changed and the wizard was finished or skipped. */
export async function setupDone(deps: UiDeps): Promise<boolean> {
  if (!(await credentialsChanged(deps))) return false;
  return (await getWizardState(deps.kernel.store)).done;
}

/** `/login?next=<this page>` (only same-site paths are ever followed back). */
export function loginUrl(ctx: Context): string {
  return `/login?next=${encodeURIComponent(ctx.originalUrl)}`;
}

/** A same-site path to go back to after sign-in, or the fallback. */
export function safeNext(raw: unknown, fallback = '/libraries'): string {
  const s = typeof raw === 'string' ? raw : '';
  return /^\/(?![/\\])[^\s]*$/.test(s) ? s : fallback;
}

export interface PageGuard {
  /** An anonymous permission that, when On, opens the page to signed-out visitors too. */
  anonymous?: AnonymousPermission;
}

/**
 * For a page handler: the signed-in admin, or null for a signed-out visitor the page's
 * anonymous permission lets in. Otherwise it redirects (to /login, or to /setup while the
 * session must change the factory credentials) and returns undefined: the handler stops.
 */
export async function guardPage(ctx: Context, deps: UiDeps, guard: PageGuard = {}): Promise<UiUser | null | undefined> {
  const user = await uiUser(ctx, deps);
  if (user) {
    if (user.mustChangeCredentials) {
      redirect(ctx, '/setup');
      return undefined;
    }
    return user;
  }
  if (guard.anonymous && (await getAnonymousPermissions(deps.kernel.store))[guard.anonymous]) return null;
  redirect(ctx, loginUrl(ctx));
  return undefined;
}

/**
 * The banner every page shows (PageFrame.banner) while a trial, expiring or expired licence is
 * installed; null for a valid full licence or none. Pages call it when they build their frame.
 */
export function licenceBanner(deps: Pick<UiDeps, 'licence'>): string | null {
  const l = deps.licence;
  if (!(l instanceof InstalledLicence)) return null;
  const s = l.summary(false);
  if (s.warning) return s.warning;
  if (s.trial) return `Trial licence for ${s.licensee}: ${s.daysLeft} day${s.daysLeft === 1 ? '' : 's'} left (until ${s.expiresAt.slice(0, 10)}).`;
  return null;
}
