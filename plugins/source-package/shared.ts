import type { Fetch, Source, SourceContext, SourceDocument } from '../../core/contracts.ts';
import { DEFAULT_NETWORK_POLICY, type NetworkPolicy } from '../../core/net/address-policy.ts';
import { registryEnv, type RegistryEnv } from './registry-http.ts';
import { DEFAULT_PACKAGE_OPTIONS, type PackageOptions } from './schema.ts';

/** Options with defaults filled in (ajv fills them from config; direct construction may not). */
export function resolveOptions(options: Partial<PackageOptions> | undefined): PackageOptions {
  const given = Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined));
  return { ...DEFAULT_PACKAGE_OPTIONS, ...given };
}

/**
 * True when the previous build was made from exactly this archive (same version and digest):
 * every previous document can be reused as it is.
 */
export function allUnchanged(ctx: SourceContext, meta: Record<string, string>): boolean {
  if (ctx.previous.size === 0) return false;
  for (const prev of ctx.previous.values()) {
    for (const [k, v] of Object.entries(meta)) if (prev.meta[k] !== v) return false;
  }
  return true;
}

/** What the npm and PyPI sources are given: the kernel's Fetch and the operator's network policy. */
export interface RegistryDeps {
  fetch: Fetch;
  policy?: NetworkPolicy;
}

/** The part the npm and PyPI sources share: options with defaults, and the registry client of a read. */
export abstract class RegistrySource implements Source {
  readonly options: PackageOptions;
  protected readonly fetch: Fetch;
  private readonly policy: NetworkPolicy;

  constructor(options: Partial<PackageOptions> | undefined, deps: RegistryDeps) {
    this.options = resolveOptions(options);
    this.fetch = deps.fetch;
    this.policy = deps.policy ?? DEFAULT_NETWORK_POLICY;
  }

  /** Downloads capped by both the plugin option and the network policy; retries as configured. */
  protected registry(ctx: SourceContext): RegistryEnv {
    const o = this.options;
    return registryEnv(this.fetch, Math.min(o.maxDownloadBytes, this.policy.maxResponseBytes), o.retryAttempts, o.retryBaseDelayMs, ctx);
  }

  abstract read(ctx: SourceContext): AsyncGenerator<SourceDocument>;
}
