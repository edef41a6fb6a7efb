/**
 * Persisted server settings, kept in the Store (`getSetting`/`setSetting`): the access policy and
 * `mcp.requireKey`. Plain functions over a Store, so the server, the CLI and the MCP endpoint
 * read the same values.
 */
import type { Store } from './contracts.ts';
import { RefdeskError } from './errors.ts';
import { POLICY_SETTING, normalizePolicy, type Policy } from './policy.ts';

/** Whether the MCP endpoint refuses requests without an API key (default false). */
export const MCP_REQUIRE_KEY = 'mcp.requireKey';

export async function getMcpRequireKey(store: Store): Promise<boolean> {
  return (await store.getSetting(MCP_REQUIRE_KEY)) === true;
}

export async function setMcpRequireKey(store: Store, value: boolean): Promise<void> {
  if (typeof value !== 'boolean') throw new RefdeskError('invalid_request', `${MCP_REQUIRE_KEY} is true or false.`);
  await store.setSetting(MCP_REQUIRE_KEY, value);
}

export async function getPolicy(store: Store): Promise<Policy> {
  return normalizePolicy(await store.getSetting(POLICY_SETTING));
}

export async function setPolicy(store: Store, policy: Policy): Promise<void> {
  await store.setSetting(POLICY_SETTING, policy);
}

/** What the operator may open to anonymous callers (each Off by default). */
export const ANONYMOUS_PERMISSIONS = ['parse', 'refresh', 'delete', 'supportBundle'] as const;
export type AnonymousPermission = (typeof ANONYMOUS_PERMISSIONS)[number];
export const ANONYMOUS_SETTING = 'anonymous';

/** The anonymous permissions as stored (setting `anonymous`), every one false unless set true. */
export async function getAnonymousPermissions(store: Store): Promise<Record<AnonymousPermission, boolean>> {
  const raw = await store.getSetting(ANONYMOUS_SETTING);
  const obj = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  return Object.fromEntries(ANONYMOUS_PERMISSIONS.map((p) => [p, obj[p] === true])) as Record<AnonymousPermission, boolean>;
}
