import type { SourceContext } from '../../core/contracts.ts';
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
