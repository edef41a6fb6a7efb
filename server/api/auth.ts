/**
 * Who is calling: an API key (`Authorization: Bearer rdk_...`, or the `REFDESK_API_KEY` header
 * the MCP endpoint also accepts) or an anonymous client. A header that is present but not a
 * valid key is always a 401; it never falls back to anonymous.
 */
import type { ApiKeyRecord, Store } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { hashApiKey, isWellFormedApiKey } from '../access/api-keys.ts';

export type Principal =
  | { kind: 'anonymous'; /** The client's address: the anonymous rate-limit bucket. */ client: string }
  | { kind: 'key'; key: ApiKeyRecord; client: string };

export type HeaderBag = Record<string, string | string[] | undefined>;

const FORMAT_HELP = 'A Refdesk API key is "rdk_" followed by 43 characters, sent as "Authorization: Bearer rdk_...". Omit the header to use the API without a key (lower rate limits).';

function header(headers: HeaderBag, name: string): string | undefined {
  const direct = headers[name] ?? headers[name.toLowerCase()];
  const v = direct ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  return Array.isArray(v) ? v.join(',') : v;
}

/** The key text the request carries, '' when a header is present but empty, undefined when none. */
function presentedKey(headers: HeaderBag): string | undefined {
  const auth = header(headers, 'authorization');
  if (auth !== undefined) {
    const m = /^Bearer[ \t]+(\S*)[ \t]*$/i.exec(auth.trim());
    if (!m || m[1] === '') throw new RefdeskError('invalid_api_key', `The Authorization header is mis-formatted. ${FORMAT_HELP}`);
    return m[1];
  }
  const alt = header(headers, 'refdesk_api_key') ?? header(headers, 'refdesk-api-key');
  if (alt !== undefined) return alt.trim();
  return undefined;
}

/** The principal of a request, or a 401 `invalid_api_key` for a bad, unknown or revoked key. */
export async function authenticate(store: Store, headers: HeaderBag, client: string): Promise<Principal> {
  const key = presentedKey(headers);
  if (key === undefined) return { kind: 'anonymous', client };
  if (!isWellFormedApiKey(key)) throw new RefdeskError('invalid_api_key', `The API key is mis-formatted. ${FORMAT_HELP}`);
  const record = await store.findApiKeyByHash(hashApiKey(key));
  if (!record) throw new RefdeskError('invalid_api_key', 'Invalid API key: no such key on this server. Check the key, or ask the operator for one (refdesk keys create).');
  if (record.revokedAt) throw new RefdeskError('invalid_api_key', `This API key (${record.prefix}...) was revoked on ${record.revokedAt}. Ask the operator for a new one.`);
  return { kind: 'key', key: record, client };
}

/** A 401 unless the caller sent a key. */
export function requireKey(principal: Principal, what: string): Extract<Principal, { kind: 'key' }> {
  if (principal.kind !== 'key') {
    throw new RefdeskError('invalid_api_key', `${what} needs an API key: send "Authorization: Bearer rdk_..." (the operator creates keys with refdesk keys create).`);
  }
  return principal;
}

/** A 403 unless the caller's key is an admin key. */
export function requireAdmin(principal: Principal, what: string): void {
  const p = requireKey(principal, what);
  if (p.key.role !== 'admin') {
    throw new RefdeskError('forbidden', `${what} needs an admin key; this key (${p.key.prefix}...) is a member key. The operator creates admin keys with refdesk keys create --role admin.`);
  }
}
