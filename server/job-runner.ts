import type { Kernel } from '../core/kernel.ts';
import { runIngestJob } from '../core/ingest.ts';
import { sweepUploads } from '../core/uploads.ts';
import { queueRechunks } from '../core/rechunk.ts';
import { isRefdeskError } from '../core/errors.ts';

/**
 * Runs ingest jobs one at a time, in the order they were queued (ingest is CPU-bound; running
 * two at once on a small machine only makes both slower). Each job runs at most once: the store
 * claims it (queued -> running) before it runs, so a job id seen twice is run once. Jobs left
 * queued or running by a previous run (the store queues running ones again when it opens) are
 * picked up at start.
 */
export class JobRunner {
  private queue: string[] = [];
  private running: Promise<void> | null = null;
  private readonly controller = new AbortController();

  constructor(private readonly kernel: Kernel) {}

  /**
   * At start: queues a rechunk job for each version chunked with another configuration (core/rechunk.ts),
   * queues every job the store holds as queued (oldest first) and removes raw uploads
   * that no such job needs (those older than `startedAt`, so that uploads being received stay).
   */
  async resumeQueued(startedAt: Date = new Date()): Promise<void> {
    // A changed chunking configuration: libraries are re-chunked from their stored documents.
    await queueRechunks(this.kernel).catch((e: unknown) => this.kernel.logger.warn('could not queue re-chunking jobs', { error: (e as Error).message }));
    const queued = await this.kernel.store.listJobs({ state: 'queued' });
    for (const j of queued.reverse()) this.enqueue(j.id);
    if (queued.length > 0) this.kernel.logger.info('resuming queued jobs', { jobs: queued.length });
    try {
      const removed = await sweepUploads(this.kernel, startedAt);
      if (removed.length > 0) this.kernel.logger.info('removed raw uploads no job needs', { files: removed.length });
    } catch (e) {
      this.kernel.logger.warn('could not sweep the uploads folder', { error: (e as Error).message });
    }
  }

  enqueue(jobId: string): void {
    if (this.controller.signal.aborted || this.queue.includes(jobId)) return;
    this.queue.push(jobId);
    this.running ??= this.drain();
  }

  /** Resolves when the queue is empty (used by tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.controller.abort();
    this.queue = [];
    await this.idle();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.controller.signal.aborted) {
        const id = this.queue.shift()!;
        try {
          // Not queued any more (run already, or deleted): runIngestJob returns without running it.
          await runIngestJob(this.kernel, id, { signal: this.controller.signal });
          // A job may queue more (versions a source names): pick them up in order.
          for (const j of (await this.kernel.store.listJobs({ state: 'queued', limit: 1000 })).reverse()) this.enqueue(j.id);
        } catch (e) {
          // A job deleted with its library while it waited here is unknown now: nothing to run.
          if (isRefdeskError(e) && e.code === 'invalid_request') this.kernel.logger.info('job not run: it no longer exists', { job: id });
          else this.kernel.logger.error('job failed to run', { job: id, error: (e as Error).message });
        }
      }
    } finally {
      this.running = null;
    }
  }
}
