import type Router from '@koa/router';
import type { Context } from 'koa';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import { RefdeskError } from '../../core/errors.ts';
import { getSettingsView } from '../../core/settings.ts';
import { readJsonBody } from '../body.ts';
import type { Access } from '../access.ts';
import { changeSettings, testProviderSettings, type SettingsAudit } from '../operator-actions.ts';

export type { SettingsAudit, SettingsAuditEntry } from '../operator-actions.ts';

export interface SettingsRouteOptions {
  audit?: SettingsAudit;
  /** Time limit of each request of POST /api/settings/test (default 10 s; the body may ask for less). */
  checkTimeoutMs?: number;
}


/**
 * GET /api/settings, PATCH /api/settings, POST /api/settings/test: the operator's settings
 * (providers, git tokens, anonymous permissions, mcp.requireKey), for admins. Secrets are
 * write-only (GET shows {set, last4}); a change applies at once (every reader reads the Store;
 * the kernel's model providers are invalidated).
 */
export function settingsRoutes(kernel: Kernel, access: Access, opts: SettingsRouteOptions = {}): Router {
  const r = newRouter();
  const audit: SettingsAudit = opts.audit ?? ((e) => kernel.logger.info('audit', { ...e }));

  r.get('/api/settings', async (ctx) => {
    await access.requireAdmin(ctx, 'Reading the settings');
    ctx.body = await getSettingsView(kernel.store, kernel.secrets);
  });

  r.patch('/api/settings', async (ctx: Context) => {
    const caller = await access.requireAdmin(ctx, 'Changing the settings');
    const body = await readJsonBody(ctx);
    const { view, changed, cleared } = await changeSettings(kernel, audit, caller, body);
    ctx.body = { ...view, changed, cleared };
  });

  r.post('/api/settings/test', async (ctx) => {
    await access.requireAdmin(ctx, 'Testing the provider settings');
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    const body = hasBody ? await readJsonBody(ctx) : {};
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new RefdeskError('invalid_request', 'The body, when sent, is a JSON object: {"timeoutMs": 1-30000}.');
    const extra = Object.keys(body).filter((k) => k !== 'timeoutMs');
    if (extra.length) throw new RefdeskError('invalid_request', `Unknown field "${extra[0].slice(0, 40)}": the body takes only "timeoutMs" (the test uses the saved settings; PATCH /api/settings first).`);
    const t = (body as { timeoutMs?: unknown }).timeoutMs;
    if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > 30_000)) throw new RefdeskError('invalid_request', '"timeoutMs" must be an integer from 1 to 30000.');
    ctx.body = await testProviderSettings(kernel, (t as number | undefined) ?? opts.checkTimeoutMs ?? 10_000);
  });
  return r;
}
