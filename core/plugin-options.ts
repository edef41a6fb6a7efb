/**
 * Plugin options are validated in one place, by the config loader and by the test kit's
 * `runPlugin`, so a plugin author sees in a test exactly what an operator would see at start-up.
 */
import semver from 'semver';
import type { AnyDefinition, Plugin } from './define.ts';
import { validate } from './validate.ts';
import { KERNEL_VERSION } from './version.ts';

/**
 * Whether a plugin may run on this kernel: it declares a valid semver range (`kernel`) that this
 * kernel's version satisfies. Null when it may, else the message (the config loader and
 * `runPlugin` give the same one).
 */
export function pluginKernelError(plugin: Pick<Plugin, 'name' | 'kernel'>): string | null {
  if (typeof plugin.kernel !== 'string' || !semver.validRange(plugin.kernel)) return `plugin ${plugin.name} declares no valid kernel range`;
  if (!semver.satisfies(KERNEL_VERSION, plugin.kernel)) return `plugin ${plugin.name} requires kernel ${plugin.kernel}, but this Refdesk kernel is ${KERNEL_VERSION}`;
  return null;
}

/**
 * Validates a definition's options in place (ajv defaults filled in, as the kernel hands them to
 * `create`). Returns null when they are valid, else the message, e.g.
 * `plugin @acme/source-wiki: plugins[3].options.wiki.maxPages: must be >= 1` (`at` is the
 * definition's place in the config, `plugins[3]`, or '' outside a config). Never quotes a value.
 */
export function pluginOptionsError(pluginName: string, def: Pick<AnyDefinition, 'kind' | 'options'>, options: Record<string, unknown>, at = ''): string | null {
  const problems = validate(def.options, options, `${at ? `${at}.` : ''}options.${def.kind}`);
  return problems.length === 0 ? null : `plugin ${pluginName}: ${problems.join('; ')}`;
}
