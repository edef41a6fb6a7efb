/**
 * Configuration: read the YAML file, validate it, import the plugins it lists, check each
 * plugin's shape, kernel range, kinds and options. Every failure is a ConfigError that names the
 * config file and the path inside it (and the plugin), never a value.
 */
import { readFileSync, statSync, existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './errors.ts';
import type { AnyDefinition, Plugin, Role } from './define.ts';
import { validate } from './validate.ts';
import { pluginKernelError, pluginOptionsError } from './plugin-options.ts';
import { composeConfig, type ComposedEntry } from './config-compose.ts';
import type { NetworkPolicy } from './net/address-policy.ts';
import { importPluginModule } from './plugin-import.ts';

const ROLES: readonly Role[] = ['source', 'chunker', 'llm', 'embedder', 'reranker', 'store'];

export interface PluginEntry {
  use: string;
  enabled?: boolean;
  options?: Record<string, Record<string, unknown>>;
}

/** Config `rateLimits` (enforced by server/access/rate-limit.ts). */
export interface RateLimitRule {
  /** Requests allowed per window. */
  requests: number;
}

export interface RateLimitConfig {
  windowSeconds: number;
  anonymous: RateLimitRule;
  defaultPlan: string;
  plans: Record<string, RateLimitRule>;
}

export interface RefdeskConfig {
  plugins: PluginEntry[];
  slots: { store: string; chunkers?: string[]; embedder: string | null; reranker: string | null };
  query: { defaultTokens: number; minTokens: number; maxTokens: number; workers?: number };
  network: NetworkPolicy;
  rateLimits: RateLimitConfig;
  api: { requestTimeoutMs: number; maxOpenApiUploadBytes: number; cacheMaxAgeSeconds: number };
  /** The HTTP server: hosts allowed besides the loopback names (Origin checks of /mcp). */
  server: {
    allowedHosts: string[];
    /** Proxies whose X-Forwarded-* headers are believed (addresses or CIDRs; TRUSTED_PROXIES adds more). */
    trustedProxies: string[];
    /** /api/ready answers 503 when DATA_DIR's file system has less free space than this (bytes). */
    minFreeDiskBytes: number;
  };
  /** Ingest jobs: how long their log files are kept. */
  jobs: { logRetentionDays: number };
  /** POST /api/parse: hosts whose repositories may be given as http:// URLs. */
  parse: { allowHttpHosts: string[] };
  /** POST /api/libraries/upload limits. */
  uploads: { maxBytes: number; maxFiles: number };
}

/** A definition picked from a loaded plugin, with its validated options. */
export interface LoadedDefinition {
  def: AnyDefinition;
  options: Record<string, unknown>;
  plugin: string;
  /** The plugin's version (part of the fingerprint of what a library was built with, core/fingerprint.ts). */
  pluginVersion: string;
  /** Where it was configured, e.g. `plugins[2]`. */
  at: string;
}

export interface LoadedConfig {
  file: string;
  config: RefdeskConfig;
  /** role -> kind -> definition */
  definitions: Map<Role, Map<string, LoadedDefinition>>;
}

const schemaPath = new URL('../config/schema.json', import.meta.url);
let configSchema: Record<string, unknown> | undefined;

export function defaultConfigPath(): string {
  return new URL('../config/default.yaml', import.meta.url).pathname;
}

/** The schema of config files (config/schema.json). */
function configSchemaJson(): Record<string, unknown> {
  return (configSchema ??= JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>);
}

/**
 * Reads the config file and the configs it extends (core/config-compose.ts), validates each
 * file's structure and the merged result (defaults applied), not the plugins yet. `origins[i]`
 * says where `config.plugins[i]` was configured last and what its `use` is relative to.
 */
export function readComposedConfig(file: string): { config: RefdeskConfig; origins: ComposedEntry[]; chain: string[] } {
  const composed = composeConfig(file, configSchemaJson(), defaultConfigPath());
  const plugins = composed.plugins.map(({ use, enabled, options }) => ({ use: use!, ...(enabled !== undefined ? { enabled } : {}), ...(options ? { options } : {}) }));
  const merged: Record<string, unknown> = { ...composed.data, plugins };
  const problems = validate(configSchemaJson(), merged, '');
  if (problems.length > 0) throw new ConfigError(`${file}${composed.chain.length > 1 ? ` (with ${composed.chain.slice(1).join(', ')})` : ''}: ${problems.map((p) => p.replace(/^\./, '')).join('; ')}`);
  return { config: merged as unknown as RefdeskConfig, origins: composed.plugins, chain: composed.chain };
}

/** Reads and validates the config file's own structure, with the configs it extends (not the plugins yet). */
export function readConfig(file: string): RefdeskConfig {
  return readComposedConfig(file).config;
}

/** The package's own plugins folder: built-in plugins are found here wherever the config file lives. */
const BUILTIN_PLUGINS_DIR = fileURLToPath(new URL('../plugins/', import.meta.url));

/** A file to import for a path: a folder means its index.ts (or index.js). */
function moduleFile(p: string): string {
  if (existsSync(p) && statSync(p).isDirectory()) {
    const ts = join(p, 'index.ts');
    return existsSync(ts) ? ts : join(p, 'index.js');
  }
  return p;
}

/** `plugins/<name>/<rest>` at the end of a path (`../plugins/source-git/index.ts`, `./plugins/source-git`). */
const PLUGIN_PATH = /(?:^|[\\/])plugins[\\/]([a-z][a-z0-9-]*)((?:[\\/][^\\/]+)*)[\\/]?$/;
const BARE_NAME = /^[a-z][a-z0-9-]*$/;

/** The built-in plugin folder of a name, when the package has it. */
export function builtinPlugin(name: string): string | null {
  const dir = join(BUILTIN_PLUGINS_DIR, name);
  return existsSync(join(dir, 'index.ts')) || existsSync(join(dir, 'index.js')) ? dir : null;
}

export type ResolvedSpecifier = { ok: true; specifier: string } | { ok: false; why: string };

/**
 * What `import()` gets for a plugin's `use`:
 * - a path (`./`, `../`, absolute) relative to the config file; when nothing is there and the path
 *   ends in `plugins/<name>[/...]` naming a built-in plugin, that built-in (so a config copied out
 *   of `config/` keeps working);
 * - a bare name of a built-in plugin (`source-git`): the package's own `plugins/source-git`;
 * - anything else: an npm package name, resolved by Node.
 */
export function resolvePluginSpecifier(use: string, configDir: string): ResolvedSpecifier {
  if (use.startsWith('./') || use.startsWith('../') || isAbsolute(use)) {
    const p = isAbsolute(use) ? use : resolve(configDir, use);
    if (existsSync(p)) return { ok: true, specifier: pathToFileURL(moduleFile(p)).href };
    const m = PLUGIN_PATH.exec(use);
    const builtin = m ? builtinPlugin(m[1]) : null;
    if (m && builtin) {
      const inside = m[2] ? join(builtin, m[2]) : builtin;
      if (existsSync(inside)) return { ok: true, specifier: pathToFileURL(moduleFile(inside)).href };
      // A config of the sources (`index.ts`) read by the compiled code, whose plugins are `.js`.
      const compiled = inside.replace(/\.ts$/, '.js');
      if (compiled !== inside && existsSync(compiled)) return { ok: true, specifier: pathToFileURL(compiled).href };
    }
    return {
      ok: false,
      why: `module not found: nothing at ${p} (paths are relative to the config file's folder ${configDir})${m ? ` and no built-in plugin "${m[1]}"` : ''}; name a built-in plugin by its name (e.g. "source-git"), or give an existing path or an npm package name`,
    };
  }
  if (BARE_NAME.test(use)) {
    const builtin = builtinPlugin(use);
    if (builtin) return { ok: true, specifier: pathToFileURL(moduleFile(builtin)).href };
  }
  return { ok: true, specifier: use }; // a package name, resolved by Node
}

function isPlugin(x: unknown): x is Plugin {
  return !!x && typeof x === 'object' && (x as Plugin).__refdeskPlugin === true && Array.isArray((x as Plugin).definitions);
}

/**
 * Whether `slots.store` is set by a config file other than the distribution's default (which
 * names `embedded`): when DATABASE_URL is set, the store is `postgres` unless a config says otherwise.
 */
function storeNamedExplicitly(chain: string[]): boolean {
  const defaultFile = resolve(defaultConfigPath());
  return chain.some((f) => {
    if (resolve(f) === defaultFile) return false;
    const data = parseYaml(readFileSync(f, 'utf8')) as { slots?: { store?: unknown } } | null;
    return data?.slots?.store !== undefined;
  });
}

/**
 * Loads the config file and every plugin it lists. With DATABASE_URL set in `env`, the store is
 * the PostgreSQL one (plugins/store-postgres) unless a config file names a store itself.
 */
export async function loadConfig(file: string, env: { DATABASE_URL?: string } = process.env): Promise<LoadedConfig> {
  const { config, origins, chain } = readComposedConfig(file);
  const storeFromEnv = !!env.DATABASE_URL?.trim() && !storeNamedExplicitly(chain);
  if (storeFromEnv) config.slots.store = 'postgres';
  const definitions = new Map<Role, Map<string, LoadedDefinition>>(ROLES.map((r) => [r, new Map()]));

  for (const [i, entry] of config.plugins.entries()) {
    if (entry.enabled === false) continue;
    // Where the entry was configured last: the file and its path there (a config may extend others).
    const { file: from, at, useDir } = origins[i];
    const where = `${from}: ${at} (${entry.use})`;
    const resolved = resolvePluginSpecifier(entry.use, useDir);
    if (!resolved.ok) throw new ConfigError(`${where}: ${resolved.why}`);
    let mod: { default?: unknown };
    try {
      mod = (await importPluginModule(resolved.specifier)) as { default?: unknown };
    } catch (e) {
      const code = (e as { code?: string }).code;
      const notFound = code === 'ERR_MODULE_NOT_FOUND' || code === 'ERR_UNSUPPORTED_DIR_IMPORT';
      const why = notFound
        ? resolved.specifier === entry.use
          ? `module not found: no built-in plugin and no installed npm package is named "${entry.use}" (install the package, or give a path relative to the config file)`
          : `module not found (${(e as Error).message.split('\n')[0]})`
        : `failed to load: ${(e as Error).message.split('\n')[0]}`;
      throw new ConfigError(`${where}: ${why}`);
    }
    const plugin = mod.default;
    if (!isPlugin(plugin)) throw new ConfigError(`${where}: the module's default export is not a Refdesk plugin (use definePlugin)`);
    const kernelProblem = pluginKernelError(plugin);
    if (kernelProblem) throw new ConfigError(`${where}: ${kernelProblem}`);
    const optionsByKind = entry.options ?? {};
    const kinds = new Set(plugin.definitions.map((d) => d.kind));
    for (const key of Object.keys(optionsByKind)) {
      if (!kinds.has(key)) {
        throw new ConfigError(`${where}: ${at}.options.${key}: plugin ${plugin.name} has no definition of kind "${key}" (it provides: ${[...kinds].join(', ')})`);
      }
    }
    for (const def of plugin.definitions) {
      if (!ROLES.includes(def.role)) throw new ConfigError(`${where}: plugin ${plugin.name} has a definition with unknown role "${String(def.role)}"`);
      if (typeof def.kind !== 'string' || !/^[a-z][a-z0-9-]*$/.test(def.kind)) {
        throw new ConfigError(`${where}: plugin ${plugin.name} has a ${def.role} definition with an invalid kind (lower-case letters, digits and '-')`);
      }
      const byKind = definitions.get(def.role)!;
      const prev = byKind.get(def.kind);
      if (prev) {
        throw new ConfigError(`${where}: duplicate ${def.role} kind "${def.kind}": already provided by ${prev.at} (${prev.plugin})`);
      }
      const options = structuredClone(optionsByKind[def.kind] ?? {});
      const problem = pluginOptionsError(plugin.name, def, options, at);
      if (problem) throw new ConfigError(`${from}: ${problem}`);
      byKind.set(def.kind, { def, options, plugin: plugin.name, pluginVersion: String(plugin.version), at });
    }
  }

  // Slots must name enabled kinds.
  const slotCheck = (role: Role, kind: string, path: string) => {
    const byKind = definitions.get(role)!;
    if (!byKind.has(kind)) {
      const avail = [...byKind.keys()];
      throw new ConfigError(`${file}: ${path}: no enabled plugin provides a ${role} of kind "${kind}" (enabled: ${avail.length ? avail.join(', ') : 'none'})`);
    }
  };
  if (storeFromEnv && !definitions.get('store')!.has('postgres')) {
    throw new ConfigError(`${file}: DATABASE_URL is set, so the store is "postgres", but no enabled plugin provides it: list store-postgres in plugins, or set slots.store to the store to use (e.g. embedded) to ignore DATABASE_URL`);
  }
  slotCheck('store', config.slots.store, 'slots.store');
  for (const [i, k] of (config.slots.chunkers ?? []).entries()) slotCheck('chunker', k, `slots.chunkers[${i}]`);
  if (config.slots.embedder) slotCheck('embedder', config.slots.embedder, 'slots.embedder');
  if (config.slots.reranker) slotCheck('reranker', config.slots.reranker, 'slots.reranker');
  if (definitions.get('chunker')!.size === 0) throw new ConfigError(`${file}: plugins: no chunker plugin is enabled`);
  if (!Object.hasOwn(config.rateLimits.plans, config.rateLimits.defaultPlan)) {
    throw new ConfigError(`${file}: rateLimits.defaultPlan: no plan "${config.rateLimits.defaultPlan}" in rateLimits.plans (plans: ${Object.keys(config.rateLimits.plans).join(', ')})`);
  }
  return { file, config, definitions };
}
