/** The embedded store's job role: the queue, claims and job logs (tables jobs, job_logs). */
import { randomUUID } from 'node:crypto';
import type { IngestProgress, JobLogLine, JobRecord, JobState, JobStore, LogLevel } from '../../core/contracts.ts';
import { LOG_LEVELS, applyJobPatch, invalid, libraryNotFound } from '../../core/store-rules.ts';
import type { EmbeddedCatalog } from './catalog.ts';
import { EmbeddedRole, type EmbeddedDatabase } from './database.ts';
import { all, get, num, parseJson, run, str, strOrNull, type Database, type Row } from './sqlite.ts';

/** Job log lines kept per job; older lines are dropped. */
export const JOB_LOG_LIMIT = 2000;

/** The job log line of a job that was running when the process stopped, at the next open. */
export const RESUMED_LOG_LINE = 'resumed after restart: the process stopped while this job ran; its partial build was discarded and the job queued to run again';

export class EmbeddedJobs extends EmbeddedRole implements JobStore {
  /** `catalog`: the catalog role, whose cached library records show each library's newest job. */
  constructor(
    database: EmbeddedDatabase,
    private readonly catalog: EmbeddedCatalog,
  ) {
    super(database);
  }

  async createJob(input: { libraryId: string; version: string; kind: string }): Promise<JobRecord> {
    const db = this.requireWritable();
    if (!input || typeof input.version !== 'string' || typeof input.kind !== 'string' || !input.kind) {
      throw invalid('A job needs a libraryId, a version ("" for the default) and a kind.');
    }
    if (!get(db, 'SELECT 1 AS x FROM libraries WHERE id = ?', [input.libraryId])) throw libraryNotFound(input.libraryId);
    const id = randomUUID();
    run(db, "INSERT INTO jobs (id, library_id, version, kind, state, progress, error, created_at) VALUES (?, ?, ?, ?, 'queued', '{}', NULL, ?)", [
      id,
      input.libraryId,
      input.version,
      input.kind,
      this.now(),
    ]);
    this.catalog.touch(input.libraryId);
    await this.persist();
    return this.jobRecord(id)!;
  }

  async updateJob(
    id: string,
    patch: { state?: JobState; progress?: IngestProgress; error?: JobRecord['error'] },
  ): Promise<JobRecord> {
    const db = this.requireWritable();
    const job = this.jobRecord(id);
    if (!job) throw invalid(`Job "${id}" not found.`);
    const { state, progress, error, startedAt, finishedAt } = applyJobPatch(job, patch, this.now());
    run(db, 'UPDATE jobs SET state = ?, progress = ?, error = ?, started_at = ?, finished_at = ? WHERE id = ?', [
      state,
      JSON.stringify(progress),
      error ? JSON.stringify(error) : null,
      startedAt,
      finishedAt,
      id,
    ]);
    this.catalog.touch(job.libraryId);
    await this.persist();
    return this.jobRecord(id)!;
  }

  async claimJob(id: string): Promise<JobRecord | null> {
    const db = this.requireWritable();
    const now = this.now();
    // One statement, guarded by the current state: of two claims, only one changes a row.
    const changed = run(db, "UPDATE jobs SET state = 'running', started_at = COALESCE(started_at, ?), finished_at = NULL WHERE id = ? AND state = 'queued'", [
      now,
      String(id),
    ]);
    if (changed === 0) return null;
    const claimed = this.jobRecord(id);
    if (claimed) this.catalog.touch(claimed.libraryId);
    await this.persist();
    return claimed;
  }

  async appendJobLog(id: string, level: LogLevel, message: string): Promise<void> {
    const db = this.requireWritable();
    if (!get(db, 'SELECT 1 AS x FROM jobs WHERE id = ?', [id])) throw invalid(`Job "${id}" not found.`);
    this.insertJobLog(db, id, level, message, this.now());
    this.markDirty(); // batched
  }

  insertJobLog(db: Database, id: string, level: LogLevel, message: string, at: string): void {
    const last = get(db, 'SELECT MAX(seq) AS seq FROM job_logs WHERE job_id = ?', [id]);
    const seq = last?.seq == null ? 1 : num(last.seq) + 1;
    run(db, 'INSERT INTO job_logs (job_id, seq, at, level, message) VALUES (?, ?, ?, ?, ?)', [
      id,
      seq,
      at,
      LOG_LEVELS.includes(level) ? level : 'info',
      String(message),
    ]);
    if (seq > JOB_LOG_LIMIT) run(db, 'DELETE FROM job_logs WHERE job_id = ? AND seq <= ?', [id, seq - JOB_LOG_LIMIT]);
  }

  async getJob(id: string): Promise<JobRecord | null> {
    this.requireDb();
    return this.jobRecord(id);
  }

  async getJobLog(id: string): Promise<JobLogLine[]> {
    const db = this.requireDb();
    if (!get(db, 'SELECT 1 AS x FROM jobs WHERE id = ?', [id])) throw invalid(`Job "${id}" not found.`);
    return all(db, 'SELECT seq, at, level, message FROM job_logs WHERE job_id = ? ORDER BY seq', [id]).map((r) => ({
      seq: num(r.seq),
      at: str(r.at),
      level: str(r.level) as LogLevel,
      message: str(r.message),
    }));
  }

  async listJobs(filter: { libraryId?: string; state?: JobState; limit?: number } = {}): Promise<JobRecord[]> {
    const db = this.requireDb();
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.libraryId !== undefined) {
      where.push('library_id = ?');
      params.push(filter.libraryId);
    }
    if (filter.state !== undefined) {
      where.push('state = ?');
      params.push(filter.state);
    }
    let limit = -1;
    if (filter.limit !== undefined) {
      if (!Number.isInteger(filter.limit) || filter.limit < 0) throw invalid('limit must be a non-negative integer.');
      limit = filter.limit;
    }
    params.push(limit);
    const sql = `SELECT * FROM jobs${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, rowid DESC LIMIT ?`;
    return all(db, sql, params).map(toJobRecord);
  }

  private jobRecord(id: string): JobRecord | null {
    const row = get(this.requireDb(), 'SELECT * FROM jobs WHERE id = ?', [id]);
    return row ? toJobRecord(row) : null;
  }
}

function toJobRecord(r: Row): JobRecord {
  return {
    id: str(r.id),
    libraryId: str(r.library_id),
    version: str(r.version),
    kind: str(r.kind),
    state: str(r.state) as JobState,
    progress: parseJson<IngestProgress>(r.progress, {}),
    error: parseJson<JobRecord['error']>(r.error, null),
    createdAt: str(r.created_at),
    startedAt: strOrNull(r.started_at),
    finishedAt: strOrNull(r.finished_at),
  };
}
