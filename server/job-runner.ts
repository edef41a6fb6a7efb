import { EventEmitter } from 'node:events';
import type { Kernel } from '../core/kernel.ts';
import type { IngestProgress, JobQueue, JobRecord, Store } from '../core/contracts.ts';
import { JobLeaseLost, runIngestJob } from '../core/ingest.ts';
import { sharedUploads, sweepUploads } from '../core/uploads.ts';
import { RefdeskError, isRefdeskError } from '../core/errors.ts';
import { appendJobLogLines, pruneJobLogs, type JobLogEntry } from '../core/job-log.ts';
import { queueRechunks } from '../core/rechunk.ts';
import { queueEmbeddings, removeOrphanVectors } from '../core/vectors.ts';
import type { ContextSearcher } from '../core/query.ts';

/** What a job's watchers hear (GET /api/jobs/{id}/events): its state, progress, log lines, and its end. */
export type JobEvent =
  | { type: 'state'; job: JobRecord }
  | { type: 'progress'; progress: IngestProgress; elapsedMs: number }
  | { type: 'log'; entry: JobLogEntry }
  | { type: 'end'; job: JobRecord };

const DAY_MS = 86_400_000;

/** The store's shared job queue (core/contracts.ts JobQueue), or null when it has none (the embedded store). */
export function sharedJobQueue(store: Store): JobQueue | null {
  const q = store as Partial<JobQueue>;
  const methods = ['claimNextJob', 'renewLease', 'releaseJob', 'requestCancel', 'watchJobs', 'sweepExpiredLeases', 'leaseTiming'] as const;
  return methods.every((m) => typeof q[m] === 'function') ? (store as Store & JobQueue) : null;
}

