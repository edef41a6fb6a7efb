/**
 * Searches off the event loop: a small pool of worker threads (server/search-worker.ts) that
 * open the stores' index segment files themselves and answer context searches, so /ping, MCP
 * sessions and every other request are served while a heavy query runs.
 *
 * - Each library build belongs to one worker (by a hash of its build id), so a segment is held
 *   in memory once, not once per worker; each worker holds its share of the segment budget.
 *   A worker answers one search at a time; the others wait in that worker's queue.
 * - A search abandoned by its caller (the request deadline: `signal` aborts) is dropped from its
 *   queue, or, when it is running, its worker is terminated and started again: the caller gets
 *   504 `processing_timeout` at once, and the result is never used.
 * - A worker that dies fails only the search it was running (503 `search_failed`) and is
 *   started again for the next. A pool whose workers cannot start at all (three failures in a
 *   row before one became ready) turns itself off and searches run in the main thread.
 * - Stores without segment files (Store.segmentFile absent or null) and damaged segments are
 *   left to the store's own search (null), which repairs what it finds.
 *
 * Under tsx (tests, `npm start`) the worker entry is the .ts file, run with tsx's loader; in the
 * compiled tree (dist/) it is the .js beside this file.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { Logger, Store } from '../core/contracts.ts';
import type { ContextFormat, ContextSearcher, ContextSnippet } from '../core/query.ts';
import type { SearchHit, SegmentFileRef } from '../core/contracts.ts';
import { RefdeskError, isRefdeskError } from '../core/errors.ts';
import { startWorker, workerUrl } from '../core/worker-task.ts';
import type { SearchReply, SearchRequest, SearchWorkerData } from './search-worker.ts';

export interface SearchPoolOptions {
  /**
   * Worker threads; default one per core but one (os.availableParallelism() - 1), at least 1:
   * the main thread keeps a core for HTTP and the catalog. A library's searches all run in the
   * worker owning its build, so more workers add parallelism across libraries only, and each
   * costs a V8 isolate (about 15 MB of RSS).
   */
  size?: number;
  /** Memory budget of the open segments, in bytes, over all workers (each gets its share). */
  cacheBytes?: number;
  /** Open segments per worker at most (each holds an open file). */
  cacheCount?: number;
  /**
   * Tests only: the workers honour `__refdesk_test_busy__ <ms>` (keeps its worker busy that
   * long) and `__refdesk_test_crash__` (its worker exits) as queries.
   */
  testHooks?: boolean;
}

export const DEFAULT_POOL_CACHE_BYTES = 128 * 1024 * 1024;

