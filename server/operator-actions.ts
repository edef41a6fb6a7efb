/**
 * Operator actions that both the HTTP API routes and the web UI's pages perform, so the two
 * never hold their own copies of the checks and the audit entries:
 *
 * - settings: `changeSettings` (PATCH /api/settings), `testProviderSettings` (POST /api/settings/test)
 * - policy: `changePolicy` (PATCH /api/v2/policies)
 * - API keys: `createApiKeyAudited`, `listApiKeysWithUsage`, `revokeApiKeyAudited` (/api/admin/keys)
 * - audit log: `listAuditPage` (GET /api/audit)
 *
 * The caller is already checked (access.requireAdmin / requireLicence) by the route or page.
 */
import type { Kernel } from '../core/kernel.ts';
import type { ApiKeyRecord, ApiKeyRole, AuditEntry } from '../core/contracts.ts';
import { RefdeskError } from '../core/errors.ts';
import { applySettingsPatch, getResolvedProviders, getSettingsView } from '../core/settings.ts';
import { objectBody, onlyFields, optionalInt, optionalString, type Params } from './api/params.ts';
import type { ApiService, PolicyResponse } from './api/service.ts';
import type { Caller } from './access.ts';
import { actorOf, audit } from './audit.ts';
import { checkProviders, type ProviderCheckResult } from './provider-check.ts';

/** One audit entry of a settings change (names of fields only, never values). */
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

/** The audit log's writer for settings changes (what createApp gives the settings routes). */
export function settingsAuditOf(kernel: Kernel): SettingsAudit {
  return (e) => audit(kernel, e).then(() => {});
}

export interface SettingsChangeResult {
  view: Record<string, unknown>;
  changed: string[];
  cleared: string[];
}

/**
 * PATCH /api/settings: validates and applies a change (patchSettings), records it (a refused
 * change with its error code), drops the cached provider clients, and answers the new view.
 */
export async function changeSettings(kernel: Kernel, record: SettingsAudit, caller: Caller, body: unknown): Promise<SettingsChangeResult> {
  let change;
  try {
    change = await applySettingsPatch(kernel, body);
  } catch (e) {
    await record({ actor: actorOf(caller), action: 'settings.change', outcome: 'failure', client: caller.client, details: { error: (e as RefdeskError).code ?? 'internal_error' } });
    throw e;
  }
  await record({ actor: actorOf(caller), action: 'settings.change', outcome: 'success', client: caller.client, details: { changed: change.changed, cleared: change.cleared } });
  return { view: await getSettingsView(kernel.store, kernel.secrets), changed: change.changed, cleared: change.cleared };
}

/** POST /api/settings/test: one tiny request to each saved endpoint (server/provider-check.ts). */
export async function testProviderSettings(kernel: Kernel, timeoutMs: number): Promise<ProviderCheckResult> {
  const resolved = await getResolvedProviders(kernel.store, kernel.secrets).catch(() => {
    throw new RefdeskError('invalid_request', 'A saved key cannot be opened with this server\'s sealing key (ENCRYPTION_KEY or DATA_DIR/secret.key changed; GET /api/settings shows it "unreadable"): enter it again with PATCH /api/settings.');
  });
  return checkProviders(resolved, { timeoutMs });
}

/** PATCH /api/v2/policies for an admin the caller checked (and the licence): applies and records it. */
export async function changePolicy(service: ApiService, caller: Caller, body: unknown): Promise<PolicyResponse> {
  const result = await service.patchPolicy(body);
  const fields = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).slice(0, 20) : [];
  await audit(service.kernel, { actor: actorOf(caller), action: 'policy.change', target: null, outcome: 'success', client: caller.client, details: { fields } });
  return result;
}

/** POST /api/admin/keys: body {name?, plan?, role?}; the key is in this answer only. */
export async function createApiKeyAudited(kernel: Kernel, service: ApiService, caller: Caller, raw: unknown): Promise<{ key: string; record: ApiKeyRecord }> {
  const body = objectBody(raw);
  onlyFields(body, ['name', 'plan', 'role']);
  const role = optionalString(body, 'role', 20) as ApiKeyRole | undefined;
  const { key, record } = await service.createKey({ name: optionalString(body, 'name', 100), plan: optionalString(body, 'plan', 100), role });
  await audit(kernel, { actor: actorOf(caller), action: 'keys.create', target: record.id, outcome: 'success', client: caller.client, details: { name: record.name, plan: record.plan, role: record.role } });
  return { key, record };
}

/** A key's use of its current rate-limit window. */
export interface KeyUsage {
  used: number;
  limit: number;
  remaining: number;
  resetAt: string;
}

/** GET /api/admin/keys: each key with its use of the current rate-limit window. */
export async function listApiKeysWithUsage(kernel: Kernel, service: ApiService): Promise<Array<ApiKeyRecord & { usage: KeyUsage }>> {
  const keys = await kernel.store.listApiKeys();
  return keys.map((k) => {
    const d = service.rateLimiter.peek(`key:${k.id}`, service.rateLimiter.ruleFor(k.plan));
    return { ...k, usage: { used: d.limit - d.remaining, limit: d.limit, remaining: d.remaining, resetAt: new Date(d.resetAt * 1000).toISOString() } };
  });
}

/** DELETE /api/admin/keys/{id}: revokes and records it; 400 for an unknown id. */
export async function revokeApiKeyAudited(kernel: Kernel, caller: Caller, id: string): Promise<ApiKeyRecord> {
  const record = await kernel.store.revokeApiKey(id);
  if (!record) throw new RefdeskError('invalid_request', `Unknown key id "${id.slice(0, 40)}"; list the keys with refdesk keys list.`);
  await audit(kernel, { actor: actorOf(caller), action: 'keys.revoke', target: record.id, outcome: 'success', client: caller.client, details: { name: record.name } });
  return record;
}

/** GET /api/audit: newest first, `limit` 1..500 (default 50), `before` an entry id to page. */
export async function listAuditPage(kernel: Kernel, query: Params): Promise<{ entries: AuditEntry[]; nextBefore: number | null }> {
  const limit = optionalInt(query, 'limit') ?? 50;
  if (limit > 500) throw new RefdeskError('invalid_request', 'Parameter "limit" must be at most 500.');
  const before = optionalInt(query, 'before');
  const entries = await kernel.store.listAudit({ limit, ...(before !== undefined ? { before } : {}) });
  return { entries, nextBefore: entries.length === limit ? entries[entries.length - 1].id : null };
}
