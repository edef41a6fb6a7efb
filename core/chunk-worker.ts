/**
 * Chunking of large documents off the event loop (issue 17). A chunker's `chunk(doc)` is one
 * synchronous call: parsing a 150 KB page takes a few hundred milliseconds, during which a
 * server would answer nothing. Documents of at least `minChars` characters are chunked in one
 * worker thread per kernel (core/chunk-thread.ts: the same config file, so the same chunkers with
 * the same options); smaller ones stay on the main thread, where the ingest loop yields between
 * documents (core/yield-loop.ts). The worker starts at the first large document, and ends after
 * `idleMs` without work and when the kernel closes. When it cannot start or dies, chunking goes on
 * on the main thread (logged once). Outside a server (`refdesk add`) the main thread shares the
 * large documents with the worker (CHUNK_WORKER_SHARE_CHARS). The ingest loop does not wait for
 * one document's snippets before sending the next (core/ingest.ts), so both threads work at once.
 */
import type { Worker } from 'node:worker_threads';
import type { SourceDocument, Snippet } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { dirname, resolve } from 'node:path';
import { startWorker, workerUrl } from './worker-task.ts';
import { resolvePluginSpecifier } from './config.ts';
import type { ChunkerPlanEntry } from './chunk-thread.ts';
import { importPluginModule } from './plugin-import.ts';

/** Documents from this many characters on are chunked in the worker thread. */
export const CHUNK_WORKER_MIN_CHARS = 8 * 1024;
const IDLE_MS = 10_000;
/**
 * Parsing markdown allocates many short-lived objects (micromark's events and tokens, mdast
 * nodes): a young generation of 64 MB semi-spaces (V8's default is 16 MB) scavenges a fraction
 * as often and cut the chunking CPU of python by about a fifth (docs/benchmark.md).
 */
const CHUNK_THREAD_LIMITS = { maxYoungGenerationSizeMb: 192 };

type Pending = { resolve: (s: Snippet[]) => void; reject: (e: Error) => void };

export class ChunkWorker {
  private worker: Worker | null = null;
  private ready: Promise<boolean> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Set once the worker failed: everything is chunked on the main thread from then on. */
  private broken = false;
  /** Documents chunked in the worker thread (for tests and reports). */
  chunked = 0;
  /** Characters of the documents sent to the worker thread and not yet chunked. */
  queuedChars = 0;
  /** Outside a server: characters of large documents chunked on the main thread. */
  mainChars = 0;

  constructor(
    private readonly kernel: Kernel,
    private readonly idleMs = IDLE_MS,
  ) {}

  /** The document's snippets, from the worker thread; on the main thread when no worker runs. */
  async chunk(doc: SourceDocument): Promise<Snippet[]> {
    // Counted from now: documents sent while the thread starts are queued for it too.
    this.queuedChars += doc.content.length;
    try {
      return await this.send(doc);
    } finally {
      this.queuedChars -= doc.content.length;
    }
  }

  private async send(doc: SourceDocument): Promise<Snippet[]> {
    const chunker = this.kernel.chunkerFor(doc.format);
    if (this.broken || !(await this.start())) return chunker.chunk(doc);
    const worker = this.worker!;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    worker.ref();
    const id = this.nextId++;
    const reply = new Promise<Snippet[]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    const message = { id, chunker: this.kernel.chunkers.indexOf(chunker), doc: plainDoc(doc) };
    worker.postMessage(message);
    try {
      const snippets = await reply;
      this.chunked++;
      return snippets;
    } finally {
      if (this.pending.size === 0 && this.worker === worker) {
        worker.unref();
        this.idleTimer = setTimeout(() => void this.close(), this.idleMs);
        this.idleTimer.unref();
      }
    }
  }

  private start(): Promise<boolean> {
    if (this.ready) return this.ready;
    this.ready = chunkerPlan(this.kernel).then(
      (plan) => this.spawn(plan),
      (e: Error) => {
        this.fail(e);
        return false;
      },
    );
    return this.ready;
  }

  private spawn(plan: ChunkerPlanEntry[]): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let worker: Worker;
      try {
        worker = startWorker(workerUrl(import.meta.url, './chunk-thread', { compiled: false }), { plan, dataDir: this.kernel.env.dataDir }, undefined, CHUNK_THREAD_LIMITS);
      } catch (e) {
        this.fail(e as Error);
        resolve(false);
        return;
      }
      this.worker = worker;
      worker.on('message', (m: { ready?: boolean; error?: string; id?: number; ok?: boolean; snippets?: Snippet[] }) => {
        if (m.ready !== undefined) {
          if (!m.ready) this.fail(new Error(m.error ?? 'the chunkers could not be built'));
          resolve(m.ready);
          return;
        }
        const p = this.pending.get(m.id!);
        if (!p) return;
        this.pending.delete(m.id!);
        if (m.ok) p.resolve(m.snippets!);
        else p.reject(new Error(m.error ?? 'the chunker failed'));
      });
      worker.on('error', (e) => {
        this.fail(e);
        resolve(false);
      });
      worker.on('exit', () => {
        if (this.worker === worker) {
          // Ended by close() (idle) or died: requests in flight fail over to the main thread below.
          this.worker = null;
          this.ready = null;
          for (const [, p] of this.pending) p.reject(new WorkerGone());
          this.pending.clear();
          resolve(false);
        }
      });
    });
  }

  private fail(e: Error): void {
    if (!this.broken) this.kernel.logger.warn('chunking large documents on the main thread: the chunk worker thread failed', { error: e.message });
    this.broken = true;
    const worker = this.worker;
    this.worker = null;
    for (const [, p] of this.pending) p.reject(new WorkerGone());
    this.pending.clear();
    void worker?.terminate();
  }

  /** Ends the worker thread (a later large document starts it again). */
  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const worker = this.worker;
    this.worker = null;
    this.ready = null;
    for (const [, p] of this.pending) p.reject(new WorkerGone());
    this.pending.clear();
    await worker?.terminate();
  }
}

