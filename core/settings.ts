/**
 * Persisted server settings, kept in the Store (`getSetting`/`setSetting`; the access policy's
 * setting is read and written by server/access/policy.ts): `mcp.requireKey`, the anonymous permissions, the upload limits, and the model providers and git tokens (secrets
 * sealed; shapes and rules in core/provider-settings.ts). Plain functions over the Store's settings role (SettingsStore), so the server, the CLI and the MCP endpoint
 * read the same values.
 */
import type { SettingsStore } from './contracts.ts';
import { RefdeskError } from './errors.ts';
import type { SecretBox } from './secrets.ts';
import type { GitCredentials } from './git-credentials.ts';
import {
  gitHostEntry,
  gitTokenFor,
  gitView,
  mergeSettings,
  openProviderSettings,
  providerView,
  resolveProviders,
  resolvedView,
  validateSettingsPatch,
  type ResolvedProviders,
  type StoredGit,
  type StoredProviderSettings,
} from './provider-settings.ts';

/** Whether the MCP endpoint refuses requests without an API key (default false). */
export const MCP_REQUIRE_KEY = 'mcp.requireKey';

export async function getMcpRequireKey(store: SettingsStore): Promise<boolean> {
  return (await store.getSetting(MCP_REQUIRE_KEY)) === true;
}

export async function setMcpRequireKey(store: SettingsStore, value: boolean): Promise<void> {
  if (typeof value !== 'boolean') throw new RefdeskError('invalid_request', `${MCP_REQUIRE_KEY} is true or false.`);
  await store.setSetting(MCP_REQUIRE_KEY, value);
}

/** What the operator may open to anonymous callers (each Off by default). */
export const ANONYMOUS_PERMISSIONS = ['parse', 'refresh', 'delete', 'supportBundle'] as const;
export type AnonymousPermission = (typeof ANONYMOUS_PERMISSIONS)[number];
export const ANONYMOUS_SETTING = 'anonymous';

/** The anonymous permissions as stored (setting `anonymous`), every one false unless set true. */
export async function getAnonymousPermissions(store: SettingsStore): Promise<Record<AnonymousPermission, boolean>> {
  const raw = await store.getSetting(ANONYMOUS_SETTING);
  const obj = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  return Object.fromEntries(ANONYMOUS_PERMISSIONS.map((p) => [p, obj[p] === true])) as Record<AnonymousPermission, boolean>;
}

/** Setting `uploads`: limits of POST /api/libraries/upload that win over the config's `uploads.*`. */
export const UPLOADS_SETTING = 'uploads';

export interface UploadLimits {
  maxBytes: number;
  maxFiles: number;
}

/** The upload limits the settings hold (null: not set, the config's value applies). */
export async function getStoredUploadLimits(store: SettingsStore): Promise<{ maxBytes: number | null; maxFiles: number | null }> {
  const raw = await store.getSetting(UPLOADS_SETTING);
  const obj = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const limit = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : null);
  return { maxBytes: limit(obj.maxBytes), maxFiles: limit(obj.maxFiles) };
}

/** The upload limits in force: each one from the settings when set there, else from `defaults` (the config). */
export async function getUploadLimits(store: SettingsStore, defaults: UploadLimits): Promise<UploadLimits> {
  const stored = await getStoredUploadLimits(store);
  return { maxBytes: stored.maxBytes ?? defaults.maxBytes, maxFiles: stored.maxFiles ?? defaults.maxFiles };
}

// ---------------------------------------------------------------------------------------------
// Providers, git tokens and permissions (GET/PATCH /api/settings). Each section is its own
// setting (`llm`, `embedding`, `git`, `anonymous`, `mcp.requireKey`); secrets inside are sealed.
// ---------------------------------------------------------------------------------------------

export const LLM_SETTING = 'llm';
export const EMBEDDING_SETTING = 'embedding';
export const GIT_SETTING = 'git';

