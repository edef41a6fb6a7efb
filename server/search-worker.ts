/**
 * A search worker (worker_threads), started by server/search-pool.ts: opens index segment files
 * itself (checked as the store checks them), keeps them in its own LRU within its share of the
 * memory budget, and answers one search at a time: the hits, or the assembled answer when the
 * main thread has no reranker to run on the hits. Imports only the search code, the segment
 * reader and context assembly (not the kernel), so it starts in a fraction of the server's time.
 *
 * Messages in:  {id, buildId, path, checksum, query, limit, budget, encode}
 *               (budget null: hits wanted; encode 'txt' | 'json': the answer's bytes wanted)
 * Messages out: {ready: true} once, then per search
 *               {id, ok: true, hits} | {id, ok: true, snippets} | {id, ok: true, encoded, totalTokens}
 *               | {id, ok: false, segment, message}
 * An encoded answer's bytes are transferred, not copied; an empty answer comes back as
 * `snippets: []` (its text names the library, which the main thread formats).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SearchHit } from '../core/contracts.ts';
import type { ContextSnippet } from '../core/context-assembly.ts';
import { encodeContextAnswer, type ContextFormat } from '../core/context-format.ts';
import { DEFAULT_BM25 } from '../core/search/lexical-index.ts';
import { SegmentError, assembleFromSegment, openSegment, searchServedSegment, type ServedSegment } from '../plugins/store-embedded/segment.ts';
import { SegmentCache } from '../plugins/store-embedded/segment-cache.ts';

export interface SearchWorkerData {
  cacheBytes: number;
  cacheCount: number;
  /** Honour the test queries (server/search-pool.ts TEST_QUERIES). */
  testHooks: boolean;
}

export interface SearchRequest {
  id: number;
  buildId: string;
  path: string;
  checksum: string | null;
  query: string;
  limit: number;
  budget: number | null;
  /** With a budget: return the answer encoded in this format (not its snippets), when not empty. */
  encode: ContextFormat | null;
}

export type SearchReply = (
  | { id: number; ok: true; hits: SearchHit[] }
  | { id: number; ok: true; snippets: ContextSnippet[] }
  | { id: number; ok: true; encoded: Uint8Array; totalTokens: number }
  | { id: number; ok: false; segment: boolean; message: string }
) & {
  /** Milliseconds the worker spent on the request (open, search, reads, assembly). */
  workMs: number;
};

const port = parentPort;
if (!port) throw new Error('server/search-worker.ts runs as a worker thread (server/search-pool.ts starts it).');
const options = workerData as SearchWorkerData;
const cache = new SegmentCache(options.cacheBytes, options.cacheCount);
/** The checksum each open segment was opened with: a rebuilt file (same build) is opened again. */
const opened = new Map<string, string | null>();

function segmentFor(req: SearchRequest): ServedSegment {
  const open = cache.get(req.buildId);
  if (open && opened.get(req.buildId) === req.checksum) return open;
  if (open) cache.delete(req.buildId);
  const segment = openSegment(req.path, req.buildId, DEFAULT_BM25, req.checksum);
  cache.set(segment);
  opened.set(req.buildId, req.checksum);
  for (const id of opened.keys()) if (!cache.has(id)) opened.delete(id);
  return segment;
}

function testHook(query: string): void {
  if (!options.testHooks) return;
  const busy = /^__refdesk_test_busy__ (\d+)/.exec(query);
  if (busy) {
    const until = Date.now() + Number(busy[1]);
    while (Date.now() < until) {
      // A query that keeps this thread busy, as a pathological one would.
    }
  }
  if (query.startsWith('__refdesk_test_crash__')) process.exit(70);
}

port.on('message', (req: SearchRequest) => {
  const t0 = performance.now();
  let reply: DistributiveOmit<SearchReply, 'workMs'>;
  try {
    testHook(req.query);
    const segment = segmentFor(req);
    if (req.budget === null) reply = { id: req.id, ok: true, hits: searchServedSegment(segment, req.query, req.limit) };
    else {
      const snippets = assembleFromSegment(segment, req.query, req.limit, req.budget);
      reply =
        req.encode && snippets.length > 0
          ? { id: req.id, ok: true, encoded: encodeContextAnswer(snippets, req.encode), totalTokens: snippets.reduce((n, s) => n + s.tokens, 0) }
          : { id: req.id, ok: true, snippets };
    }
  } catch (err) {
    if (err instanceof SegmentError) cache.delete(req.buildId);
    reply = { id: req.id, ok: false, segment: err instanceof SegmentError, message: (err as Error).message };
  }
  // An encoded answer's buffer is moved to the main thread, not copied (it is its own ArrayBuffer).
  port.postMessage({ ...reply, workMs: performance.now() - t0 }, 'encoded' in reply ? [reply.encoded.buffer as ArrayBuffer] : []);
});

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
port.postMessage({ ready: true });
