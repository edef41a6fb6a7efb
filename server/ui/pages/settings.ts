/**
 * /settings (issue 20, docs/ui.md): the operator's settings in sections, each reachable without
 * JavaScript as /settings?section=<id>. Every save calls the function its API route calls
 * (server/operator-actions.ts, AuthService), from an urlencoded form with the session's `_csrf`,
 * then 303s back to the section with a flash message; a refused change renders the section again
 * (400) with the API's messages beside the fields and the values kept, never a secret.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { RefdeskError } from '../../../core/errors.ts';
import { getSettingsView, getStoredProviderSettings, ANONYMOUS_PERMISSIONS } from '../../../core/settings.ts';
import { LLM_PROVIDERS, EMBEDDING_PROVIDERS, GIT_HOST_PROVIDERS, VENDOR_DEFAULTS } from '../../../core/provider-settings.ts';
import { getPolicy, sourceCategories } from '../../access/policy.ts';
import type { Caller } from '../../access.ts';
import { formBody } from '../../auth/sessions.ts';
import { InstalledLicence } from '../../licence.ts';
import {
  changePolicy,
  changeSettings,
  createApiKeyAudited,
  listApiKeysWithUsage,
  listAuditPage,
  revokeApiKeyAudited,
  settingsAuditOf,
  testProviderSettings,
} from '../../operator-actions.ts';
import type { ProviderCheckResult } from '../../provider-check.ts';
import { guardPage, licenceBanner, type UiDeps } from '../page-access.ts';
import { isHtmx, redirect, renderFragment, renderPage, type Flash, type UiUser } from '../render.ts';
import { accessPatch, fieldErrors, gitPatch, policyPatch, providersPatch, type Form } from '../settings-forms.ts';

export const SETTINGS_SECTIONS = [
  { id: 'providers', label: 'AI providers' },
  { id: 'git', label: 'Git tokens' },
  { id: 'access', label: 'Access' },
  { id: 'account', label: 'Account' },
  { id: 'keys', label: 'API keys' },
  { id: 'policies', label: 'Policies' },
  { id: 'licence', label: 'Licence' },
  { id: 'audit', label: 'Audit log' },
] as const;
type SectionId = (typeof SETTINGS_SECTIONS)[number]['id'];

/** Flash messages after a save (the redirect names one by code; no text travels in the URL). */
const DONE: Record<string, string> = {
  saved: 'Settings saved.',
  'saved-cleared': 'Settings saved. A stored key was removed because its provider or base URL changed: enter the key again.',
  unchanged: 'Nothing changed.',
  credentials: 'Credentials changed; every other session was ended.',
  revoked: 'API key revoked: requests with it now get 401.',
  policy: 'Policy saved.',
};

/** How long "Test connection" waits for each endpoint (as POST /api/settings/test by default). */
const TEST_TIMEOUT_MS = 10_000;
const AUDIT_PAGE = 25;

function sectionOf(raw: unknown): SectionId {
  return SETTINGS_SECTIONS.find((s) => s.id === raw)?.id ?? 'providers';
}

interface Extra {
  flash?: Flash | null;
  errors?: Record<string, string>;
  /** The submitted (non-secret) values to show again after a refused change. */
  values?: Form;
  testResult?: ProviderCheckResult;
  created?: { key: string; record: { id: string; name: string; prefix: string } };
  confirmRevoke?: { id: string; name: string; prefix: string };
  status?: number;
}

/** Secret fields never go back into a page. */
const SECRET_FIELD = /apiKey|Token|token|[Pp]assword|^_csrf$/;
function keptValues(form: Form): Form {
  return Object.fromEntries(Object.entries(form).filter(([k]) => !SECRET_FIELD.test(k)));
}

