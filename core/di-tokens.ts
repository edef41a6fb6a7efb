import { token, type DependencyContainer } from './di.ts';
import type {
  ApiKeyStore,
  AuditStore,
  BuildStore,
  CatalogStore,
  Clock,
  Fetch,
  JobStore,
  Logger,
  RuntimeEnv,
  SessionStore,
  SettingsStore,
  Store,
  StoreRole,
} from './contracts.ts';
import type { NetworkPolicy } from './net/address-policy.ts';
import type { GitCredentials } from './git-credentials.ts';
import type { Providers } from './providers.ts';

/**
 * One token per Store role (core/contracts.ts): a plugin or a server part that needs only the
 * job queue depends on `StoreTokens.jobs`, not on the whole Store. The kernel registers the one
 * store under every role (registerStore).
 */
export const StoreTokens = {
  catalog: token<CatalogStore>('core.store.catalog'),
  builds: token<BuildStore>('core.store.builds'),
  jobs: token<JobStore>('core.store.jobs'),
  apiKeys: token<ApiKeyStore>('core.store.api-keys'),
  sessions: token<SessionStore>('core.store.sessions'),
  audit: token<AuditStore>('core.store.audit'),
  settings: token<SettingsStore>('core.store.settings'),
} as const satisfies Record<StoreRole, unknown>;

/** Well-known tokens of the services and slots the kernel provides to plugins. */
export const Tokens = {
  Fetch: token<Fetch>('core.fetch'),
  Logger: token<Logger>('core.logger'),
  Clock: token<Clock>('core.clock'),
  Env: token<RuntimeEnv>('core.env'),
  /** The whole store (every role); prefer the role's token of `StoreTokens`. */
  Store: token<Store>('core.store'),
  /** The operator's rules for fetching user-given URLs (config `network`). */
  NetworkPolicy: token<NetworkPolicy>('core.network-policy'),
  /** Git tokens from the operator's settings (setting `git`), per repository host. */
  GitCredentials: token<GitCredentials>('core.git-credentials'),
  /** The LLM and embedder of the operator's settings (core/providers.ts), read at each use. */
  Providers: token<Providers>('core.providers'),
} as const;

/** Registers the store under `Tokens.Store` and under each role's token of `StoreTokens`. */
export function registerStore(container: DependencyContainer, store: Store): void {
  container.registerInstance(Tokens.Store, store);
  for (const tok of Object.values(StoreTokens)) container.registerInstance(tok as symbol, store);
}
