/**
 * Config files that compose (issue 23 item 5): `extends: default` (the distribution's
 * config/default.yaml) or `extends: <path>` (relative to the file), then this file's changes:
 *
 * - `plugins` entries merge by plugin name with the extended config's: an entry of a name already
 *   there re-configures it (its `use` and `enabled` replace the old ones; its `options` merge into
 *   the old ones kind by kind, key by key); a new name is added at the end;
 * - `remove: [name, ...]` leaves plugins of the extended config out (`enabled: false` on an entry
 *   turns one off too);
 * - every other section merges key by key (this file wins; lists are replaced, not appended).
 *
 * A plugin's name is its `name:` when given, else the built-in folder it names
 * (`../plugins/source-git/index.ts` and `source-git` are both `source-git`), else the package name,
 * else the path it resolves to. Every error names the file and the path inside it; a chain that
 * comes back to a file it passed through is refused, naming the chain.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './errors.ts';
import { validate } from './validate.ts';

type Json = Record<string, unknown>;

/** One plugin entry as it stands after merging, with where it was last configured. */
export interface ComposedEntry {
  name: string;
  use?: string;
  enabled?: boolean;
  options?: Record<string, Record<string, unknown>>;
  /** The file that configured it last, and its path there (`plugins[2]`). */
  file: string;
  at: string;
  /** The folder its `use` is relative to (the file that gave the `use`). */
  useDir: string;
}

export interface ComposedConfig {
  /** Every section but `plugins` (merged), as one config object. */
  data: Json;
  plugins: ComposedEntry[];
  /** The files read, the named file first. */
  chain: string[];
}

const PLUGIN_PATH = /(?:^|[\\/])plugins[\\/]([a-z][a-z0-9-]*)(?:[\\/][^\\/]+)*[\\/]?$/;

/** The name an entry merges by (see the module comment). */
export function pluginEntryName(entry: { name?: string; use?: string }, dir: string): string {
  if (entry.name) return entry.name;
  const use = entry.use ?? '';
  const isPath = use.startsWith('./') || use.startsWith('../') || isAbsolute(use);
  const m = PLUGIN_PATH.exec(use.replace(/[\\/]index\.(ts|js)$/, ''));
  if (isPath && m) return m[1];
  return isPath ? resolve(dir, use) : use;
}

function readYamlFile(file: string, hint: string): Json {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'it does not exist' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : (code ?? 'unreadable');
    throw new ConfigError(
      hint ? `${hint}cannot read the configuration file ${file} (${why})` : `${file}: cannot read the configuration file (${why}): set REFDESK_CONFIG to a readable YAML file, or unset it for the default.`,
    );
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (e) {
    const line = (e as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    // The parser's first line says what is wrong; the lines after it quote the file (maybe a secret).
    const why = ((e as Error).message ?? '').split('\n')[0].replace(/ at line \d+, column \d+:?$/, '').trim();
    throw new ConfigError(`${file}: not valid YAML${line ? ` (line ${line}${why ? `: ${why}` : ''})` : why ? ` (${why})` : ''}; fix the file or set REFDESK_CONFIG to another one.`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new ConfigError(`${file}: the top level must be a mapping`);
  return data as Json;
}

/** `${NAME}` in string values is replaced by the environment variable (for secrets). */
function interpolateEnv(v: unknown): unknown {
  if (typeof v === 'string') return v.replace(/\$\{([A-Z_][A-Z0-9_]*)\}/g, (_, n: string) => process.env[n] ?? '');
  if (Array.isArray(v)) return v.map(interpolateEnv);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, interpolateEnv(x)]));
  return v;
}

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** `over` merged into `base`: objects key by key, anything else (lists too) replaced. */
export function mergeSections(base: unknown, over: unknown): unknown {
  if (over === undefined) return structuredClone(base);
  if (!isObject(base) || !isObject(over)) return structuredClone(over);
  const out: Json = structuredClone(base);
  for (const [k, v] of Object.entries(over)) out[k] = mergeSections(base[k], v);
  return out;
}

/**
 * Reads `file` and the configs it extends, checks each file's own structure against `schema`
 * (naming the file), and merges them. `defaultFile` is what `extends: default` means.
 */
export function composeConfig(file: string, schema: Json, defaultFile: string, seen: string[] = []): ComposedConfig {
  const abs = resolve(file);
  if (seen.includes(abs)) throw new ConfigError(`${seen[seen.length - 1]}: extends: a cycle: ${[...seen, abs].join(' -> ')}`);
  const raw = readYamlFile(file, seen.length ? `${seen[seen.length - 1]}: extends: ` : '');
  // Checked on a copy: the schema's defaults are applied to the merged config only, or a file's
  // absent sections would hide those of the config it extends.
  const problems = validate(schema, structuredClone(raw), '');
  if (problems.length > 0) throw new ConfigError(`${file}: ${problems.map((p) => p.replace(/^\./, '')).join('; ')}`);
  const data = interpolateEnv(raw) as Json;
  const dir = dirname(abs);
  const own = ((data.plugins ?? []) as Array<Omit<ComposedEntry, 'file' | 'at' | 'useDir' | 'name'> & { name?: string }>).map((e, i) => ({
    ...e,
    name: pluginEntryName(e, dir),
    file,
    at: `plugins[${i}]`,
    useDir: dir,
  }));
  const { extends: parentRef, remove, plugins: _plugins, ...sections } = data;
  if (parentRef === undefined) {
    for (const e of own) if (!e.use) throw new ConfigError(`${file}: ${e.at}: "use" is required (the plugin's path, built-in name or package name); "name" alone re-configures a plugin of a config this file extends, and it extends none`);
    if (remove !== undefined) throw new ConfigError(`${file}: remove: this file extends no config to remove plugins from (add "extends: default" or a path)`);
    return { data: sections, plugins: own, chain: [file] };
  }
  const parentFile = parentRef === 'default' ? defaultFile : resolve(dir, String(parentRef));
  const parent = composeConfig(parentFile, schema, defaultFile, [...seen, abs]);
  const plugins = parent.plugins.map((e) => ({ ...e }));
  for (const [i, name] of ((remove ?? []) as string[]).entries()) {
    const at = plugins.findIndex((e) => e.name === name);
    if (at < 0) throw new ConfigError(`${file}: remove[${i}]: no plugin named "${name}" in ${parentFile} (its plugins: ${plugins.map((e) => e.name).join(', ')})`);
    plugins.splice(at, 1);
  }
  for (const e of own) {
    const at = plugins.findIndex((p) => p.name === e.name);
    if (at < 0) {
      if (!e.use) throw new ConfigError(`${file}: ${e.at}: no plugin named "${e.name}" in ${parentFile} to re-configure (its plugins: ${plugins.map((p) => p.name).join(', ')}); give "use" to add one`);
      plugins.push(e);
      continue;
    }
    const before = plugins[at];
    plugins[at] = {
      ...before,
      ...(e.use ? { use: e.use, useDir: e.useDir } : {}),
      ...(e.enabled !== undefined ? { enabled: e.enabled } : {}),
      ...(e.options ? { options: mergeSections(before.options ?? {}, e.options) as ComposedEntry['options'] } : {}),
      file,
      at: e.at,
    };
  }
  return { data: mergeSections(parent.data, sections) as Json, plugins, chain: [file, ...parent.chain] };
}