async function sectionData(deps: UiDeps, section: SectionId, ctx: Context): Promise<Record<string, unknown>> {
  const { kernel, service } = deps;
  switch (section) {
    case 'providers':
      return { settings: await getSettingsView(kernel.store, kernel.secrets), llmProviders: LLM_PROVIDERS, embeddingProviders: EMBEDDING_PROVIDERS, defaults: VENDOR_DEFAULTS };
    case 'git':
      return { settings: await getSettingsView(kernel.store, kernel.secrets), hostProviders: GIT_HOST_PROVIDERS };
    case 'access':
      return { settings: await getSettingsView(kernel.store, kernel.secrets), permissions: ANONYMOUS_PERMISSIONS, uploadDefaults: kernel.config.uploads };
    case 'account':
      return {};
    case 'keys': {
      const { plans, defaultPlan, windowSeconds } = kernel.config.rateLimits;
      return { keys: await listApiKeysWithUsage(kernel, service), plans: Object.keys(plans), defaultPlan, windowSeconds };
    }
    case 'policies':
      return { policy: await getPolicy(kernel.store), sourceTypes: loadedCategories(deps), licenceExpired: deps.licence?.expired() ?? false };
    case 'licence':
      return { licence: deps.licence instanceof InstalledLicence ? deps.licence.summary(true) : null };
    case 'audit': {
      const before = typeof ctx.query.before === 'string' && /^\d{1,12}$/.test(ctx.query.before) ? ctx.query.before : undefined;
      return { audit: await listAuditPage(kernel, { limit: String(AUDIT_PAGE), ...(before ? { before } : {}) }), before: before ?? null };
    }
  }
}

async function renderSettings(ctx: Context, deps: UiDeps, user: UiUser, section: SectionId, extra: Extra = {}): Promise<void> {
  const data = await sectionData(deps, section, ctx);
  renderPage(
    ctx,
    'settings/index',
    { title: 'Settings', nav: 'settings', user, flash: extra.flash ?? null, banner: licenceBanner(deps) },
    { ...data, section, sections: SETTINGS_SECTIONS, errors: extra.errors ?? {}, values: extra.values ?? null, testResult: extra.testResult ?? null, created: extra.created ?? null, confirmRevoke: extra.confirmRevoke ?? null },
    extra.status ?? 200,
  );
}

/** Where a form post of a signed-out browser goes (back to the page, not to the post's own path). */
const SIGN_IN_AGAIN = '/login?next=%2Fsettings';

/**
 * For a form post: the admin caller (session checked, CSRF checked), or undefined after
 * answering: signed out -> /login, factory credentials -> /setup, a failed CSRF check -> a 403
 * page saying to reload.
 */
async function guardAction(ctx: Context, deps: UiDeps, what: string): Promise<{ caller: Caller; user: UiUser } | undefined> {
  let caller: Caller;
  try {
    caller = await deps.access.requireAdmin(ctx, what);
  } catch (e) {
    const code = (e as RefdeskError).code;
    if (code === 'csrf_failed') {
      renderPage(ctx, 'message', { title: 'Form expired', user: null, flash: { kind: 'error', text: 'This form could not be checked (its security token is missing, stale, or it came from another site): nothing was changed.' } }, { message: 'Reload the settings page and try again.', link: { href: '/settings', text: 'Back to settings' } }, 403);
      return undefined;
    }
    if (code === 'credentials_change_required') redirect(ctx, '/setup');
    else if (code === 'unauthorized' || code === 'forbidden') redirect(ctx, SIGN_IN_AGAIN);
    else throw e;
    return undefined;
  }
  if (caller.kind !== 'session') {
    // The pages are for a signed-in browser; API keys use the API.
    redirect(ctx, SIGN_IN_AGAIN);
    return undefined;
  }
  const s = caller.session;
  return { caller, user: { username: s.username, csrfToken: s.csrfToken, mustChangeCredentials: s.mustChangeCredentials } };
}

async function form(ctx: Context): Promise<Form> {
  const f = (await formBody(ctx)) ?? {};
  const { _csrf: _ignored, ...rest } = f;
  return rest;
}

const doneUrl = (section: SectionId, code: string) => `/settings?section=${section}&done=${code}#${section}`;

