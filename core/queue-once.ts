/**
 * Queueing the jobs every node may find to do when it starts (re-chunking: core/rechunk.ts;
 * embeddings: core/vectors.ts). Several nodes on one shared store start together and each sees
 * the same work: the store's `createJobOnce` queues it once for all of them (issue 24).
 */
import type { JobRecord, JobStore } from './contracts.ts';

/**
 * Queues a job for a library version unless one of that version is queued or running: through
 * the store's `createJobOnce` when it has one (atomic across nodes), else `createJob` (one
 * process, whose caller has checked the pending jobs). Null when another job got there first.
 */
export function queueJobOnce(store: JobStore, input: { libraryId: string; version: string; kind: string }): Promise<JobRecord | null> {
  return store.createJobOnce ? store.createJobOnce(input) : store.createJob(input);
}
