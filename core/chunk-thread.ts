/**
 * Worker thread of core/chunk-worker.ts: builds the kernel's chunkers (the same plugin modules,
 * options validated the same way, same order) and chunks the documents it
 * is sent, off the server's event loop. Messages in: { id, chunker (index in the kernel's list),
 * doc }; out: { id, ok, snippets } or { id, ok: false, error }. The first message out is
 * { ready: true } or { ready: false, error } once the chunkers are built.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Chunker, RuntimeEnv, SourceDocument } from './contracts.ts';
import type { AnyDefinition } from './define.ts';
import { pluginOptionsError } from './plugin-options.ts';
import { newContainer, resolveDeps } from './di.ts';
import { Tokens } from './di-tokens.ts';
import { loggerFrom, systemClock } from './services.ts';
import { importPluginModule } from './plugin-import.ts';

/** One chunker of the kernel, in its order: the plugin module that defines it, its kind, its configured options. */
export interface ChunkerPlanEntry {
  specifier: string;
  kind: string;
  options: Record<string, unknown>;
}

const { plan, dataDir } = workerData as { plan: ChunkerPlanEntry[]; dataDir: string };
const port = parentPort!;

/** Imports only the chunker plugins (not every plugin of the config) and builds their chunkers. */
async function buildChunkers(): Promise<Chunker[]> {
  const container = newContainer();
  // Chunkers log nothing a job needs; their warnings would have no job to go to here.
  container.registerInstance(Tokens.Logger, loggerFrom(() => {}));
  container.registerInstance(Tokens.Clock, systemClock);
  container.registerInstance(Tokens.Env, { dataDir, mode: 'reader' } satisfies RuntimeEnv);
  const out: Chunker[] = [];
  for (const entry of plan) {
    const mod = (await importPluginModule(entry.specifier)) as { default?: { definitions?: AnyDefinition[] } };
    const def = mod.default?.definitions?.find((d) => d.role === 'chunker' && d.kind === entry.kind);
    if (!def) throw new Error(`${entry.specifier} defines no chunker "${entry.kind}"`);
    const options = structuredClone(entry.options);
    const problem = pluginOptionsError(entry.specifier, def, options); // fills in the defaults, with the config loader's check and message
    if (problem) throw new Error(problem);
    const deps = resolveDeps(container.createChildContainer(), def.deps, `chunker "${entry.kind}"`);
    out.push((await def.create(options, deps as never)) as Chunker);
  }
  return out;
}

try {
  const chunkers = await buildChunkers();
  port.on('message', (m: { id: number; chunker: number; doc: SourceDocument }) => {
    try {
      const chunker = chunkers[m.chunker];
      if (!chunker) throw new Error(`no chunker number ${m.chunker}`);
      port.postMessage({ id: m.id, ok: true, snippets: chunker.chunk(m.doc) });
    } catch (e) {
      port.postMessage({ id: m.id, ok: false, error: (e as Error)?.message ?? String(e) });
    }
  });
  port.postMessage({ ready: true });
} catch (e) {
  port.postMessage({ ready: false, error: (e as Error)?.message ?? String(e) });
}