interface Task {
  req: SearchRequest;
  /** When it was posted to its worker (performance.now()). */
  postedAt?: number;
  resolve(v: SearchReply): void;
  reject(e: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Slot {
  index: number;
  worker: Worker | null;
  ready: boolean;
  current: Task | null;
  queue: Task[];
}

/** The young generation of a worker's heap, in MB (V8's default would be several times more). */
const YOUNG_GENERATION_MB = 8;

/** How many workers in a row may fail before becoming ready before the pool turns itself off. */
const MAX_START_FAILURES = 3;

export class SearchPool implements ContextSearcher {
  readonly size: number;
  private readonly slots: Slot[];
  private nextId = 1;
  private startFailures = 0;
  private disabled = false;
  private closed = false;
  private eager = false;
  /**
   * Counts for tests and reports; `workMs` sums the workers' own time on the searches answered,
   * `roundTripMs` the time from handing each of them to its worker to its answer arriving (the
   * difference is the message passing, structured clone and scheduling: the pool's own cost);
   * `encoded` counts the answers the workers sent as bytes in the asked format.
   */
  readonly stats = { started: 0, crashed: 0, abandoned: 0, searched: 0, encoded: 0, workMs: 0, roundTripMs: 0 };

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly options: SearchPoolOptions = {},
  ) {
    this.size = Math.max(1, Math.floor(options.size ?? defaultPoolSize()));
    this.slots = Array.from({ length: this.size }, (_, index) => ({ index, worker: null, ready: false, current: null, queue: [] }));
  }

  /** Whether searches run in the workers (false once the pool turned itself off or was closed). */
  get active(): boolean {
    return !this.disabled && !this.closed;
  }

  async search(
    libraryId: string,
    version: string,
    query: string,
    limit: number,
    assemble: { budget: number; encode?: ContextFormat } | null,
    signal?: AbortSignal,
  ): Promise<{ hits: SearchHit[] } | { snippets: ContextSnippet[] } | { encoded: Uint8Array; totalTokens: number } | null> {
    if (!this.active || !this.store.segmentFile) return null;
    const ref = await this.store.segmentFile(libraryId, version);
    if (!ref || !this.active) return null;
    const reply = await this.run(ref, query, limit, assemble?.budget ?? null, assemble?.encode ?? null, signal);
    if (!reply.ok) {
      if (reply.segment) {
        this.logger.warn('search worker: the index segment cannot be used; the store searches it (and repairs it)', { buildId: ref.buildId, detail: reply.message });
        return null;
      }
      throw new Error(`search worker: ${reply.message}`);
    }
    this.stats.searched++;
    if ('encoded' in reply) {
      this.stats.encoded++;
      return { encoded: reply.encoded, totalTokens: reply.totalTokens };
    }
    return 'hits' in reply ? { hits: reply.hits } : { snippets: reply.snippets };
  }

  /**
   * Starts every worker now rather than at its first search (the server does, once listening),
   * and from then on starts a replacement as soon as one stops.
   */
  start(): void {
    this.eager = true;
    for (const slot of this.slots) if (!slot.worker && this.active) this.spawn(slot);
  }

  /** Stops every worker; searches under way or queued fail with `search_failed`. */
  async close(): Promise<void> {
    this.closed = true;
    const stopping: Array<Promise<number>> = [];
    for (const slot of this.slots) {
      const failed = new RefdeskError('search_failed', 'The server is shutting down; the search was not run.');
      for (const t of slot.queue.splice(0)) this.settle(t, () => t.reject(failed));
      if (slot.current) this.settle(slot.current, () => slot.current!.reject(failed));
      slot.current = null;
      if (slot.worker) stopping.push(slot.worker.terminate());
      slot.worker = null;
    }
    await Promise.all(stopping);
  }

  private run(ref: SegmentFileRef, query: string, limit: number, budget: number | null, encode: ContextFormat | null, signal?: AbortSignal): Promise<SearchReply> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const slot = this.slots[slotOf(ref.buildId, this.size)];
    return new Promise<SearchReply>((resolve, reject) => {
      const task: Task = {
        req: { id: this.nextId++, buildId: ref.buildId, path: ref.path, checksum: ref.checksum, query, limit, budget, encode },
        resolve,
        reject,
        signal,
      };
      if (signal) {
        task.onAbort = () => this.abandon(slot, task);
        signal.addEventListener('abort', task.onAbort, { once: true });
      }
      slot.queue.push(task);
      this.dispatch(slot);
    });
  }

  /** Settles a task once: detaches its abort listener first. */
  private settle(task: Task, how: () => void): void {
    if (task.onAbort) task.signal?.removeEventListener('abort', task.onAbort);
    task.onAbort = undefined;
    how();
  }

  private abandon(slot: Slot, task: Task): void {
    this.stats.abandoned++;
    const err = abortError(task.signal!);
    const at = slot.queue.indexOf(task);
    if (at >= 0) {
      slot.queue.splice(at, 1);
      this.settle(task, () => task.reject(err));
      return;
    }
    if (slot.current !== task) return;
    // Running: the worker is stopped (its result would come too late) and started again.
    slot.current = null;
    const worker = slot.worker;
    slot.worker = null;
    slot.ready = false;
    if (worker) void worker.terminate();
    this.logger.warn('search worker stopped: a search ran past the request deadline', { worker: slot.index });
    this.settle(task, () => task.reject(err));
    this.dispatch(slot);
  }

