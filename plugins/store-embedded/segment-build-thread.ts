/**
 * Worker thread (core/worker-task.ts): computes a build's lexical index and writes its segment
 * file, off the server's event loop, streamed from the file (segment-build.ts
 * writeSegmentFromFile). workerData: { dir, buildId, source (a file of the build's snippets, in
 * order: a staging file or a pack, build-pack.ts), params }; replies with writeSegment's result.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Bm25Params } from '../../core/search/lexical-index.ts';
import type { WorkerReply } from '../../core/worker-task.ts';
import type { writeSegment } from './segment.ts';
import { writeSegmentFromFile } from './segment-build.ts';

const { dir, buildId, source, params } = workerData as { dir: string; buildId: string; source: string; params: Bm25Params };
let reply: WorkerReply<Awaited<ReturnType<typeof writeSegment>>>;
try {
  // Streamed: the file is read twice (index, then the snippet records), never held (issue 17).
  reply = { ok: true, result: await writeSegmentFromFile(dir, buildId, source, params) };
} catch (e) {
  reply = { ok: false, error: (e as Error)?.stack ?? String(e) };
}
parentPort!.postMessage(reply);