/** A RefdeskError the page shows (400s of validation, 401/403 of the action); anything else is rethrown. */
function shown(e: unknown): RefdeskError {
  if (e instanceof RefdeskError && e.status >= 400 && e.status < 500) return e;
  throw e;
}

/** A refused change: the section again with the API's messages beside the fields, the values kept (never a secret). */
async function showRefused(ctx: Context, deps: UiDeps, user: UiUser, section: SectionId, e: unknown, f: Form, fields: string[], fallback: string, rename?: (p: string) => string): Promise<void> {
  const err = shown(e);
  const { errors, general } = fieldErrors(err.message, fields, rename);
  await renderSettings(ctx, deps, user, section, { flash: { kind: 'error', text: general.length ? general.join('; ') : fallback }, errors, values: keptValues(f), status: err.status });
}

/** The policy categories the page offers: those the loaded sources place libraries in (SourceDefinition.policyCategory). */
const loadedCategories = (deps: UiDeps) => sourceCategories([...deps.kernel.sources.values()].map((s) => s.def));

export function registerSettingsPages(r: Router, deps: UiDeps): void {
  const { kernel } = deps;
  const record = settingsAuditOf(kernel);

  r.get('/settings', async (ctx) => {
    const user = await guardPage(ctx, deps);
    if (!user) return;
    const section = sectionOf(ctx.query.section);
    const code = typeof ctx.query.done === 'string' ? ctx.query.done : '';
    await renderSettings(ctx, deps, user, section, { flash: DONE[code] ? { kind: 'success', text: DONE[code] } : null });
  });

  /** A settings form: its fields as a PATCH /api/settings body, through changeSettings. */
  const settingsForm = (section: SectionId, toPatch: (f: Form) => Promise<{ patch: unknown; rename?: (p: string) => string }>) => async (ctx: Context) => {
    const g = await guardAction(ctx, deps, 'Changing the settings');
    if (!g) return;
    const f = await form(ctx);
    const { patch, rename } = await toPatch(f);
    try {
      const { changed, cleared } = await changeSettings(kernel, record, g.caller, patch);
      redirect(ctx, doneUrl(section, cleared.length ? 'saved-cleared' : changed.length ? 'saved' : 'unchanged'));
    } catch (e) {
      await showRefused(ctx, deps, g.user, section, e, f, Object.keys(f), 'Nothing was saved: correct the fields marked below.', rename);
    }
  };

  r.post('/settings/providers', settingsForm('providers', async (f) => ({ patch: providersPatch(f) })));
  r.post('/settings/git', settingsForm('git', async (f) => {
    const stored = (await getStoredProviderSettings(kernel.store)).git.hosts ?? [];
    const { patch, rowOf } = gitPatch(f, stored);
    return { patch, rename: (p) => p.replace(/^git\.hosts\[(\d+)\]/, (_m, i: string) => `git.hosts[${rowOf[Number(i)] ?? i}]`) };
  }));
  r.post('/settings/access', settingsForm('access', async (f) => ({ patch: accessPatch(f) })));

  /** "Test connection": the saved endpoints, as POST /api/settings/test; a fragment for htmx, the section without JS. */
  r.post('/settings/test', async (ctx) => {
    const g = await guardAction(ctx, deps, 'Testing the provider settings');
    if (!g) return;
    let result: ProviderCheckResult;
    try {
      result = await testProviderSettings(kernel, TEST_TIMEOUT_MS);
    } catch (e) {
      const err = shown(e);
      if (isHtmx(ctx)) return renderFragment(ctx, 'settings/test-result', { result: null, error: err.message });
      return renderSettings(ctx, deps, g.user, 'providers', { flash: { kind: 'error', text: err.message }, status: err.status });
    }
    if (isHtmx(ctx)) return renderFragment(ctx, 'settings/test-result', { result, error: null });
    await renderSettings(ctx, deps, g.user, 'providers', { testResult: result, flash: { kind: result.ok ? 'success' : 'error', text: result.ok ? 'Connection test passed.' : 'Connection test failed: see the results below.' } });
  });

  /** Change credentials: AuthService.changeCredentials, as POST /api/auth/credentials. */
  r.post('/settings/credentials', async (ctx) => {
    const g = await guardAction(ctx, deps, 'Changing the credentials');
    if (!g) return;
    const f = await form(ctx);
    const body: Record<string, unknown> = { currentPassword: f.currentPassword ?? '', newPassword: f.newPassword ?? '' };
    if ((f.newUsername ?? '').trim() !== '') body.newUsername = f.newUsername;
    try {
      await deps.auth.changeCredentials(ctx, body);
      redirect(ctx, doneUrl('account', 'credentials'));
    } catch (e) {
      await showRefused(ctx, deps, g.user, 'account', e, f, ['currentPassword', 'newUsername', 'newPassword'], 'The credentials were not changed: see below.');
    }
  });

  /** Sign out everywhere: AuthService.logout(all), as POST /api/auth/logout {"all": true}. */
  r.post('/settings/sign-out-everywhere', async (ctx) => {
    const g = await guardAction(ctx, deps, 'Signing out everywhere');
    if (!g) return;
    await deps.auth.logout(ctx, true);
    redirect(ctx, '/login');
  });

  /** Create an API key: shown in this answer once (not a redirect: nothing else ever shows it). */
  r.post('/settings/keys', async (ctx) => {
    const g = await guardAction(ctx, deps, 'Creating an API key');
    if (!g) return;
    const f = await form(ctx);
    const body: Record<string, string> = {};
    for (const k of ['name', 'plan', 'role']) if ((f[k] ?? '').trim() !== '') body[k] = f[k];
    try {
      const created = await createApiKeyAudited(kernel, deps.service, g.caller, body);
      await renderSettings(ctx, deps, g.user, 'keys', { created, flash: { kind: 'success', text: `API key "${created.record.name || created.record.id}" created: copy it now, it is not shown again.` } });
    } catch (e) {
      await showRefused(ctx, deps, g.user, 'keys', e, f, ['name', 'plan', 'role'], 'The key was not created: see below.');
    }
  });

  /** Revoke: with `confirmed=1` (the page's confirmation or app.js's data-confirm); without it, a confirmation. */
  r.post('/settings/keys/:id/revoke', async (ctx) => {
    const g = await guardAction(ctx, deps, 'Revoking an API key');
    if (!g) return;
    const f = await form(ctx);
    const id = String(ctx.params.id);
    const key = (await kernel.store.listApiKeys()).find((k) => k.id === id);
    if (!key) {
      return renderSettings(ctx, deps, g.user, 'keys', { flash: { kind: 'error', text: `Unknown API key "${id.slice(0, 40)}".` }, status: 404 });
    }
    if (f.confirmed !== '1') return renderSettings(ctx, deps, g.user, 'keys', { confirmRevoke: { id: key.id, name: key.name, prefix: key.prefix } });
    try {
      await revokeApiKeyAudited(kernel, g.caller, id);
      redirect(ctx, doneUrl('keys', 'revoked'));
    } catch (e) {
      const err = shown(e);
      await renderSettings(ctx, deps, g.user, 'keys', { flash: { kind: 'error', text: err.message }, status: err.status });
    }
  });

  /** Policies: admin and a valid licence, as PATCH /api/v2/policies. */
  r.post('/settings/policies', async (ctx) => {
    const g = await guardAction(ctx, deps, 'Changing the policy');
    if (!g) return;
    const f = await form(ctx);
    try {
      deps.access.requireLicence('Changing the policy');
      await changePolicy(deps.service, g.caller, policyPatch(f, loadedCategories(deps)));
      redirect(ctx, doneUrl('policies', 'policy'));
    } catch (e) {
      await showRefused(ctx, deps, g.user, 'policies', e, f, Object.keys(f), 'The policy was not saved: see below.');
    }
  });
}

