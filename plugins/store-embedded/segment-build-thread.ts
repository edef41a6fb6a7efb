/**
 * Worker thread (core/worker-task.ts): computes a build's lexical index and writes its segment
 * file, off the server's event loop. workerData: { dir, buildId, json (the build's snippets as a
 * JSON array, in order), params }; replies with writeSegment's result.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { StoredSnippet } from '../../core/contracts.ts';
import { computeIndexData } from '../../core/search/index-data.ts';
import type { Bm25Params } from '../../core/search/lexical-index.ts';
import type { WorkerReply } from '../../core/worker-task.ts';
import { writeSegment } from './segment.ts';

const { dir, buildId, json, params } = workerData as { dir: string; buildId: string; json: string; params: Bm25Params };
let reply: WorkerReply<Awaited<ReturnType<typeof writeSegment>>>;
try {
  const snippets = JSON.parse(json) as StoredSnippet[];
  reply = { ok: true, result: await writeSegment(dir, buildId, computeIndexData(snippets, params), snippets, params) };
} catch (e) {
  reply = { ok: false, error: (e as Error)?.stack ?? String(e) };
}
parentPort!.postMessage(reply);
