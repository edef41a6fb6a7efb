import { EventEmitter } from 'node:events';
import type { Kernel } from '../core/kernel.ts';
import type { IngestProgress, JobRecord } from '../core/contracts.ts';
import { runIngestJob } from '../core/ingest.ts';
import { sweepUploads } from '../core/uploads.ts';
import { RefdeskError, isRefdeskError } from '../core/errors.ts';
import { appendJobLogLines, pruneJobLogs, type JobLogEntry } from '../core/job-log.ts';
import { queueRechunks } from '../core/rechunk.ts';
import { queueEmbeddings, removeOrphanVectors } from '../core/vectors.ts';

/** What a job's watchers hear (GET /api/jobs/{id}/events): its state, progress, log lines, and its end. */
export type JobEvent =
  | { type: 'state'; job: JobRecord }
  | { type: 'progress'; progress: IngestProgress; elapsedMs: number }
  | { type: 'log'; entry: JobLogEntry }
  | { type: 'end'; job: JobRecord };

const DAY_MS = 86_400_000;

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
  /** The job this runner runs now and how to cancel it. */
  private current: { id: string; cancel: AbortController; done: Promise<void> } | null = null;
  /** Jobs cancelled while queued: never run, even when seen queued again. */
  private readonly cancelled = new Set<string>();
  private readonly events = new EventEmitter().setMaxListeners(0);
  private pruneTimer: NodeJS.Timeout | null = null;
  /** The log lines of the running job as they were written (the file is appended in batches). */
  private recent: { id: string; entries: JobLogEntry[] } | null = null;

  constructor(private readonly kernel: Kernel) {}

  /** Listens to one job's events; returns the function that stops listening. */
  subscribe(jobId: string, listener: (e: JobEvent) => void): () => void {
    this.events.on(jobId, listener);
    return () => void this.events.off(jobId, listener);
  }

  /** How many listeners a job has (0 once every watcher has gone). */
  listenerCount(jobId: string): number {
    return this.events.listenerCount(jobId);
  }

  /** Log lines the running job wrote (possibly not on disk yet); [] for any other job. */
  recentLog(jobId: string): JobLogEntry[] {
    return this.recent?.id === jobId ? [...this.recent.entries] : [];
  }

  private emit(jobId: string, e: JobEvent): void {
    this.events.emit(jobId, e);
  }

  /**
   * Cancels a job: a queued one never runs; a running one is stopped (its staged build is
   * discarded, so the served version stays as it was). Both end `failed` with error code
   * `cancelled`. A job that has already ended is returned as it is. 404 for an unknown job.
   */
  async cancel(jobId: string): Promise<JobRecord> {
    const job = await this.kernel.store.getJob(jobId);
    if (!job) throw new RefdeskError('not_found', `Unknown job "${jobId.slice(0, 100)}"; list jobs with GET /api/jobs.`);
    if (this.current?.id === jobId) {
      const { cancel, done } = this.current;
      cancel.abort();
      await done;
      return (await this.kernel.store.getJob(jobId)) ?? job;
    }
    if (job.state === 'queued') {
      this.cancelled.add(jobId);
      this.queue = this.queue.filter((id) => id !== jobId);
      const ended = await this.kernel.store.updateJob(jobId, { state: 'failed', error: { code: 'cancelled', message: 'Cancelled by an admin before it ran.' } });
      const message = 'cancelled by an admin before it ran';
      await this.kernel.store.appendJobLog(jobId, 'warn', message);
      for (const entry of await appendJobLogLines(this.kernel.env.dataDir, jobId, [{ level: 'warn', stage: 'cancelled', message }])) this.emit(jobId, { type: 'log', entry });
      this.emit(jobId, { type: 'end', job: ended });
      return ended;
    }
    if (job.state === 'running') {
      throw new RefdeskError('library_busy', `Job ${job.id} is running in another process (a refdesk add writing this data directory); it cannot be cancelled from here.`);
    }
    return job;
  }

  /** Removes job logs older than the retention (config `jobs.logRetentionDays`) now and once a day. */
  private startPruning(): void {
    if (this.pruneTimer || this.controller.signal.aborted) return;
    const prune = () => {
      const days = this.kernel.config.jobs?.logRetentionDays ?? 30;
      pruneJobLogs(this.kernel.env.dataDir, days).then(
        (n) => n > 0 && this.kernel.logger.info('removed old job logs', { files: n, retentionDays: days }),
        (e: unknown) => this.kernel.logger.warn('could not prune job logs', { error: (e as Error).message }),
      );
    };
    prune();
    this.pruneTimer = setInterval(prune, DAY_MS).unref();
  }

  /**
   * At start: queues a rechunk job for each version chunked with another configuration (core/rechunk.ts),
   * queues every job the store holds as queued (oldest first) and removes raw uploads
   * that no such job needs (those older than `startedAt`, so that uploads being received stay).
   */
  async resumeQueued(startedAt: Date = new Date()): Promise<void> {
    this.startPruning();
    // A changed chunking configuration: libraries are re-chunked from their stored documents.
    await queueRechunks(this.kernel).catch((e: unknown) => this.kernel.logger.warn('could not queue re-chunking jobs', { error: (e as Error).message }));
    // Versions without vectors of the configured embedder (turned on or changed while stopped) get embed jobs.
    await removeOrphanVectors(this.kernel).catch((e: unknown) => this.kernel.logger.warn('could not remove unused vectors', { error: (e as Error).message }));
    await queueEmbeddings(this.kernel).catch((e: unknown) => this.kernel.logger.warn('could not queue embedding jobs', { error: (e as Error).message }));
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

  /**
   * After a change of the provider settings: the clients are made again, and every version
   * without vectors of the (new) embedder gets an `embed` job (core/vectors.ts queueEmbeddings).
   */
  async providersChanged(): Promise<string[]> {
    this.kernel.providers?.invalidate();
    const ids = await queueEmbeddings(this.kernel);
    for (const id of ids) this.enqueue(id);
    return ids;
  }

  enqueue(jobId: string): void {
    if (this.controller.signal.aborted || this.queue.includes(jobId) || this.cancelled.has(jobId)) return;
    this.queue.push(jobId);
    this.running ??= this.drain();
  }

  /** False once stopped (shutdown): no job will run any more. For /api/ready. */
  alive(): boolean {
    return !this.controller.signal.aborted;
  }

  /** Resolves when the queue is empty (used by tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.controller.abort();
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.pruneTimer = null;
    this.queue = [];
    await this.idle();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.controller.signal.aborted) {
        const id = this.queue.shift()!;
        try {
          // Not queued any more (run already, or deleted): runIngestJob returns without running it.
          if (this.cancelled.has(id)) continue;
          const cancel = new AbortController();
          let finished!: () => void;
          this.current = { id, cancel, done: new Promise<void>((r) => (finished = r)) };
          const recent = (this.recent = { id, entries: [] as JobLogEntry[] });
          try {
            const record = await runIngestJob(this.kernel, id, {
              signal: this.controller.signal,
              cancel: cancel.signal,
              onStart: (job) => this.emit(id, { type: 'state', job }),
              onLog: (entry) => {
                recent.entries.push(entry);
                if (recent.entries.length > 2000) recent.entries.splice(0, 1000);
                this.emit(id, { type: 'log', entry });
              },
              onProgress: ({ elapsedMs, ...progress }) => this.emit(id, { type: 'progress', progress, elapsedMs }),
            });
            this.emit(id, record.state === 'queued' || record.state === 'running' ? { type: 'state', job: record } : { type: 'end', job: record });
          } finally {
            this.current = null;
            this.recent = null;
            finished();
          }
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
