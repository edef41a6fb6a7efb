/**
 * Worker thread (core/worker-task.ts): computes a build's lexical index and writes its segment
 * file, off the server's event loop. workerData: { dir, buildId, source (a file of the build's
 * snippets, in order: a staging file or a pack, build-pack.ts), params }; replies with
 * writeSegment's result.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { computeIndexData } from '../../core/search/index-data.ts';
import type { Bm25Params } from '../../core/search/lexical-index.ts';
import type { WorkerReply } from '../../core/worker-task.ts';
import { readSnippetsFileSync } from './build-pack.ts';
import { writeSegment } from './segment.ts';

const { dir, buildId, source, params } = workerData as { dir: string; buildId: string; source: string; params: Bm25Params };
let reply: WorkerReply<Awaited<ReturnType<typeof writeSegment>>>;
try {
  const snippets = readSnippetsFileSync(source);
  reply = { ok: true, result: await writeSegment(dir, buildId, computeIndexData(snippets, params), snippets, params) };
} catch (e) {
  reply = { ok: false, error: (e as Error)?.stack ?? String(e) };
}
parentPort!.postMessage(reply);