function objectSetting<T>(raw: unknown): T {
  return (raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as T;
}

/** The provider and git sections as stored (keys sealed). */
export async function getStoredProviderSettings(store: SettingsStore): Promise<StoredProviderSettings> {
  return {
    llm: objectSetting<StoredProviderSettings['llm']>(await store.getSetting(LLM_SETTING)),
    embedding: objectSetting<StoredProviderSettings['embedding']>(await store.getSetting(EMBEDDING_SETTING)),
    git: objectSetting<StoredGit>(await store.getSetting(GIT_SETTING)),
  };
}

/** Every setting an admin sees: secrets as {set, last4}, never their values. */
export async function getSettingsView(store: SettingsStore, box: SecretBox): Promise<Record<string, unknown>> {
  const stored = await getStoredProviderSettings(store);
  let effective: Record<string, unknown>;
  try {
    effective = resolvedView(resolveProviders(openProviderSettings(stored, box)));
  } catch {
    effective = { llm: null, embedding: null, embeddingNote: 'a stored key cannot be opened with this server\'s sealing key (ENCRYPTION_KEY changed?): enter the keys again' };
  }
  return {
    llm: providerView(stored.llm, box),
    embedding: providerView(stored.embedding, box),
    git: gitView(stored.git, box),
    anonymous: await getAnonymousPermissions(store),
    mcp: { requireKey: await getMcpRequireKey(store) },
    uploads: await getStoredUploadLimits(store),
    effective,
  };
}

export interface SettingsChange {
  /** Fields set or cleared by the change (names only: for the audit log). */
  changed: string[];
  /** Keys removed because their provider or base URL changed without the key. */
  cleared: string[];
}

/**
 * Applies a change (validated: 400 naming the field; unknown fields refused). Secrets are sealed
 * before they reach the Store. Readers see the change at once (they read the Store per use).
 */
export async function patchSettings(store: SettingsStore, box: SecretBox, body: unknown): Promise<SettingsChange> {
  const patch = validateSettingsPatch(body);
  const stored = await getStoredProviderSettings(store);
  const merged = mergeSettings(stored, patch, box);
  const changed = [...merged.changed];
  if (patch.llm !== undefined) await store.setSetting(LLM_SETTING, merged.stored.llm);
  if (patch.embedding !== undefined) await store.setSetting(EMBEDDING_SETTING, merged.stored.embedding);
  if (patch.git !== undefined) await store.setSetting(GIT_SETTING, merged.stored.git);
  if (patch.anonymous) {
    const now = await getAnonymousPermissions(store);
    for (const [k, v] of Object.entries(patch.anonymous)) if (now[k as AnonymousPermission] !== v) changed.push(`anonymous.${k}`);
    await store.setSetting(ANONYMOUS_SETTING, { ...now, ...patch.anonymous });
  }
  if (patch.mcp?.requireKey !== undefined) {
    if ((await getMcpRequireKey(store)) !== patch.mcp.requireKey) changed.push('mcp.requireKey');
    await setMcpRequireKey(store, patch.mcp.requireKey);
  }
  if (patch.uploads !== undefined) {
    const now = await getStoredUploadLimits(store);
    const next = { ...now };
    for (const k of ['maxBytes', 'maxFiles'] as const) {
      const v = patch.uploads === null ? null : patch.uploads[k];
      if (v === undefined) continue;
      if (now[k] !== v) changed.push(`uploads.${k}`);
      next[k] = v;
    }
    await store.setSetting(UPLOADS_SETTING, next);
  }
  const change = { changed, cleared: merged.cleared };
  if (patch.llm !== undefined || patch.embedding !== undefined) {
    for (const fn of providerListeners.get(store) ?? []) await Promise.resolve(fn(change)).catch(() => {});
  }
  return change;
}

const providerListeners = new WeakMap<SettingsStore, Set<(change: SettingsChange) => unknown>>();

/**
 * Calls `fn` after each patchSettings on this store that changed the provider settings (the
 * server makes its clients again and queues embedding jobs); awaited, its failure ignored.
 * Returns the function that removes it.
 */
export function onProviderSettingsPatched(store: SettingsStore, fn: (change: SettingsChange) => unknown): () => void {
  let set = providerListeners.get(store);
  if (!set) providerListeners.set(store, (set = new Set()));
  set.add(fn);
  return () => void set.delete(fn);
}

/**
 * patchSettings for a running kernel: the change is stored, then the kernel's model providers
 * read the settings again (the next query uses the new LLM or embedder, no restart). The settings
 * route and the web UI's settings page both call this.
 */
export async function applySettingsPatch(kernel: { store: SettingsStore; secrets: SecretBox; providers: { invalidate(): void } }, body: unknown): Promise<SettingsChange> {
  try {
    return await patchSettings(kernel.store, kernel.secrets, body);
  } finally {
    kernel.providers.invalidate(); // also after a refused change: a partial write is re-read
  }
}

/** The effective LLM and embedding endpoints from the stored settings (keys opened in memory). */
export async function getResolvedProviders(store: SettingsStore, box: SecretBox): Promise<ResolvedProviders> {
  return resolveProviders(openProviderSettings(await getStoredProviderSettings(store), box));
}

/** Git tokens from the settings, read at each use (a change applies to the next clone). */
export function settingsGitCredentials(store: SettingsStore, box: SecretBox): GitCredentials {
  return {
    async tokenFor(url) {
      return gitTokenFor(objectSetting<StoredGit>(await store.getSetting(GIT_SETTING)), box, url);
    },
    async providerFor(url) {
      return gitHostEntry(objectSetting<StoredGit>(await store.getSetting(GIT_SETTING)), url)?.provider;
    },
  };
}
