/**
 * Plugin options are validated in one place, by the config loader and by the test kit's
 * `runPlugin`, so a plugin author sees in a test exactly what an operator would see at start-up.
 */
import type { AnyDefinition } from './define.ts';
import { validate } from './validate.ts';

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
