/**
 * The jobs role on PostgreSQL: the job queue and job logs (tables jobs, job_logs), mirroring
 * plugins/store-embedded/jobs.ts. A claim is one guarded UPDATE (queued -> running), so of any
 * number of claims on any number of nodes exactly one wins. Leases, heartbeats, takeover of a
 * dead node's job and cancel from any node come on top of this (issue 24, pgjobs).
 */
import { randomUUID } from 'node:crypto';
import type { IngestProgress, JobLogLine, JobRecord, JobState, JobStore, LogLevel } from '../../core/contracts.ts';
import { LOG_LEVELS, applyJobPatch, invalid, libraryNotFound } from '../../core/store-rules.ts';
import type { PgCatalog } from './catalog.ts';
import { PgRole, type PgDatabase } from './database.ts';
import { iso, num, str, toJobRecord } from './rows.ts';

/** Job log lines kept per job; older lines are dropped (as the embedded store's JOB_LOG_LIMIT). */
export const JOB_LOG_LIMIT = 2000;

export class PgJobs extends PgRole implements JobStore {
  constructor(
    database: PgDatabase,
    protected readonly catalog: PgCatalog,
  ) {
    super(database);
  }

  /** Run by PostgresStore.open(): what happens to jobs whose node died (leases), builds left unfinished. */
  async recover(): Promise<void> {}

  async createJob(input: { libraryId: string; version: string; kind: string }): Promise<JobRecord> {
    if (!input || typeof input.version !== 'string' || typeof input.kind !== 'string' || !input.kind) {
      throw invalid('A job needs a libraryId, a version ("" for the default) and a kind.');
    }
    const [row] = await this.query(
      `INSERT INTO jobs (id, library_id, version, kind, state, progress, error, created_at)
       SELECT $1, l.id, $3, $4, 'queued', '{}', NULL, $5 FROM libraries l WHERE l.id = $2
       RETURNING *`,
      [randomUUID(), String(input.libraryId), input.version, input.kind, this.now()],
    );
    if (!row) throw libraryNotFound(input.libraryId);
    await this.catalog.changed(input.libraryId);
    return toJobRecord(row);
  }

  async updateJob(id: string, patch: { state?: JobState; progress?: IngestProgress; error?: JobRecord['error'] }): Promise<JobRecord> {
    const { record, before } = await this.tx(async (c) => {
      const [row] = (await c.query('SELECT * FROM jobs WHERE id = $1 FOR UPDATE', [String(id)])).rows;
      if (!row) throw invalid(`Job "${id}" not found.`);
      const job = toJobRecord(row);
      const next = applyJobPatch(job, patch, this.now());
      const [updated] = (
        await c.query('UPDATE jobs SET state = $2, progress = $3::jsonb, error = $4::jsonb, started_at = $5, finished_at = $6 WHERE id = $1 RETURNING *', [
          id,
          next.state,
          JSON.stringify(next.progress),
          next.error ? JSON.stringify(next.error) : null,
          next.startedAt,
          next.finishedAt,
        ])
      ).rows;
      return { record: toJobRecord(updated), before: job };
    });
    // Progress alone does not change the library's record; a state change does.
    if (record.state !== before.state) await this.catalog.changed(record.libraryId);
    return record;
  }

  async claimJob(id: string): Promise<JobRecord | null> {
    // One statement, guarded by the current state: of any number of claims, only one changes the row.
    const [row] = await this.query(
      `UPDATE jobs SET state = 'running', started_at = COALESCE(started_at, $2), finished_at = NULL, claimed_by = $3, attempts = attempts + 1
       WHERE id = $1 AND state = 'queued' RETURNING *`,
      [String(id), this.now(), this.database.nodeId],
    );
    if (!row) return null;
    const claimed = toJobRecord(row);
    await this.catalog.changed(claimed.libraryId);
    return claimed;
  }

  async appendJobLog(id: string, level: LogLevel, message: string): Promise<void> {
    const params = [String(id), this.now(), LOG_LEVELS.includes(level) ? level : 'info', String(message), JOB_LOG_LIMIT];
    // The next seq of the job, and the lines beyond the limit dropped, in one statement. Two
    // appends to one job at once may pick the same seq: the loser retries.
    for (let attempt = 0; ; attempt++) {
      try {
        const rows = await this.tx(async (c) =>
          (
            await c.query(
              `WITH ins AS (
                 INSERT INTO job_logs (job_id, seq, at, level, message)
                 SELECT j.id, COALESCE((SELECT MAX(seq) FROM job_logs WHERE job_id = j.id), 0) + 1, $2, $3, $4 FROM jobs j WHERE j.id = $1
                 RETURNING seq),
               trimmed AS (DELETE FROM job_logs WHERE job_id = $1 AND seq <= (SELECT seq FROM ins) - $5)
               SELECT seq FROM ins`,
              params,
            )
          ).rows,
        );
        if (rows.length === 0) throw invalid(`Job "${id}" not found.`);
        return;
      } catch (e) {
        if (attempt < 5 && isUniqueViolation(e)) continue;
        throw e;
      }
    }
  }

  async getJob(id: string): Promise<JobRecord | null> {
    const [row] = await this.query('SELECT * FROM jobs WHERE id = $1', [String(id)]);
    return row ? toJobRecord(row) : null;
  }

  async getJobLog(id: string): Promise<JobLogLine[]> {
    const rows = await this.query(
      `SELECT j.id AS job, l.seq, l.at, l.level, l.message FROM jobs j
       LEFT JOIN job_logs l ON l.job_id = j.id WHERE j.id = $1 ORDER BY l.seq`,
      [String(id)],
    );
    if (rows.length === 0) throw invalid(`Job "${id}" not found.`);
    return rows.filter((r) => r.seq !== null).map((r) => ({ seq: num(r.seq), at: iso(r.at), level: str(r.level) as LogLevel, message: str(r.message) }));
  }

  async listJobs(filter: { libraryId?: string; state?: JobState; limit?: number } = {}): Promise<JobRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.libraryId !== undefined) {
      params.push(String(filter.libraryId));
      where.push(`library_id = $${params.length}`);
    }
    if (filter.state !== undefined) {
      params.push(String(filter.state));
      where.push(`state = $${params.length}`);
    }
    let limit = '';
    if (filter.limit !== undefined) {
      if (!Number.isInteger(filter.limit) || filter.limit < 0) throw invalid('limit must be a non-negative integer.');
      params.push(filter.limit);
      limit = ` LIMIT $${params.length}`;
    }
    const rows = await this.query(`SELECT * FROM jobs${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, seq DESC${limit}`, params);
    return rows.map(toJobRecord);
  }
}

/** A unique violation (SQLSTATE 23505), as the driver raised it inside a transaction. */
function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: unknown })?.code === '23505' || /\(23505\)$/.test(String((e as Error)?.message ?? ''));
}