/** The worker thread ended while a document was being chunked in it. */
export class WorkerGone extends Error {
  constructor() {
    super('the chunk worker thread ended');
  }
}

/** Only the fields a chunker reads, as plain data (a source's document may carry more). */
function plainDoc(doc: SourceDocument): SourceDocument {
  const out: SourceDocument = { path: doc.path, format: doc.format, content: doc.content };
  if (doc.url !== undefined) out.url = doc.url;
  if (doc.lineMap !== undefined) out.lineMap = doc.lineMap;
  if (doc.title !== undefined) out.title = doc.title;
  if (doc.hash !== undefined) out.hash = doc.hash;
  if (doc.meta !== undefined) out.meta = doc.meta;
  return out;
}

/**
 * The kernel's chunkers as the worker builds them: for each, in the kernel's order, the plugin
 * module defining it (already imported here, by the config loader), its kind and its options as
 * configured. The worker imports only these modules.
 */
async function chunkerPlan(kernel: Kernel): Promise<ChunkerPlanEntry[]> {
  const configDir = dirname(resolve(kernel.configFile));
  const found = new Map<string, ChunkerPlanEntry>();
  for (const entry of kernel.config.plugins) {
    if (entry.enabled === false) continue;
    const r = resolvePluginSpecifier(entry.use, configDir);
    if (!r.ok) continue;
    const mod = (await importPluginModule(r.specifier)) as { default?: { definitions?: Array<{ role?: unknown; kind?: unknown }> } };
    for (const def of mod.default?.definitions ?? []) {
      if (def.role !== 'chunker' || typeof def.kind !== 'string') continue;
      const kind = def.kind;
      found.set(kind, { specifier: r.specifier, kind, options: structuredClone((entry.options?.[kind] ?? {}) as Record<string, unknown>) });
    }
  }
  const kinds = kernel.config.slots.chunkers ?? [...found.keys()];
  return kinds.map((k) => {
    const e = found.get(k);
    if (!e) throw new Error(`no plugin module found for the chunker "${k}"`);
    return e;
  });
}

const workers = new WeakMap<Kernel, ChunkWorker>();

/** The kernel's chunk worker (one per kernel, started on first use). */
export function chunkWorkerOf(kernel: Kernel): ChunkWorker {
  let w = workers.get(kernel);
  if (!w) workers.set(kernel, (w = new ChunkWorker(kernel)));
  return w;
}

/** Ends the kernel's chunk worker thread, if one runs (at kernel close). */
export async function closeChunkWorker(kernel: Kernel): Promise<void> {
  await workers.get(kernel)?.close();
}

/**
 * Outside a server (the CLI's `refdesk add`: no request waits on this event loop), a large
 * document is chunked here rather than queued behind this many characters already sent to the
 * worker thread, so that both cores chunk (the ingest loop sends documents ahead: ingest.ts);
 * and the worker thread starts only once this many characters of large documents were chunked
 * here: a small library is done before a thread would have started and warmed up.
 */
export const CHUNK_WORKER_SHARE_CHARS = 256 * 1024;

/**
 * In a server, an ingest that has read this many characters, or whose source expects this many
 * documents, sends every document to the worker thread, small ones too: under load the parse of
 * a 2 - 8 KiB page on the main thread held the event loop 100 - 350 ms, and a large library has
 * hundreds of them (docs/benchmark.md, ingest rounds 4 and 5). Below both, small documents stay
 * on the main thread: a small library (every shared corpus the tests ingest in a server: koa,
 * zod, hono, zustand, fastify, all under 700 KB and 100 documents) starts no thread for them,
 * as starting the worker for every ingest made the test suite about 18 % slower under tsx.
 */
export const SERVER_ALL_IN_WORKER_CHARS = 1 << 20;
export const SERVER_ALL_IN_WORKER_DOCS = 150;

/**
 * Chunks a document: in the kernel's worker thread when it has at least `minChars` characters
 * (0 or Infinity: never), or when `allInWorker` (a server's large ingest, SERVER_ALL_IN_WORKER_*),
 * else here; outside a server also here for the first CHUNK_WORKER_SHARE_CHARS, and when the
 * worker thread has as many queued. A worker that ended meanwhile means chunking it here.
 */
export async function chunkDocument(kernel: Kernel, doc: SourceDocument, minChars = CHUNK_WORKER_MIN_CHARS, allInWorker = false): Promise<Snippet[]> {
  if (!(minChars > 0) || (doc.content.length < minChars && !(allInWorker && kernel.env.mode === 'server'))) return kernel.chunkerFor(doc.format).chunk(doc);
  const worker = chunkWorkerOf(kernel);
  if (kernel.env.mode !== 'server' && (worker.mainChars < CHUNK_WORKER_SHARE_CHARS || worker.queuedChars >= CHUNK_WORKER_SHARE_CHARS)) {
    worker.mainChars += doc.content.length;
    return kernel.chunkerFor(doc.format).chunk(doc);
  }
  try {
    return await worker.chunk(doc);
  } catch (e) {
    if (e instanceof WorkerGone) return kernel.chunkerFor(doc.format).chunk(doc);
    throw e;
  }
}
