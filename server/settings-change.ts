/**
 * Changing and testing the operator's settings, shared by PATCH /api/settings and
 * POST /api/settings/test (server/routes/settings.ts) and the web UI's forms (the setup wizard,
 * the settings page): one validation, one audit entry per change, one provider test.
 */
import type { Kernel } from '../core/kernel.ts';
import { RefdeskError } from '../core/errors.ts';
import { getResolvedProviders, patchSettings, type SettingsChange } from '../core/settings.ts';
import { actorOf } from './audit.ts';
import type { Caller } from './access.ts';
import { checkProviders, type ProviderCheckResult } from './provider-check.ts';

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

/**
 * Applies a settings change for an admin caller (patchSettings: validated, secrets sealed) and
 * records it (`settings.change`, success with the changed field names, or failure with the error
 * code); the model providers are re-read at their next use. Throws what patchSettings throws.
 */
export async function changeSettings(kernel: Kernel, caller: Caller, body: unknown, audit: SettingsAudit): Promise<SettingsChange> {
  let change: SettingsChange;
  try {
    change = await patchSettings(kernel.store, kernel.secrets, body);
  } catch (e) {
    await audit({ actor: actorOf(caller), action: 'settings.change', outcome: 'failure', client: caller.client, details: { error: (e as RefdeskError).code ?? 'internal_error' } });
    throw e;
  }
  kernel.providers?.invalidate();
  await audit({ actor: actorOf(caller), action: 'settings.change', outcome: 'success', client: caller.client, details: { changed: change.changed, cleared: change.cleared } });
  return change;
}

/** Tries the saved LLM and embedding endpoints (checkProviders); 400 when a saved key cannot be opened. */
export async function testProviderSettings(kernel: Kernel, timeoutMs: number): Promise<ProviderCheckResult> {
  const resolved = await getResolvedProviders(kernel.store, kernel.secrets).catch(() => {
    throw new RefdeskError('invalid_request', 'A saved key cannot be opened with this server\'s sealing key (ENCRYPTION_KEY or DATA_DIR/secret.key changed; GET /api/settings shows it "unreadable"): enter it again with PATCH /api/settings.');
  });
  return checkProviders(resolved, { timeoutMs });
}
