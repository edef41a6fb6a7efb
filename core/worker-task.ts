/**
 * Worker threads for CPU-bound work that must not hold the event loop (issue 17: index segments,
 * large documents' chunking). A worker module is given by its URL beside the caller:
 * `workerUrl(import.meta.url, './segment-build-thread')` names `segment-build-thread.ts` when the
 * caller runs from the sources (tsx) and `segment-build-thread.js` in the compiled `dist/`.
 * Under tsx a worker does not inherit the main thread's loader, so a `.ts` worker is started
 * through a small bootstrap that registers tsx first (tsx/esm/api).
 *
 * Compiling a worker's modules through tsx costs about half a second of CPU at each start. When
 * `REFDESK_RUNTIME=dist` says the compiled code is current (the test runner sets it after
 * `npm run build`; bin/refdesk.js reads the same variable), a worker of the sources is started
 * from its compiled twin in dist/ instead, when that file is there.
 */
import { existsSync } from 'node:fs';
import { Worker, type ResourceLimits, type TransferListItem } from 'node:worker_threads';

/** The checkout's root when this module runs from the sources (core/..). */
const SOURCE_ROOT = new URL('..', import.meta.url).href;

/**
 * The URL of a worker module beside `callerUrl` (the caller's import.meta.url), with its
 * extension. `compiled: false` keeps a source worker on its `.ts` module even under
 * REFDESK_RUNTIME=dist (a worker that imports `.ts` plugin modules by name needs tsx).
 */
export function workerUrl(callerUrl: string, relative: string, options: { compiled?: boolean } = {}): URL {
  const ext = callerUrl.endsWith('.ts') ? '.ts' : '.js';
  const url = new URL(`${relative}${ext}`, callerUrl);
  return options.compiled === false ? url : (compiledTwin(url) ?? url);
}

/** dist/<path>.js for a source module <path>.ts of this checkout, when REFDESK_RUNTIME=dist and the file exists. */
export function compiledTwin(url: URL): URL | null {
  if (process.env.REFDESK_RUNTIME !== 'dist' || !url.pathname.endsWith('.ts') || !url.href.startsWith(SOURCE_ROOT)) return null;
  const twin = new URL(`dist/${url.href.slice(SOURCE_ROOT.length).replace(/\.ts$/, '.js')}`, SOURCE_ROOT);
  return existsSync(twin) ? twin : null;
}

/**
 * The nice value (scheduling priority, 0 - 19) of the threads startWorker starts: ingest's
 * background work (chunking, segment builds). 0 (the default) leaves them as the main thread;
 * a server sets SERVER_WORKER_NICE at its start (server/main.ts), so that on a busy machine the
 * kernel runs the event loop (requests, /ping) before the ingest's threads rather than taking
 * turns with them. On Linux a nice value is per thread (setpriority of the calling thread), so
 * only the worker's own thread is lowered; where that fails, the worker runs as before.
 */
let workerNice = 0;
export const SERVER_WORKER_NICE = 10;

/** Sets the nice value of the worker threads started from now on (0: as the main thread). */
export function setWorkerNice(nice: number): void {
  workerNice = Number.isInteger(nice) && nice > 0 ? Math.min(nice, 19) : 0;
}

/**
 * Starts a worker thread on a module, TypeScript (through tsx) or JavaScript. `background: false`
 * (the search pool's query threads) keeps the main thread's priority whatever setWorkerNice said.
 */
export function startWorker(url: URL, workerData: unknown, transferList?: TransferListItem[], resourceLimits?: ResourceLimits, how: { background?: boolean } = {}): Worker {
  const options = { workerData, transferList, ...(resourceLimits ? { resourceLimits } : {}) };
  const ts = url.pathname.endsWith('.ts');
  const nice = how.background === false ? 0 : workerNice;
  if (!ts && nice === 0) return new Worker(url, options);
  // A bootstrap: the thread's priority first (before the module's imports), tsx's loader for a .ts module.
  const lowered = nice > 0 ? `try { (await import('node:os')).setPriority(${nice}); } catch {}` : '';
  const loader = ts ? `(await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})).register();` : '';
  const code = `(async () => { ${lowered} ${loader} await import(${JSON.stringify(url.href)}); })()`;
  return new Worker(code, { eval: true, ...options });
}

/** What a one-shot worker module posts once: its result, or the error's message. */
export type WorkerReply<T> = { ok: true; result: T } | { ok: false; error: string };

/**
 * Runs a one-shot worker module (it reads `workerData`, posts one WorkerReply and ends) and
 * resolves with its result; rejects with its error, or when it dies without replying.
 */
export function runWorkerTask<T>(url: URL, workerData: unknown, transferList?: TransferListItem[]): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      f();
    };
    let worker: Worker;
    try {
      worker = startWorker(url, workerData, transferList);
    } catch (e) {
      reject(e);
      return;
    }
    worker.once('message', (reply: WorkerReply<T>) => {
      settle(() => (reply.ok ? resolve(reply.result) : reject(new Error(reply.error))));
      void worker.terminate();
    });
    worker.once('error', (e) => settle(() => reject(e)));
    worker.once('exit', (code) => settle(() => reject(new Error(`the worker thread exited (code ${code}) without an answer`))));
  });
}
