import type Router from '@koa/router';
import type { Context } from 'koa';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import { RefdeskError } from '../../core/errors.ts';
import { changeSettings, getResolvedProviders, getSettingsView } from '../../core/settings.ts';
import { readJsonBody } from '../body.ts';
import { actorOf } from '../audit.ts';
import type { Access, Caller } from '../access.ts';
import { checkProviders } from '../provider-check.ts';

/**
 * One audit entry, as server/audit.ts (the auth module) records it. Entries name the fields that
 * changed, never their values.
 */
export interface SettingsAuditEntry {
  actor: string;
  action: string;
  target?: string;
  outcome: 'success' | 'failure';
  client: string;
  details?: Record<string, unknown>;
}

/** Where settings changes are recorded; createApp passes the audit log's writer (default: the server log). */
export type SettingsAudit = (entry: SettingsAuditEntry) => void | Promise<void>;

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
    let change;
    try {
      change = await changeSettings(kernel, body);
    } catch (e) {
      await audit({ actor: actorOf(caller), action: 'settings.change', outcome: 'failure', client: caller.client, details: { error: (e as RefdeskError).code ?? 'internal_error' } });
      throw e;
    }
    await audit({ actor: actorOf(caller), action: 'settings.change', outcome: 'success', client: caller.client, details: { changed: change.changed, cleared: change.cleared } });
    ctx.body = { ...(await getSettingsView(kernel.store, kernel.secrets)), changed: change.changed, cleared: change.cleared };
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
    const resolved = await getResolvedProviders(kernel.store, kernel.secrets).catch(() => {
      throw new RefdeskError('invalid_request', 'A saved key cannot be opened with this server\'s sealing key (ENCRYPTION_KEY or DATA_DIR/secret.key changed; GET /api/settings shows it "unreadable"): enter it again with PATCH /api/settings.');
    });
    ctx.body = await checkProviders(resolved, { timeoutMs: (t as number | undefined) ?? opts.checkTimeoutMs ?? 10_000 });
  });
  return r;
}