  private dispatch(slot: Slot): void {
    if (this.eager && !slot.worker && this.active) this.spawn(slot);
    if (slot.current || slot.queue.length === 0 || this.closed) return;
    if (this.disabled) {
      // Turned off while these waited: the caller's store search takes over.
      const err = new RefdeskError('search_failed', 'The search workers cannot start; try again (the server now searches in its main thread).');
      for (const t of slot.queue.splice(0)) this.settle(t, () => t.reject(err));
      return;
    }
    const worker = slot.worker ?? this.spawn(slot);
    const task = slot.queue.shift()!;
    slot.current = task;
    // A worker keeps the process alive only while it runs a search.
    worker.ref();
    task.postedAt = performance.now();
    worker.postMessage(task.req);
  }

  private spawn(slot: Slot): Worker {
    const data: SearchWorkerData = {
      cacheBytes: Math.floor((this.options.cacheBytes ?? DEFAULT_POOL_CACHE_BYTES) / this.size),
      cacheCount: Math.max(1, this.options.cacheCount ?? 16),
      testHooks: this.options.testHooks === true,
    };
    // A search allocates little that lives: a small young generation keeps each worker's heap
    // (and the process's RSS) small.
    const resourceLimits = { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB };
    // Query threads keep the main thread's priority (ingest threads may run niced: setWorkerNice).
    const worker = startWorker(WORKER_ENTRY, data, undefined, resourceLimits, { background: false });
    worker.unref();
    slot.worker = worker;
    slot.ready = false;
    this.stats.started++;
    let gone = false;
    const died = (why: string) => {
      if (gone) return;
      gone = true;
      if (slot.worker !== worker) return; // terminated on purpose (abandoned search, close)
      slot.worker = null;
      this.stats.crashed++;
      if (!slot.ready && ++this.startFailures >= MAX_START_FAILURES) {
        this.disabled = true;
        this.logger.error('search workers cannot start; searching in the main thread from now on', { error: why });
      } else this.logger.error('search worker died; starting another', { worker: slot.index, error: why });
      slot.ready = false;
      const task = slot.current;
      slot.current = null;
      if (task) {
        this.settle(task, () =>
          task.reject(new RefdeskError('search_failed', 'Documentation search failed: the search worker running it stopped unexpectedly. Try again; if it happens again for this query, tell the operator (details are in the server log).')),
        );
      }
      this.dispatch(slot);
    };
    worker.on('message', (msg: SearchReply | { ready: true }) => {
      if ('ready' in msg) {
        slot.ready = true;
        this.startFailures = 0;
        return;
      }
      const task = slot.current;
      if (!task || task.req.id !== msg.id || slot.worker !== worker) return;
      slot.current = null;
      worker.unref();
      if (msg.ok) {
        this.stats.workMs += msg.workMs;
        this.stats.roundTripMs += performance.now() - task.postedAt!;
      }
      this.settle(task, () => task.resolve(msg));
      this.dispatch(slot);
    });
    worker.on('error', (e) => died(e.message));
    worker.on('exit', (code) => died(`exited with code ${code}`));
    return worker;
  }
}

const WORKER_ENTRY = workerUrl(import.meta.url, './search-worker');

function abortError(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return isRefdeskError(reason) ? reason : new RefdeskError('processing_timeout', 'The search did not finish before the request deadline; try again, or ask a narrower question.');
}

/** Workers when the configuration names no number: the cores but one, at least 1. */
export function defaultPoolSize(): number {
  return Math.max(1, availableParallelism() - 1);
}

/** The worker a build belongs to (FNV-1a of its id). */
export function slotOf(buildId: string, size: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < buildId.length; i++) h = Math.imul(h ^ buildId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % size;
}
