/**
 * Plugin test kit: build one definition of a plugin the way the kernel does (options validated
 * by the same function and ajv instance as the config loader, so bad options fail with the
 * message an operator would get), with fakes for the services it depends on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock, Fetch, Logger, RuntimeEnv, Store } from '../contracts.ts';
import type { AnyDefinition, Plugin, Role, RoleTypes } from '../define.ts';
import type { Token } from '../di.ts';
import { Tokens } from '../di-tokens.ts';
import { ConfigError } from '../errors.ts';
import type { GitCredentials } from '../git-credentials.ts';
import { DEFAULT_NETWORK_POLICY } from '../net/address-policy.ts';
import { pluginKernelError, pluginOptionsError } from '../plugin-options.ts';
import { createFakeClock, createFakeEmbedder, createFakeFetch, type FakeClock, type FakeEmbedder } from './fakes.ts';
import { FakeProviders } from './fake-providers.ts';
import { MemoryStore } from './memory-store.ts';
import { createTestLogger, type TestLogger } from './run-source.ts';

export interface RunPluginOptions<R extends Role = Role> {
  /** The definition's kind, e.g. `wiki`. */
  kind: string;
  /** Its role; needed only when the plugin has two definitions of the same kind. Types `instance`. */
  role?: R;
  /** The options as an operator would write them in config (default `{}`); not changed. */
  options?: Record<string, unknown>;
  /**
   * Dependencies by the names the definition declares in `deps` (e.g. `{ fetch: createFetch() }`);
   * each replaces the fake runPlugin would give for that name.
   */
  deps?: Record<string, unknown>;
}

/** The fakes runPlugin made (each made even when no dependency asked for it). */
export interface RunPluginFakes {
  /** Answers no request: every fetch rejects naming the URL. Pass `deps.fetch` to serve pages. */
  fetch: Fetch;
  /** Keeps every line in `.lines`. */
  logger: TestLogger;
  /** Starts at 2026-01-01T00:00:00.000Z and moves only with `advance()` / `set()`. */
  clock: FakeClock;
  /** A MemoryStore (opened) on the fake clock. */
  store: Store;
  /** Deterministic vectors (core/testing/fakes.ts), the embedder of `providers`. */
  embedder: FakeEmbedder;
  /** No LLM, the fake embedder; `providers.set({ llm })` gives one. */
  providers: FakeProviders;
}

export interface RunPluginResult<T> {
  /** What `create` made. */
  instance: T;
  /** The dependencies `create` received, by name. */
  deps: Record<string, unknown>;
  /** The options `create` received: validated, defaults filled in. */
  options: Record<string, unknown>;
  definition: AnyDefinition;
  fakes: RunPluginFakes;
  /** The data directory given as `Tokens.Env` (a temporary folder), or null when none was asked for. */
  dataDir: string | null;
  /** Closes the fake store and removes the temporary data directory (again: nothing). */
  close(): Promise<void>;
}

function pickDefinition(plugin: Plugin, kind: string, role: Role | undefined): AnyDefinition {
  const matches = plugin.definitions.filter((d) => d.kind === kind && (role === undefined || d.role === role));
  const provided = plugin.definitions.map((d) => `${d.role} "${d.kind}"`).join(', ') || 'nothing';
  if (matches.length === 0) throw new ConfigError(`runPlugin: plugin ${plugin.name} has no ${role ?? 'definition'} of kind "${kind}" (it provides: ${provided})`);
  if (matches.length > 1) throw new ConfigError(`runPlugin: plugin ${plugin.name} has ${matches.length} definitions of kind "${kind}" (${matches.map((d) => d.role).join(', ')}): pass role`);
  return matches[0];
}

/**
 * Creates the definition `kind` of `plugin` as the kernel would: the options are validated (ajv,
 * defaults filled in, unknown keys refused) by the config loader's own function, and a bad one
 * rejects with the same ConfigError message an operator gets at start-up (without the config
 * file and plugin list position). Each declared dependency comes from `deps` by name, else from
 * a fake chosen by its token: Fetch, Logger, Clock, Store, Env (a temporary data directory),
 * NetworkPolicy (the default policy), GitCredentials (no tokens), Providers (no LLM, the fake
 * embedder). A token with no fake must be given in `deps`. Call `close()` when done.
 */
export async function runPlugin<R extends Role = Role>(plugin: Plugin, opts: RunPluginOptions<R>): Promise<RunPluginResult<RoleTypes[R]>> {
  if (!plugin || (plugin as { __refdeskPlugin?: unknown }).__refdeskPlugin !== true || !Array.isArray(plugin.definitions)) {
    throw new ConfigError('runPlugin: the first argument is not a Refdesk plugin (use definePlugin)');
  }
  // The kernel range first, as the config loader checks it: a plugin an operator could not load fails here too.
  const kernelProblem = pluginKernelError(plugin);
  if (kernelProblem) throw new ConfigError(kernelProblem);
  const definition = pickDefinition(plugin, opts.kind, opts.role);
  const options = structuredClone(opts.options ?? {});
  const problem = pluginOptionsError(plugin.name, definition, options);
  if (problem) throw new ConfigError(problem);

  const clock = createFakeClock();
  const embedder = createFakeEmbedder();
  const store = new MemoryStore({ clock });
  await store.open();
  const fakes: RunPluginFakes = {
    fetch: createFakeFetch({}, { strict: true }),
    logger: createTestLogger(),
    clock,
    store,
    embedder,
    providers: new FakeProviders({ embedder }),
  };
  let dataDir: string | null = null;
  const env = (): RuntimeEnv => {
    dataDir ??= mkdtempSync(join(tmpdir(), 'refdesk-plugin-'));
    return { dataDir, mode: 'writer' };
  };
  const gitCredentials: GitCredentials = { tokenFor: async () => undefined };
  const byToken = new Map<Token<unknown>, () => unknown>([
    [Tokens.Fetch, () => fakes.fetch],
    [Tokens.Logger, (): Logger => fakes.logger],
    [Tokens.Clock, (): Clock => fakes.clock],
    [Tokens.Store, () => fakes.store],
    [Tokens.Env, env],
    [Tokens.NetworkPolicy, () => DEFAULT_NETWORK_POLICY],
    [Tokens.GitCredentials, () => gitCredentials],
    [Tokens.Providers, () => fakes.providers],
  ]);

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await store.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  const given = opts.deps ?? {};
  const declared = (definition.deps ?? {}) as Record<string, Token<unknown>>;
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(declared, name)) {
      await close();
      throw new ConfigError(`runPlugin: deps.${name}: the ${definition.role} "${definition.kind}" declares no dependency "${name}" (it declares: ${Object.keys(declared).join(', ') || 'none'})`);
    }
  }
  const deps: Record<string, unknown> = {};
  for (const [name, token] of Object.entries(declared)) {
    if (Object.hasOwn(given, name)) {
      deps[name] = given[name];
      continue;
    }
    const fake = byToken.get(token);
    if (!fake) {
      await close();
      throw new ConfigError(`runPlugin: dependency "${name}" (${token.description ?? String(token)}) has no fake: pass it as deps.${name}`);
    }
    deps[name] = fake();
  }
  try {
    const instance = (await definition.create(options as never, deps as never)) as RoleTypes[R];
    return { instance, deps, options, definition, fakes, dataDir, close };
  } catch (e) {
    await close();
    throw e;
  }
}
