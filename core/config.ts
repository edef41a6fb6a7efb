/**
 * Configuration: read the YAML file, validate it, import the plugins it lists, check each
 * plugin's shape, kernel range, kinds and options. Every failure is a ConfigError that names the
 * config file and the path inside it (and the plugin), never a value.
 */
import { readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import semver from 'semver';
import { ConfigError } from './errors.ts';
import type { AnyDefinition, Plugin, Role } from './define.ts';
import { KERNEL_VERSION } from './version.ts';
import { validate } from './validate.ts';
import type { NetworkPolicy } from './net/address-policy.ts';
import type { RateLimitConfig } from './rate-limit.ts';

const ROLES: readonly Role[] = ['source', 'chunker', 'embedder', 'reranker', 'store'];

export interface PluginEntry {
  use: string;
  enabled?: boolean;
  options?: Record<string, Record<string, unknown>>;
}

export interface RefdeskConfig {
  plugins: PluginEntry[];
  slots: { store: string; chunkers?: string[]; embedder: string | null; reranker: string | null };
  query: { defaultTokens: number; minTokens: number; maxTokens: number };
  network: NetworkPolicy;
  rateLimits: RateLimitConfig;
  api: { requestTimeoutMs: number; maxOpenApiUploadBytes: number; cacheMaxAgeSeconds: number };
  /** The HTTP server: hosts allowed besides the loopback names (Origin checks of /mcp). */
  server: { allowedHosts: string[] };
}

/** A definition picked from a loaded plugin, with its validated options. */
export interface LoadedDefinition {
  def: AnyDefinition;
  options: Record<string, unknown>;
  plugin: string;
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

/** Reads and validates the config file's own structure (not the plugins yet). */
export function readConfig(file: string): RefdeskConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new ConfigError(`${file}: cannot read the configuration file`);
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (e) {
    const line = (e as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    throw new ConfigError(`${file}: not valid YAML${line ? ` (line ${line})` : ''}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new ConfigError(`${file}: the top level must be a mapping`);
  configSchema ??= JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>;
  const problems = validate(configSchema, data, '');
  if (problems.length > 0) throw new ConfigError(`${file}: ${problems.map((p) => p.replace(/^\./, '')).join('; ')}`);
  return interpolateEnv(data) as RefdeskConfig;
}

/** `${NAME}` in string values is replaced by the environment variable (for secrets). */
function interpolateEnv(v: unknown): unknown {
  if (typeof v === 'string') return v.replace(/\$\{([A-Z_][A-Z0-9_]*)\}/g, (_, n: string) => process.env[n] ?? '');
  if (Array.isArray(v)) return v.map(interpolateEnv);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, interpolateEnv(x)]));
  return v;
}

function resolveSpecifier(use: string, configDir: string): string {
  if (use.startsWith('./') || use.startsWith('../') || isAbsolute(use)) {
    let p = isAbsolute(use) ? use : resolve(configDir, use);
    if (existsSync(p) && statSync(p).isDirectory()) {
      const ts = join(p, 'index.ts');
      p = existsSync(ts) ? ts : join(p, 'index.js');
    }
    return pathToFileURL(p).href;
  }
  return use; // a package name, resolved by Node
}

function isPlugin(x: unknown): x is Plugin {
  return !!x && typeof x === 'object' && (x as Plugin).__refdeskPlugin === true && Array.isArray((x as Plugin).definitions);
}

/** Loads the config file and every plugin it lists. */
export async function loadConfig(file: string): Promise<LoadedConfig> {
  const config = readConfig(file);
  const configDir = dirname(resolve(file));
  const definitions = new Map<Role, Map<string, LoadedDefinition>>(ROLES.map((r) => [r, new Map()]));

  for (const [i, entry] of config.plugins.entries()) {
    if (entry.enabled === false) continue;
    const at = `plugins[${i}]`;
    const where = `${file}: ${at} (${entry.use})`;
    let mod: { default?: unknown };
    try {
      mod = (await import(resolveSpecifier(entry.use, configDir))) as { default?: unknown };
    } catch (e) {
      const code = (e as { code?: string }).code;
      const why = code === 'ERR_MODULE_NOT_FOUND' || code === 'ERR_UNSUPPORTED_DIR_IMPORT' ? 'module not found' : `failed to load: ${(e as Error).message.split('\n')[0]}`;
      throw new ConfigError(`${where}: ${why}`);
    }
    const plugin = mod.default;
    if (!isPlugin(plugin)) throw new ConfigError(`${where}: the module's default export is not a Refdesk plugin (use definePlugin)`);
    if (typeof plugin.kernel !== 'string' || !semver.validRange(plugin.kernel)) {
      throw new ConfigError(`${where}: plugin ${plugin.name} declares no valid kernel range`);
    }
    if (!semver.satisfies(KERNEL_VERSION, plugin.kernel)) {
      throw new ConfigError(`${where}: plugin ${plugin.name} requires kernel ${plugin.kernel}, but this Refdesk kernel is ${KERNEL_VERSION}`);
    }
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
      const problems = validate(def.options, options, `${at}.options.${def.kind}`);
      if (problems.length > 0) throw new ConfigError(`${file}: plugin ${plugin.name}: ${problems.join('; ')}`);
      byKind.set(def.kind, { def, options, plugin: plugin.name, at });
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
