/** The in-memory store's job role: queue, claims, logs (core/testing/memory-store.ts). */
import { randomUUID } from 'node:crypto';
import type {
  IngestProgress,
  JobLogLine,
  JobRecord,
  JobState,
  JobStore,
  LogLevel,
} from '../../contracts.ts';
import { LOG_LEVELS, applyJobPatch, invalid, libraryNotFound } from '../../store-rules.ts';
import { MemoryRole, newestFirst, parseJson, type JobRow } from './state.ts';

/** Job log lines kept per job; older lines are dropped (as the embedded store does). */
export const MEMORY_JOB_LOG_LIMIT = 2000;

export class MemoryJobs extends MemoryRole implements JobStore {
  async createJob(input: { libraryId: string; version: string; kind: string }): Promise<JobRecord> {
    this.requireOpen();
    if (!input || typeof input.version !== 'string' || typeof input.kind !== 'string' || !input.kind) {
      throw invalid('A job needs a libraryId, a version ("" for the default) and a kind.');
    }
    if (!this.state.libraries.has(input.libraryId)) throw libraryNotFound(input.libraryId);
    const id = randomUUID();
    const job: JobRow = {
      id,
      libraryId: input.libraryId,
      version: input.version,
      kind: input.kind,
      state: 'queued',
      progress: '{}',
      error: null,
      createdAt: this.now(),
      startedAt: null,
      finishedAt: null,
      rowid: this.state.nextRowid++,
      log: [],
    };
    this.state.jobs.set(id, job);
    return toJobRecord(job);
  }

  async updateJob(
    id: string,
    patch: { state?: JobState; progress?: IngestProgress; error?: JobRecord['error'] },
  ): Promise<JobRecord> {
    this.requireOpen();
    const row = this.state.jobs.get(id);
    if (!row) throw invalid(`Job "${id}" not found.`);
    const job = toJobRecord(row);
    const { state, progress, error, startedAt, finishedAt } = applyJobPatch(job, patch, this.now());
    row.state = state;
    row.progress = JSON.stringify(progress);
    row.error = error ? JSON.stringify(error) : null;
    row.startedAt = startedAt;
    row.finishedAt = finishedAt;
    return toJobRecord(row);
  }

  async claimJob(id: string): Promise<JobRecord | null> {
    this.requireOpen();
    const row = this.state.jobs.get(id);
    if (!row || row.state !== 'queued') return null;
    row.state = 'running';
    row.startedAt ??= this.now();
    row.finishedAt = null;
    return toJobRecord(row);
  }

  async appendJobLog(id: string, level: LogLevel, message: string): Promise<void> {
    this.requireOpen();
    const job = this.state.jobs.get(id);
    if (!job) throw invalid(`Job "${id}" not found.`);
    const seq = job.log.length === 0 ? 1 : job.log[job.log.length - 1].seq + 1;
    job.log.push({ seq, at: this.now(), level: LOG_LEVELS.includes(level) ? level : 'info', message: String(message) });
    if (job.log.length > MEMORY_JOB_LOG_LIMIT) job.log.splice(0, job.log.length - MEMORY_JOB_LOG_LIMIT);
  }

  async getJob(id: string): Promise<JobRecord | null> {
    this.requireOpen();
    const job = this.state.jobs.get(id);
    return job ? toJobRecord(job) : null;
  }

  async getJobLog(id: string): Promise<JobLogLine[]> {
    this.requireOpen();
    const job = this.state.jobs.get(id);
    if (!job) throw invalid(`Job "${id}" not found.`);
    return job.log.map((l) => ({ ...l }));
  }

  async listJobs(filter: { libraryId?: string; state?: JobState; limit?: number } = {}): Promise<JobRecord[]> {
    this.requireOpen();
    let limit = Infinity;
    if (filter.limit !== undefined) {
      if (!Number.isInteger(filter.limit) || filter.limit < 0) throw invalid('limit must be a non-negative integer.');
      limit = filter.limit;
    }
    return [...this.state.jobs.values()]
      .filter((j) => (filter.libraryId === undefined || j.libraryId === filter.libraryId) && (filter.state === undefined || j.state === filter.state))
      .sort(newestFirst<JobRow>((j) => j.createdAt))
      .slice(0, limit)
      .map(toJobRecord);
  }
}

function toJobRecord(r: JobRow): JobRecord {
  return {
    id: r.id,
    libraryId: r.libraryId,
    version: r.version,
    kind: r.kind,
    state: r.state,
    progress: parseJson<IngestProgress>(r.progress, {}),
    error: parseJson<JobRecord['error']>(r.error, null),
    createdAt: r.createdAt,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
  };
}
