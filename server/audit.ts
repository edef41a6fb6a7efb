/**
 * The audit log of admin actions (sign-ins and their failures, credential changes, settings,
 * keys, policy, deletes, renames), kept in the store (`Store.appendAudit`, batched) and shown by
 * `GET /api/audit`. Anyone recording an action calls:
 *
 *   await audit(kernel, { actor: actorOf(caller), action: 'keys.create', target: record.id, outcome: 'success', client: caller.client });
 *
 * Entries never hold secrets: detail fields named like secrets (password, token, secret, cookie,
 * session, authorization, apiKey, key) are dropped, every string is passed through the generic
 * redactor (Bearer/Basic credentials, `token=...`, URL userinfo) and stripped of anything shaped
 * like a Refdesk key (`rdk_...`, `rdcli_...`), and strings are cut at 300 characters. Recording
 * never fails the action: a store that cannot take the entry is logged and skipped.
 */
import type { AuditEntry, AuditOutcome, Store } from '../core/contracts.ts';
import type { Kernel } from '../core/kernel.ts';
import { REDACTED, redactGeneric } from '../core/redact.ts';
import type { Caller } from './access.ts';

export interface AuditInput {
  actor: string;
  action: string;
  target?: string | null;
  outcome: AuditOutcome;
  client: string;
  details?: Record<string, unknown>;
}

const SECRET_FIELD = /pass(word|wd|phrase)?|secret|token|cookie|session|authorization|credential|api[_-]?key|^key$|^_csrf$/i;
const KEY_SHAPED = /\b(rdk|rdcli)_[A-Za-z0-9_-]{8,}/g;
const MAX_STRING = 300;

function clean(text: string): string {
  return redactGeneric(text).replace(KEY_SHAPED, REDACTED).slice(0, MAX_STRING);
}

function cleanValue(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return clean(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return v;
  if (depth >= 3) return undefined;
  if (Array.isArray(v)) return v.slice(0, 50).map((x) => cleanValue(x, depth + 1));
  if (typeof v === 'object') return cleanDetails(v as Record<string, unknown>, depth + 1);
  return undefined;
}

function cleanDetails(details: Record<string, unknown>, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details).slice(0, 50)) {
    if (SECRET_FIELD.test(k)) continue;
    const c = cleanValue(v, depth);
    if (c !== undefined) out[clean(k)] = c;
  }
  return out;
}

/** Records an admin action; resolves with the stored entry, or null when it could not be stored. */
export async function audit(target: Kernel | Store, input: AuditInput): Promise<AuditEntry | null> {
  const kernel = 'store' in target && 'clock' in target ? (target as Kernel) : null;
  const store = kernel ? kernel.store : (target as Store);
  const at = (kernel ? kernel.clock.now() : new Date()).toISOString();
  try {
    return await store.appendAudit({
      at,
      actor: clean(String(input.actor)),
      action: clean(String(input.action)),
      target: input.target === undefined || input.target === null ? null : clean(String(input.target)),
      outcome: input.outcome,
      client: clean(String(input.client)),
      details: cleanDetails(input.details ?? {}),
    });
  } catch (e) {
    kernel?.logger.warn('audit: could not record an entry', { action: input.action, error: (e as Error).message });
    return null;
  }
}

/** How an entry names the caller: `admin:<username>`, `key:<id>` (`cli` for the local CLI token), `anonymous`. */
export function actorOf(caller: Caller): string {
  if (caller.kind === 'session') return `admin:${caller.session.username}`;
  if (caller.kind === 'key') return caller.key.id === 'cli' ? 'cli' : `key:${caller.key.id}`;
  return 'anonymous';
}
