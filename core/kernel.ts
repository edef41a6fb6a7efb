/**
 * The kernel: builds every configured definition in its own child container, with only the
 * dependencies it declares, and exposes the slots to the ingest and query pipelines.
 */
import { newContainer, resolveDeps, type DependencyContainer } from './di.ts';
import type { Chunker, Clock, DocumentFormat, Fetch, Logger, Reranker, RuntimeEnv, Source, Store } from './contracts.ts';
import { Providers, type EmbedderConnector, type LlmConnector } from './providers.ts';
import type { AnyDefinition, SourceDefinition } from './define.ts';
import { loadConfig, type LoadedConfig, type LoadedDefinition, type RefdeskConfig } from './config.ts';
import { ConfigError } from './errors.ts';
import { registerStore, Tokens } from './di-tokens.ts';
import { dataDirSecretBox, type SecretBox } from './secrets.ts';
import { settingsGitCredentials } from './settings.ts';
import { createConsoleLogger, systemClock } from './services.ts';
import { createGuardedFetch } from './net/guarded-fetch.ts';
import { closeChunkWorker } from './chunk-worker.ts';

export interface KernelServices {
  env: RuntimeEnv;
  logger?: Logger;
  clock?: Clock;
  fetch?: Fetch;
}

export interface SourceEntry {
  kind: string;
  def: SourceDefinition;
  source: Source;
  /** What made it (its plugin and options): part of its libraries' build fingerprint (core/fingerprint.ts). */
  origin?: PluginOrigin;
}

/** The plugin and validated options a configured definition was made from. */
export interface PluginOrigin {
  kind: string;
  plugin: string;
  version: string;
  options: Record<string, unknown>;
}

const originOf = (e: LoadedDefinition): PluginOrigin => ({ kind: e.def.kind, plugin: e.plugin, version: e.pluginVersion, options: e.options });

export class Kernel {
  readonly sources = new Map<string, SourceEntry>();
  readonly chunkers: Chunker[] = [];
  /** What made each of `chunkers` (same order): part of the build fingerprint (core/fingerprint.ts). */
  readonly chunkerOrigins: PluginOrigin[] = [];
  /** The LLM and embedder of the operator's settings, through the provider plugins (core/providers.ts). */
  providers!: Providers;
  reranker: Reranker | null = null;
  private opened = false;
  /** Seals and opens secret spec fields (see core/secrets.ts). */
  readonly secrets: SecretBox;

  constructor(
    readonly config: RefdeskConfig,
    readonly configFile: string,
    readonly container: DependencyContainer,
    readonly store: Store,
    readonly logger: Logger,
    readonly clock: Clock,
    readonly env: RuntimeEnv,
  ) {
    this.secrets = dataDirSecretBox(env.dataDir);
  }

  /** The chunker for a document format; markdown-like text falls back to the first chunker. */
  chunkerFor(format: DocumentFormat): Chunker {
    return this.chunkers.find((c) => c.formats.includes(format)) ?? this.chunkers.find((c) => c.formats.includes('text')) ?? this.chunkers[0];
  }

  async open(): Promise<void> {
    if (this.opened) return;
    await this.store.open();
    this.opened = true;
  }

  async close(): Promise<void> {
    if (!this.opened) return;
    this.opened = false;
    await closeChunkWorker(this);
    await this.store.close();
  }
}

/** Loads the config file and builds a kernel (not opened yet). */
export async function createKernel(configFile: string, services: KernelServices): Promise<Kernel> {
  const loaded = await loadConfig(configFile);
  return buildKernel(loaded, services);
}

export async function buildKernel(loaded: LoadedConfig, services: KernelServices): Promise<Kernel> {
  const logger = services.logger ?? createConsoleLogger();
  const clock = services.clock ?? systemClock;
  const container = newContainer();
  container.registerInstance(Tokens.Logger, logger);
  container.registerInstance(Tokens.Clock, clock);
  container.registerInstance(Tokens.Fetch, services.fetch ?? createGuardedFetch(loaded.config.network));
  container.registerInstance(Tokens.Env, services.env);
  const { config, definitions, file } = loaded;
  container.registerInstance(Tokens.NetworkPolicy, config.network);

  const make = async <T>(entry: LoadedDefinition): Promise<T> => {
    const child = container.createChildContainer();
    const owner = `${file}: ${entry.at} (${entry.plugin}) ${entry.def.role} "${entry.def.kind}"`;
    let deps: Record<string, unknown>;
    try {
      deps = resolveDeps(child, entry.def.deps, owner);
    } catch (e) {
      throw new ConfigError((e as Error).message);
    }
    return (await (entry.def as AnyDefinition).create(entry.options, deps as never)) as T;
  };

  const store = await make<Store>(definitions.get('store')!.get(config.slots.store)!);
  registerStore(container, store);
  const kernel = new Kernel(config, file, container, store, logger, clock, services.env);
  container.registerInstance(Tokens.GitCredentials, settingsGitCredentials(store, kernel.secrets));

  // Every provider plugin makes its connector; the settings pick one per role at use time.
  const llmConnectors: LlmConnector[] = [];
  for (const entry of definitions.get('llm')!.values()) llmConnectors.push(await make<LlmConnector>(entry));
  const embedderEntries = config.slots.embedder ? [definitions.get('embedder')!.get(config.slots.embedder)!] : [...definitions.get('embedder')!.values()];
  const embedderConnectors: EmbedderConnector[] = [];
  for (const entry of embedderEntries) embedderConnectors.push(await make<EmbedderConnector>(entry));
  kernel.providers = new Providers(store, kernel.secrets, { llm: llmConnectors, embedder: embedderConnectors }, logger);
  container.registerInstance(Tokens.Providers, kernel.providers);
  if (config.slots.reranker) kernel.reranker = await make<Reranker>(definitions.get('reranker')!.get(config.slots.reranker)!);
  const chunkerKinds = config.slots.chunkers ?? [...definitions.get('chunker')!.keys()];
  for (const kind of chunkerKinds) {
    const entry = definitions.get('chunker')!.get(kind)!;
    kernel.chunkers.push(await make<Chunker>(entry));
    kernel.chunkerOrigins.push(originOf(entry));
  }
  for (const [kind, entry] of definitions.get('source')!) {
    kernel.sources.set(kind, { kind, def: entry.def as SourceDefinition, source: await make<Source>(entry), origin: originOf(entry) });
  }
  return kernel;
}