/**
 * Runs ingest jobs one at a time, in the order they were queued (ingest is CPU-bound; running
 * two at once on a small machine only makes both slower). Each job runs at most once: the store
 * claims it (queued -> running) before it runs, so a job id seen twice is run once. Jobs left
 * queued or running by a previous run (the store queues running ones again when it opens) are
 * picked up at start.
 *
 * On a store with a shared queue (JobQueue: several nodes on one PostgreSQL), the runner does not
 * keep its own list: it claims the oldest queued job of the deployment (`claimNextJob`) whenever
 * it is woken (a job queued here, a `job` change from any node, and every `pollMs`, when it also
 * sweeps expired leases), renews the job's lease every `heartbeatMs` while it runs, and stops
 * the job when the lease is lost (another node runs it now; nothing of this node's run is kept)
 * or a cancel was asked for on any node. See docs/scale-out.md, "Jobs across nodes".
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

  /** The store's shared queue (null: this runner's own list, as above). */
  private readonly shared: JobQueue | null;
  /** Shared queue: woken while claiming; claim again before stopping. */
  private wakeAgain = false;
  private pollTimer: NodeJS.Timeout | null = null;
  private unwatch: (() => void) | null = null;
  /** Shared queue: jobs running on other nodes that watchers here follow through the store. */
  private readonly remote = new Map<string, { timer: NodeJS.Timeout; lastSeq: number; state: string; progress: string; busy: boolean }>();

  /** Where a job's self-retrieval check searches (the server's search pool: createApp sets it). */
  searcher: ContextSearcher | null = null;

  constructor(private readonly kernel: Kernel) {
    this.shared = sharedJobQueue(kernel.store);
  }

  /** Listens to one job's events; returns the function that stops listening. */
  subscribe(jobId: string, listener: (e: JobEvent) => void): () => void {
    this.events.on(jobId, listener);
    this.followRemote(jobId);
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
    if (this.shared && (job.state === 'queued' || job.state === 'running')) return this.cancelShared(this.shared, job);
    if (job.state === 'queued') {
      this.cancelled.add(jobId);
      this.queue = this.queue.filter((id) => id !== jobId);
      const ended = await this.kernel.store.updateJob(jobId, { state: 'failed', error: { code: 'cancelled', message: 'Cancelled by an admin before it ran.' } });
      await this.kernel.store.appendJobLog(jobId, 'warn', CANCELLED_QUEUED_LINE);
      return this.cancelledQueued(ended);
    }
    if (job.state === 'running') {
      throw new RefdeskError('library_busy', `Job ${job.id} is running in another process (a refdesk add writing this data directory); it cannot be cancelled from here.`);
    }
    return job;
  }

  /** The end of a job cancelled before it ran: its log line in the job's file and the events. */
  private async cancelledQueued(ended: JobRecord): Promise<JobRecord> {
    for (const entry of await appendJobLogLines(this.kernel.env.dataDir, ended.id, [{ level: 'warn', stage: 'cancelled', message: CANCELLED_QUEUED_LINE }])) {
      this.emit(ended.id, { type: 'log', entry });
    }
    this.emit(ended.id, { type: 'end', job: ended });
    return ended;
  }

  /**
   * Cancel on a shared queue: a queued job ends at once (whichever node would have run it); a
   * job running on another node is asked to stop, and this waits until its node has stopped it
   * (its next heartbeat), or its lease has expired and the sweep ended it.
   */
  private async cancelShared(queue: JobQueue, job: JobRecord): Promise<JobRecord> {
    const after = await queue.requestCancel(job.id);
    if (!after) throw new RefdeskError('not_found', `Unknown job "${job.id.slice(0, 100)}"; list jobs with GET /api/jobs.`);
    if (job.state === 'queued' && after.state === 'failed' && after.error?.code === 'cancelled') return this.cancelledQueued(after);
    if (after.state !== 'running') return after;
    // Claimed here meanwhile: stop it as a local job.
    if (this.current?.id === job.id) return this.cancel(job.id);
    const { leaseMs, heartbeatMs, pollMs } = queue.leaseTiming();
    const deadline = Date.now() + leaseMs + 2 * heartbeatMs + pollMs;
    let wake: () => void = () => {};
    const unwatch = queue.watchJobs((id) => id === job.id && wake());
    try {
      while (Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.min(pollMs, heartbeatMs)).unref();
        });
        const now = await this.kernel.store.getJob(job.id);
        if (!now || now.state !== 'running') return now ?? after;
        if (Date.now() >= deadline - pollMs) await queue.sweepExpiredLeases().catch(() => 0);
      }
    } finally {
      unwatch();
    }
    throw new RefdeskError('library_busy', `Job ${job.id} runs on another node, which has not stopped it yet: it stops at that node's next heartbeat, or when its lease expires; its state shows when it has.`);
  }

  /**
   * Shared queue: a job that runs (or will run) on another node has no events here; a watcher of
   * it (GET /api/jobs/{id}/events) gets them from the store instead: its state, its log lines as
   * the store holds them (no stage, no per-document lines: those stay in the running node's job
   * log file), its progress as the running node records it in the job's row (core/ingest.ts
   * writes it at most about once a second, so this adds no write: the same read of the row that
   * gives the state gives it), and its end, looked up every pollMs and on every `job` change. A
   * progress event is sent when the recorded progress changed, and once more before the end when
   * the job's last progress differs from the last one sent.
   */
  private followRemote(jobId: string): void {
    const queue = this.shared;
    if (!queue || this.remote.has(jobId) || this.controller.signal.aborted) return;
    const follow = { timer: null as unknown as NodeJS.Timeout, lastSeq: -1, state: '', progress: '{}', busy: false };
    const stop = () => {
      clearInterval(follow.timer);
      unwatch();
      this.remote.delete(jobId);
    };
    const look = async () => {
      if (follow.busy) return;
      if (this.events.listenerCount(jobId) === 0 || this.controller.signal.aborted) return stop();
      // Running here: the local run emits its own events.
      if (this.current?.id === jobId) return;
      follow.busy = true;
      try {
        const job = await this.kernel.store.getJob(jobId);
        if (!job) return stop();
        const lines = await this.kernel.store.getJobLog(jobId);
        // The lines written before the watcher came were sent by the route (jobLogLines).
        if (follow.lastSeq < 0) follow.lastSeq = lines.length ? lines[lines.length - 1].seq : 0;
        for (const l of lines) {
          if (l.seq <= follow.lastSeq) continue;
          follow.lastSeq = l.seq;
          this.emit(jobId, { type: 'log', entry: { seq: l.seq, at: l.at, level: l.level, stage: '', message: l.message } });
        }
        const ended = job.state !== 'queued' && job.state !== 'running';
        if (job.state !== follow.state && !ended) {
          follow.state = job.state;
          this.emit(jobId, { type: 'state', job });
        }
        const progress = JSON.stringify(job.progress ?? {});
        if (progress !== follow.progress && job.state !== 'queued') {
          follow.progress = progress;
          const startedAt = job.startedAt ? Date.parse(job.startedAt) : NaN;
          const until = ended && job.finishedAt ? Date.parse(job.finishedAt) : Date.now();
          this.emit(jobId, { type: 'progress', progress: { ...job.progress }, elapsedMs: Number.isFinite(startedAt) ? Math.max(0, until - startedAt) : 0 });
        }
        if (ended) {
          follow.state = job.state;
          this.emit(jobId, { type: 'end', job });
          stop();
        }
      } catch (e) {
        this.kernel.logger.debug('could not follow a job of another node', { job: jobId, error: (e as Error).message });
      } finally {
        follow.busy = false;
      }
    };
    const unwatch = queue.watchJobs((id) => id === jobId && void look());
    follow.timer = setInterval(() => void look(), queue.leaseTiming().pollMs);
    follow.timer.unref();
    this.remote.set(jobId, follow);
    void look();
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
      // Shared uploads: copies this node fetched or received for jobs that ended on other nodes.
      if (sharedUploads(this.kernel.store) && this.pruneTimer) {
        sweepUploads(this.kernel, new Date(Date.now() - DAY_MS / 24)).catch((e: unknown) => this.kernel.logger.warn('could not sweep the uploads folder', { error: (e as Error).message }));
      }
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
    if (this.shared) {
      this.startShared(this.shared);
    } else {
      const queued = await this.kernel.store.listJobs({ state: 'queued' });
      for (const j of queued.reverse()) this.enqueue(j.id);
      if (queued.length > 0) this.kernel.logger.info('resuming queued jobs', { jobs: queued.length });
    }
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
    if (this.controller.signal.aborted) return;
    // Shared queue: the job is in the database already; whichever node claims it first runs it.
    if (this.shared) return this.wake(this.shared);
    if (this.queue.includes(jobId) || this.cancelled.has(jobId)) return;
    this.queue.push(jobId);
    this.running ??= this.drain();
  }

  /** Shared queue: looks for work now, and every pollMs (sweeping expired leases first); and on every job change. */
  private startShared(queue: JobQueue): void {
    if (this.pollTimer || this.controller.signal.aborted) return;
    this.unwatch = queue.watchJobs(() => this.wake(queue));
    const poll = () => {
      queue.sweepExpiredLeases().then(
        (n) => n > 0 && this.kernel.logger.info('jobs of a stopped node queued again', { jobs: n }),
        (e: unknown) => this.kernel.logger.warn('could not sweep expired job leases', { error: (e as Error).message }),
      ).finally(() => this.wake(queue));
    };
    this.pollTimer = setInterval(poll, queue.leaseTiming().pollMs);
    this.pollTimer.unref();
    poll();
  }

  private wake(queue: JobQueue): void {
    if (this.controller.signal.aborted) return;
    if (this.running) this.wakeAgain = true;
    else this.running = this.drainShared(queue);
  }

  /** Shared queue: claims and runs the oldest queued job until none is left. */
  private async drainShared(queue: JobQueue): Promise<void> {
    try {
      while (!this.controller.signal.aborted) {
        this.wakeAgain = false;
        let job: JobRecord | null;
        try {
          job = await queue.claimNextJob();
        } catch (e) {
          this.kernel.logger.warn('could not claim a job', { error: (e as Error).message });
          return;
        }
        if (!job) {
          if (this.wakeAgain) continue;
          return;
        }
        await this.runClaimed(queue, job);
      }
    } finally {
      this.running = null;
    }
  }

  /** Runs a job this node claimed from the shared queue, renewing its lease while it runs. */
  private async runClaimed(queue: JobQueue, job: JobRecord): Promise<void> {
    const lease = new AbortController();
    let cancel!: AbortController;
    let renewing = false;
    const heartbeat = setInterval(() => {
      if (renewing) return;
      renewing = true;
      queue.renewLease(job.id).then(
        (r) => {
          if (!r.held && !lease.signal.aborted) {
            this.kernel.logger.warn('job stopped: this node lost its lease (another node runs it now); nothing of this run is kept', { job: job.id });
            lease.abort(new JobLeaseLost(`job ${job.id}: this node lost its lease`));
          } else if (r.cancelRequested && !cancel.signal.aborted) {
            this.kernel.logger.info('job cancelled from another node', { job: job.id });
            cancel.abort();
          }
        },
        // A database that does not answer: the lease may run out; the fence keeps the result safe.
        (e: unknown) => this.kernel.logger.warn('could not renew a job lease', { job: job.id, error: (e as Error).message }),
      ).finally(() => (renewing = false));
    }, queue.leaseTiming().heartbeatMs);
    try {
      await this.runOne(job.id, {
        claimed: job,
        signal: AbortSignal.any([this.controller.signal, lease.signal]),
        cancelController: (c) => (cancel = c),
      });
    } catch (e) {
      if (lease.signal.aborted) this.kernel.logger.info('job left to the node that took it over', { job: job.id });
      else this.kernel.logger.error('job failed to run', { job: job.id, error: (e as Error).message });
    } finally {
      clearInterval(heartbeat);
      // Still held after an unexpected failure: back to the queue for any node (a no-op once it ended).
      await queue.releaseJob(job.id).catch(() => {});
    }
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
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = null;
    this.unwatch?.();
    this.unwatch = null;
    for (const follow of this.remote.values()) clearInterval(follow.timer);
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
          await this.runOne(id, { signal: this.controller.signal });
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

  /** Runs one job here (claiming it, unless `claimed`), with its events, its cancel and its recent log lines. */
  private async runOne(id: string, opts: { signal: AbortSignal; claimed?: JobRecord; cancelController?: (c: AbortController) => void }): Promise<void> {
    const cancel = new AbortController();
    opts.cancelController?.(cancel);
    let finished!: () => void;
    this.current = { id, cancel, done: new Promise<void>((r) => (finished = r)) };
    const recent = (this.recent = { id, entries: [] as JobLogEntry[] });
    try {
      const record = await runIngestJob(this.kernel, id, {
        signal: opts.signal,
        cancel: cancel.signal,
        ...(opts.claimed ? { claimed: opts.claimed } : {}),
        ...(this.searcher ? { searcher: this.searcher } : {}),
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
  }
}

const CANCELLED_QUEUED_LINE = 'cancelled by an admin before it ran';
