/**
 * Worker thread of core/chunk-worker.ts: builds the configured chunkers from the same config file
 * (same plugins, same validated options, same order as the kernel's) and chunks the documents it
 * is sent, off the server's event loop. Messages in: { id, chunker (index in the kernel's list),
 * doc }; out: { id, ok, snippets } or { id, ok: false, error }. The first message out is
 * { ready: true } or { ready: false, error } once the chunkers are built.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Chunker, RuntimeEnv, SourceDocument } from './contracts.ts';
import type { AnyDefinition } from './define.ts';
import { loadConfig } from './config.ts';
import { newContainer, resolveDeps } from './di.ts';
import { Tokens } from './tokens.ts';
import { loggerFrom, systemClock } from './services.ts';

const { configFile, dataDir } = workerData as { configFile: string; dataDir: string };
const port = parentPort!;

async function buildChunkers(): Promise<Chunker[]> {
  const loaded = await loadConfig(configFile);
  const container = newContainer();
  // Chunkers log nothing a job needs; their warnings would have no job to go to here.
  container.registerInstance(Tokens.Logger, loggerFrom(() => {}));
  container.registerInstance(Tokens.Clock, systemClock);
  container.registerInstance(Tokens.Env, { dataDir, mode: 'reader' } satisfies RuntimeEnv);
  const defs = loaded.definitions.get('chunker')!;
  const kinds = loaded.config.slots.chunkers ?? [...defs.keys()];
  const out: Chunker[] = [];
  for (const kind of kinds) {
    const entry = defs.get(kind)!;
    const deps = resolveDeps(container.createChildContainer(), entry.def.deps, `chunker "${kind}"`);
    out.push((await (entry.def as AnyDefinition).create(entry.options, deps as never)) as Chunker);
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
