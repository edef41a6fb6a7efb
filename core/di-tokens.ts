import { token } from './di.ts';
import type { Clock, Fetch, Logger, RuntimeEnv, Store } from './contracts.ts';
import type { NetworkPolicy } from './net/address-policy.ts';
import type { GitCredentials } from './git-credentials.ts';
import type { Providers } from './providers.ts';

/** Well-known tokens of the services and slots the kernel provides to plugins. */
export const Tokens = {
  Fetch: token<Fetch>('core.fetch'),
  Logger: token<Logger>('core.logger'),
  Clock: token<Clock>('core.clock'),
  Env: token<RuntimeEnv>('core.env'),
  Store: token<Store>('core.store'),
  /** The operator's rules for fetching user-given URLs (config `network`). */
  NetworkPolicy: token<NetworkPolicy>('core.network-policy'),
  /** Git tokens from the operator's settings (setting `git`), per repository host. */
  GitCredentials: token<GitCredentials>('core.git-credentials'),
  /** The LLM and embedder of the operator's settings (core/providers.ts), read at each use. */
  Providers: token<Providers>('core.providers'),
} as const;
