/**
 * Computing and writing a finalized build's index segment from a file of its snippets (a
 * staging file or a pack: build-pack.ts), in a worker thread (segment-build-thread.ts) for a
 * large build and on the main thread for a small one or when no worker can start. Shared by the
 * embedded store (into `<dataDir>/segments`) and the PostgreSQL store (into its local segment
 * cache, before the file goes to the database).
 */
import type { Logger, StoredSnippet } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { computeIndexDataStreamed } from '../../core/search/index-data.ts';
import { DEFAULT_BM25, type Bm25Params } from '../../core/search/lexical-index.ts';
import { runWorkerTask, workerUrl } from '../../core/worker-task.ts';
import { eachSnippetInFileSync, PackError } from './build-pack.ts';
import { writeSegment, writeSegmentStreamed } from './segment.ts';

/** Builds of at most this many snippets get their segment computed on the main thread (see writeSegmentOffThread). */
export const MAIN_THREAD_SNIPPETS = 300;

export type WrittenSegment = Awaited<ReturnType<typeof writeSegment>>;

/** Where segments were computed: counts for tests and reports. */
export interface SegmentBuildCounts {
  workerThread: number;
  mainThread: number;
}

/**
 * Computes and writes a build's segment into `dir` in a worker thread from a file of its
 * snippets (a staging file or a pack: build-pack.ts); here when no worker can start, or when
 * the build has at most `mainThreadSnippets` snippets.
 */
export async function writeSegmentOffThread(
  dir: string,
  buildId: string,
  source: string,
  snippets: number,
  logger: Logger,
  counts: SegmentBuildCounts,
  mainThreadSnippets = MAIN_THREAD_SNIPPETS,
): Promise<WrittenSegment> {
  // A small build's index takes a few milliseconds: less than starting a worker thread (0.5 - 1 s
  // under tsx at load 15), which made every finalize of a catalog of small libraries slow.
  if (snippets <= mainThreadSnippets) return writeSegmentHere(dir, buildId, source, counts);
  try {
    const written = await runWorkerTask<WrittenSegment>(workerUrl(import.meta.url, './segment-build-thread'), {
      dir,
      buildId,
      source,
      params: DEFAULT_BM25,
    });
    counts.workerThread++;
    return written;
  } catch (err) {
    if (err instanceof PackError) throw err;
    if ((err as NodeJS.ErrnoException)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      // The main thread has no more memory than the worker had: trying there would take the process down.
      logger.error('store: the index segment of a build ran out of memory in its worker thread', { buildId, snippets });
      throw new RefdeskError(
        'too_large',
        `The index of build ${buildId} (${snippets} snippets) does not fit in the worker thread's memory; raise the heap limit (NODE_OPTIONS=--max-old-space-size=...) or split the library.`,
        { cause: err },
      );
    }
    logger.warn('store: the index segment could not be built in a worker thread; building it on the main thread', { buildId, error: String(err) });
    return writeSegmentHere(dir, buildId, source, counts);
  }
}

function writeSegmentHere(dir: string, buildId: string, source: string, counts: SegmentBuildCounts): Promise<WrittenSegment> {
  counts.mainThread++;
  return writeSegmentFromFile(dir, buildId, source, DEFAULT_BM25);
}

/**
 * Computes and writes a build's segment from a file of its snippets without holding them (issue
 * 17): the index is computed in one pass over the file (computeIndexDataStreamed: term numbers in
 * typed arrays, one section's snippets at a time), and the segment written by a second pass
 * that writes the snippet records in place (writeSegmentStreamed). The same file, byte for
 * byte, as writeSegment(computeIndexData(snippets), snippets) of the file's snippets.
 */
export function writeSegmentFromFile(dir: string, buildId: string, source: string, params: Bm25Params): Promise<WrittenSegment> {
  const data = computeIndexDataStreamed((visit) => eachSnippetInFileSync(source, visit), params);
  // A staging file may be appended to meanwhile (the finalize then refuses the build, builds.ts):
  // the records are those of the snippets the index was computed from.
  return writeSegmentStreamed(dir, buildId, data, (visit: (s: StoredSnippet) => void) => eachSnippetInFileSync(source, visit, data.ids.length), params);
}
