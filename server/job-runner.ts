import type { Kernel } from '../core/kernel.ts';
import { runIngestJob } from '../core/ingest.ts';

/**
 * Runs ingest jobs one at a time, in the order they were queued (ingest is CPU-bound; running
 * two at once on a small machine only makes both slower). Jobs left queued by a previous run
 * are picked up at start.
 */
export class JobRunner {
  private queue: string[] = [];
  private running: Promise<void> | null = null;
  private readonly controller = new AbortController();

  constructor(private readonly kernel: Kernel) {}

  async resumeQueued(): Promise<void> {
    const queued = await this.kernel.store.listJobs({ state: 'queued', limit: 1000 });
    for (const j of queued.reverse()) this.enqueue(j.id);
  }

  enqueue(jobId: string): void {
    if (this.controller.signal.aborted) return;
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
          await runIngestJob(this.kernel, id, { signal: this.controller.signal });
          // A job may queue more (versions a source names): pick them up in order.
          for (const j of (await this.kernel.store.listJobs({ state: 'queued', limit: 1000 })).reverse()) {
            if (!this.queue.includes(j.id) && j.id !== id) this.queue.push(j.id);
          }
        } catch (e) {
          this.kernel.logger.error('job failed to run', { job: id, error: (e as Error).message });
        }
      }
    } finally {
      this.running = null;
    }
  }
}
