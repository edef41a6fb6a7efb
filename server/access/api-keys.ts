/**
 * API keys: `rdk_` followed by 43 URL-safe base64 characters (32 random bytes). Only the
 * SHA-256 of a key is stored (the key has 256 bits of entropy, so a fast hash is enough); the
 * key itself is shown once, when it is created.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ApiKeyRecord, ApiKeyRole, ApiKeyStore } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { API_KEY_ROLES } from '../../core/store-admin-rules.ts';

export const API_KEY_PREFIX = 'rdk_';
const KEY_RE = /^rdk_[A-Za-z0-9_-]{43}$/;
/** How many characters of a key listings show. */
const SHOWN_PREFIX_LENGTH = 8;

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** True when the text has the shape of a Refdesk API key (says nothing about its validity). */
export function isWellFormedApiKey(key: string): boolean {
  return KEY_RE.test(key);
}

export interface CreateApiKeyInput {
  name?: string;
  plan?: string;
  role?: ApiKeyRole;
}

export interface CreatedApiKey {
  /** The key itself: shown once, never stored. */
  key: string;
  record: ApiKeyRecord;
}

/**
 * Creates a key on `plan` (default `defaultPlan`), which must be one of `plans`. Bad input is
 * an `invalid_request` that says what to fix.
 */
export async function createApiKey(store: ApiKeyStore, input: CreateApiKeyInput, plans: { names: string[]; defaultPlan: string }): Promise<CreatedApiKey> {
  const name = input.name ?? '';
  if (typeof name !== 'string' || name.length > 100 || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new RefdeskError('invalid_request', 'A key name is at most 100 printable characters.');
  }
  const plan = input.plan ?? plans.defaultPlan;
  if (typeof plan !== 'string' || !plans.names.includes(plan)) {
    throw new RefdeskError('invalid_request', `Unknown plan "${String(plan).slice(0, 40)}"; the configured plans are: ${plans.names.join(', ')} (config rateLimits.plans).`);
  }
  const role = input.role ?? 'member';
  if (!API_KEY_ROLES.includes(role)) throw new RefdeskError('invalid_request', `A key role is one of: ${API_KEY_ROLES.join(', ')}.`);
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  const record = await store.createApiKey({
    id: 'key_' + randomBytes(6).toString('hex'),
    name,
    plan,
    role,
    prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
    hash: hashApiKey(key),
  });
  return { key, record };
}
