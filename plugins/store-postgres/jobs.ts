/**
 * The jobs role on PostgreSQL: the job queue shared by every node, and job logs (tables jobs,
 * job_logs), with the semantics of plugins/store-embedded/jobs.ts plus the shared queue
 * (core/contracts.ts JobQueue):
 *
 * - A claim (`claimNextJob`: the oldest queued job, `SELECT ... FOR UPDATE SKIP LOCKED`; or
 *   `claimJob(id)`) is one guarded UPDATE queued -> running that also leases the job to this node:
 *   `claimed_by` = node id, `lease_until` = now() + leaseMs, `attempts` + 1. Of any number of
 *   claims on any number of nodes exactly one wins. Lease times are the database's clock.
 * - The node renews the lease (`renewLease`, every heartbeatMs: the JobRunner for claimNextJob;
 *   this class itself for jobs claimed by id, which have no runner). A renewal fails once the lease
 *   has expired or moved: the node must stop the job.
 * - `sweepExpiredLeases` (at open, and every pollMs from the runner of every node): a running job
 *   whose lease expired goes back to the queue with a log line (LEASE_EXPIRED_LOG_LINE), its
 *   unfinished builds discarded; with a cancel requested, it ends cancelled instead.
 * - Fencing: while this node holds a job, its writes to it (updateJob, appendJobLog) carry the
 *   attempt it claimed, and are refused (`library_busy`) once another attempt holds the job. A
 *   build records its job's attempt and the database refuses to finalize it without that attempt's
 *   live lease (migration 005), whatever code finalizes it.
 * - Cancel from any node (`requestCancel`): a queued job ends at once; a running one gets
 *   `cancel_requested_at`, which its node's next renewal reports.
 */
import { randomUUID } from 'node:crypto';
import type { IngestProgress, JobLogLine, JobQueue, JobRecord, JobState, JobStore, LogLevel } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { LOG_LEVELS, applyJobPatch, invalid, libraryNotFound } from '../../core/store-rules.ts';
import type { PgCatalog } from './catalog.ts';
import type { PoolClient } from 'pg';
import { PgRole, type PgDatabase } from './database.ts';
import { iso, num, str, toJobRecord } from './rows.ts';

/** Job log lines kept per job; older lines are dropped (as the embedded store's JOB_LOG_LIMIT). */
export const JOB_LOG_LIMIT = 2000;

/** The log line of a job whose node stopped renewing its lease, when it goes back to the queue. */
export const LEASE_EXPIRED_LOG_LINE =
  'resumed after its node stopped: the node running this job stopped renewing its lease; its partial build was discarded and the job queued to run again';

/** The error of a job that was cancelled (here or on another node). */
const CANCELLED_BEFORE_RUN = { code: 'cancelled', message: 'Cancelled by an admin before it ran.' };
const CANCELLED_WHILE_RUNNING = { code: 'cancelled', message: 'Cancelled by an admin before it finished.' };

/** A job this node holds: the attempt it claimed (the fencing token), and who renews its lease. */
interface HeldJob {
  attempt: number;
  /** Renewed by this class (claimed by id, no runner renews it). */
  keepAlive: boolean;
  /** The lease was found lost: every later write of this node to the job is refused. */
  lost: boolean;
}

/** `now() + ms` in SQL, the parameter being a number of milliseconds. */
const PLUS_MS = (param: string) => `clock_timestamp() + ${param}::double precision * interval '1 millisecond'`;

export class PgJobs extends PgRole implements JobStore, JobQueue {
  private readonly held = new Map<string, HeldJob>();
  /** The last log append of each job still being written (settled: never rejects). */
  private readonly appending = new Map<string, Promise<void>>();
  private keepAliveTimer: NodeJS.Timeout | null = null;

  constructor(
    database: PgDatabase,
    protected readonly catalog: PgCatalog,
  ) {
    super(database);
  }

  /**
   * Run by PostgresStore.open(): the jobs whose node died (lease expired) go back to the queue
   * and their builds are discarded. Jobs other nodes are running (live leases) are left alone.
   */
  async recover(): Promise<void> {
    const n = await this.sweepExpiredLeases();
    if (n > 0) this.logger.warn('store: jobs of a stopped node queued again', { requeuedJobs: n });
  }

  /** Stops renewing leases (PostgresStore.close()). */
  stop(): void {
    if (this.keepAliveTimer) clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = null;
    this.held.clear();
  }

  /** The lease times this node uses (PostgresStoreOptions). */
  leaseTiming(): { leaseMs: number; heartbeatMs: number; pollMs: number } {
    const { leaseMs, heartbeatMs, pollMs } = this.database.options;
    return { leaseMs, heartbeatMs, pollMs };
  }

  async createJob(input: { libraryId: string; version: string; kind: string }): Promise<JobRecord> {
    const job = await this.insertJob(input, false);
    if (!job) throw libraryNotFound(input.libraryId);
    return job;
  }

  /**
   * Queues the job unless one of that library version is queued or running (core/contracts.ts):
   * a job of any kind seen by the statement, or a concurrent once-job that the unique index
   * `jobs_once_per_version` (migration 008) makes this insert wait for and then skip.
   */
  async createJobOnce(input: { libraryId: string; version: string; kind: string }): Promise<JobRecord | null> {
    const job = await this.insertJob(input, true);
    if (!job && !(await this.query('SELECT 1 FROM libraries WHERE id = $1', [String(input.libraryId)])).length) throw libraryNotFound(input.libraryId);
    return job;
  }

  private async insertJob(input: { libraryId: string; version: string; kind: string }, once: boolean): Promise<JobRecord | null> {
    if (!input || typeof input.version !== 'string' || typeof input.kind !== 'string' || !input.kind) {
      throw invalid('A job needs a libraryId, a version ("" for the default) and a kind.');
    }
    const unlessPending = once ? ` AND NOT EXISTS (SELECT 1 FROM jobs p WHERE p.library_id = l.id AND p.version = $3 AND p.state IN ('queued', 'running'))` : '';
    const [row] = await this.query(
      `INSERT INTO jobs (id, library_id, version, kind, state, progress, error, created_at, once_per_version)
       SELECT $1, l.id, $3, $4, 'queued', '{}', NULL, $5, $6 FROM libraries l WHERE l.id = $2${unlessPending}
       ${once ? 'ON CONFLICT DO NOTHING ' : ''}RETURNING *`,
      [randomUUID(), String(input.libraryId), input.version, input.kind, this.now(), once],
    );
    if (!row) return null;
    await this.catalog.changed(input.libraryId);
    return toJobRecord(row);
  }

  async updateJob(id: string, patch: { state?: JobState; progress?: IngestProgress; error?: JobRecord['error'] }): Promise<JobRecord> {
    await this.appending.get(String(id));
    const fence = this.fence(String(id), 2);
    const { record, before } = await this.tx(async (c) => {
      const [row] = (await c.query(`SELECT * FROM jobs WHERE id = $1${fence.sql} FOR UPDATE`, [String(id), ...fence.params])).rows;
      if (!row) {
        if (fence.held) {
          fence.held.lost = true;
          throw leaseLost(id);
        }
        throw invalid(`Job "${id}" not found.`);
      }
      const job = toJobRecord(row);
      const next = applyJobPatch(job, patch, this.now());
      // Out of `running`: no lease any more; back to the queue: no node holds it.
      const lease = next.state === 'running' ? '' : `, lease_until = NULL, heartbeat_at = NULL, cancel_requested_at = NULL${next.state === 'queued' ? ', claimed_by = NULL' : ''}`;
      const [updated] = (
        await c.query(`UPDATE jobs SET state = $2, progress = $3::jsonb, error = $4::jsonb, started_at = $5, finished_at = $6${lease} WHERE id = $1 RETURNING *`, [
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
    if (record.state !== 'running') this.held.delete(record.id);
    // Progress alone does not change the library's record; a state change does.
    if (record.state !== before.state) {
      await this.catalog.changed(record.libraryId);
      await this.publishJob(record.id);
    }
    return record;
  }

  /**
   * Claims this queued job (see the file's header): leased to this node, and its lease renewed by
   * this store every heartbeatMs until the job leaves `running` (no runner renews it).
   */
  async claimJob(id: string): Promise<JobRecord | null> {
    // One statement, guarded by the current state: of any number of claims, only one changes the row.
    return this.claim('id = $1', [String(id)], true);
  }

  async claimNextJob(): Promise<JobRecord | null> {
    // The oldest queued job that no other claim has locked at this moment (SKIP LOCKED: claims on
    // several nodes at once take different jobs instead of waiting on one another).
    return this.claim(`id = (SELECT id FROM jobs WHERE state = 'queued' ORDER BY created_at, seq FOR UPDATE SKIP LOCKED LIMIT 1)`, [], false);
  }

  private async claim(target: string, params: unknown[], keepAlive: boolean): Promise<JobRecord | null> {
    const n = params.length;
    const [row] = await this.query(
      `UPDATE jobs SET state = 'running', started_at = COALESCE(started_at, $${n + 1}), finished_at = NULL,
         claimed_by = $${n + 2}, attempts = attempts + 1, lease_until = ${PLUS_MS(`$${n + 3}`)}, heartbeat_at = clock_timestamp(), cancel_requested_at = NULL
       WHERE ${target} AND state = 'queued' RETURNING *`,
      [...params, this.now(), this.database.nodeId, this.database.options.leaseMs],
    );
    if (!row) return null;
    const claimed = toJobRecord(row);
    this.held.set(claimed.id, { attempt: num(row.attempts), keepAlive, lost: false });
    if (keepAlive) this.startKeepAlive();
    await this.catalog.changed(claimed.libraryId);
    await this.publishJob(claimed.id);
    return claimed;
  }

  /**
   * A renewal late enough that the lease expired still holds the job while no sweep has taken it
   * back (the row lock orders a renewal and a sweep: the sweep changes `claimed_by`, so a renewal
   * after it fails, and one before it makes the lease live again).
   */
  async renewLease(id: string): Promise<{ held: boolean; cancelRequested: boolean }> {
    const held = this.held.get(id);
    if (!held || held.lost) return { held: false, cancelRequested: false };
    const [row] = await this.query(
      `UPDATE jobs SET lease_until = ${PLUS_MS('$4')}, heartbeat_at = clock_timestamp()
       WHERE id = $1 AND state = 'running' AND claimed_by = $2 AND attempts = $3
       RETURNING cancel_requested_at IS NOT NULL AS cancel`,
      [id, this.database.nodeId, held.attempt, this.database.options.leaseMs],
    );
    if (!row) {
      held.lost = true;
      return { held: false, cancelRequested: false };
    }
    return { held: true, cancelRequested: row.cancel === true };
  }

  async releaseJob(id: string): Promise<void> {
    const held = this.held.get(id);
    if (!held || held.lost) return;
    this.held.delete(id);
    const [row] = await this.query(
      `UPDATE jobs SET state = 'queued', finished_at = NULL, claimed_by = NULL, lease_until = NULL, heartbeat_at = NULL
       WHERE id = $1 AND state = 'running' AND claimed_by = $2 AND attempts = $3 RETURNING library_id`,
      [id, this.database.nodeId, held.attempt],
    );
    if (row) {
      await this.catalog.changed(str(row.library_id));
      await this.publishJob(id);
    }
  }

  async requestCancel(id: string): Promise<JobRecord | null> {
    const out = await this.tx(async (c) => {
      const [row] = (await c.query('SELECT * FROM jobs WHERE id = $1 FOR UPDATE', [String(id)])).rows;
      if (!row) return null;
      if (row.state === 'queued') {
        const [ended] = (
          await c.query(`UPDATE jobs SET state = 'failed', error = $2::jsonb, finished_at = $3, claimed_by = NULL, lease_until = NULL WHERE id = $1 RETURNING *`, [
            id,
            JSON.stringify(CANCELLED_BEFORE_RUN),
            this.now(),
          ])
        ).rows;
        await insertLogLine(c, id, 'warn', 'cancelled by an admin before it ran', this.now());
        return { record: toJobRecord(ended), changed: true };
      }
      if (row.state === 'running' && row.cancel_requested_at === null) {
        const [asked] = (await c.query('UPDATE jobs SET cancel_requested_at = clock_timestamp() WHERE id = $1 RETURNING *', [id])).rows;
        return { record: toJobRecord(asked), changed: true };
      }
      return { record: toJobRecord(row), changed: false };
    });
    if (!out) return null;
    if (out.changed) {
      if (out.record.state !== 'running') await this.catalog.changed(out.record.libraryId);
      await this.publishJob(out.record.id);
    }
    return out.record;
  }

  watchJobs(listener: (jobId: string) => void): () => void {
    const onChange = (topic: string, id: string) => {
      if (topic === 'job') listener(id);
    };
    this.database.changes.on('change', onChange);
    return () => void this.database.changes.off('change', onChange);
  }

  async sweepExpiredLeases(): Promise<number> {
    const swept = await this.tx(async (c) => {
      // Locked rows are being claimed, renewed or ended right now: left to the next sweep.
      const rows = (
        await c.query(
          `SELECT id, library_id, claimed_by, cancel_requested_at IS NOT NULL AS cancel FROM jobs
           WHERE state = 'running' AND lease_until < clock_timestamp() ORDER BY created_at FOR UPDATE SKIP LOCKED`,
        )
      ).rows;
      if (rows.length === 0) return [];
      const ids = rows.map((r) => str(r.id));
      const now = this.now();
      // Their unfinished builds are discarded (the staged rows go; the build stays, failed, as at a restart of the embedded store).
      const builds = (await c.query(`UPDATE builds SET state = 'failed', finished_at = clock_timestamp() WHERE job_id = ANY($1) AND state = 'building' RETURNING id`, [ids])).rows.map((r) => str(r.id));
      if (builds.length > 0) {
        await c.query('DELETE FROM build_documents WHERE build_id = ANY($1)', [builds]);
        await c.query('DELETE FROM segment_chunks WHERE build_id = ANY($1)', [builds]);
      }
      for (const r of rows) {
        const id = str(r.id);
        if (r.cancel) {
          await c.query(`UPDATE jobs SET state = 'failed', error = $2::jsonb, finished_at = $3, lease_until = NULL, heartbeat_at = NULL WHERE id = $1`, [id, JSON.stringify(CANCELLED_WHILE_RUNNING), now]);
          await insertLogLine(c, id, 'warn', 'cancelled by an admin: its node stopped before it saw the cancel; the served version is unchanged', now);
        } else {
          await c.query(`UPDATE jobs SET state = 'queued', error = NULL, finished_at = NULL, claimed_by = NULL, lease_until = NULL, heartbeat_at = NULL WHERE id = $1`, [id]);
          await insertLogLine(c, id, 'warn', LEASE_EXPIRED_LOG_LINE, now);
        }
      }
      return rows.map((r) => ({ id: str(r.id), libraryId: str(r.library_id), node: str(r.claimed_by) }));
    });
    for (const j of swept) {
      this.logger.warn('store: a job\'s lease expired; queued again', { job: j.id, node: j.node });
      await this.catalog.changed(j.libraryId);
      await this.publishJob(j.id);
    }
    return swept.length;
  }

  /** Tells every node that a job's state changed (or a cancel was asked for). */
  private async publishJob(id: string): Promise<void> {
    await this.database.publish('job', id).catch((e: unknown) => this.logger.warn('store: could not publish a job change', { job: id, error: (e as Error).message }));
  }

  /** Renews the leases of the jobs claimed by id (claimJob) while they run. */
  private startKeepAlive(): void {
    if (this.keepAliveTimer) return;
    this.keepAliveTimer = setInterval(() => {
      const ids = [...this.held].filter(([, h]) => h.keepAlive && !h.lost).map(([id]) => id);
      if (ids.length === 0) {
        clearInterval(this.keepAliveTimer!);
        this.keepAliveTimer = null;
        return;
      }
      for (const id of ids) {
        this.renewLease(id).then(
          (r) => !r.held && this.logger.warn('store: lost the lease of a job claimed by id', { job: id }),
          (e: unknown) => this.logger.warn('store: could not renew a job lease', { job: id, error: (e as Error).message }),
        );
      }
    }, this.database.options.heartbeatMs);
    this.keepAliveTimer.unref();
  }

  /** The fence on this node's writes to a job it holds: `claimed_by` and `attempts` (SQL and its parameters). */
  private fence(id: string, firstParam: number): { sql: string; params: unknown[]; held: HeldJob | undefined } {
    const held = this.held.get(id);
    if (!held) return { sql: '', params: [], held };
    if (held.lost) throw leaseLost(id);
    return { sql: ` AND claimed_by = $${firstParam} AND attempts = $${firstParam + 1}`, params: [this.database.nodeId, held.attempt], held };
  }

  /**
   * Appends a line. Appends to one job are written in the order they were made, and a later
   * updateJob of the job waits for them: a watcher that sees the job end has its whole log (the
   * ingest does not wait for its log lines).
   */
  async appendJobLog(id: string, level: LogLevel, message: string): Promise<void> {
    const before = this.appending.get(id) ?? Promise.resolve();
    const mine = before.then(() => this.appendNow(id, level, message));
    const settled = mine.catch(() => {});
    this.appending.set(id, settled);
    void settled.then(() => this.appending.get(id) === settled && this.appending.delete(id));
    return mine;
  }

  private async appendNow(id: string, level: LogLevel, message: string): Promise<void> {
    // A node that lost the job writes nothing more to its log (the node running it now does).
    const fence = this.fence(String(id), 6);
    const params = [String(id), this.now(), LOG_LEVELS.includes(level) ? level : 'info', String(message), JOB_LOG_LIMIT, ...fence.params];
    for (let attempt = 0; ; attempt++) {
      try {
        const rows = await this.tx(async (c) => (await c.query(APPEND_LOG_SQL.replace('$FENCE', fence.sql), params)).rows);
        if (rows.length === 0) {
          if (fence.held) {
            fence.held.lost = true;
            throw leaseLost(id);
          }
          throw invalid(`Job "${id}" not found.`);
        }
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

/**
 * Appends a line: the job's next seq, and the lines beyond the limit dropped, in one statement
 * ($FENCE: the holder's fence, or nothing). Two appends to one job at once may pick the same seq:
 * the loser retries.
 */
const APPEND_LOG_SQL = `WITH ins AS (
   INSERT INTO job_logs (job_id, seq, at, level, message)
   SELECT j.id, COALESCE((SELECT MAX(seq) FROM job_logs WHERE job_id = j.id), 0) + 1, $2, $3, $4 FROM jobs j WHERE j.id = $1$FENCE
   RETURNING seq),
 trimmed AS (DELETE FROM job_logs WHERE job_id = $1 AND seq <= (SELECT seq FROM ins) - $5)
 SELECT seq FROM ins`;

/** One log line written inside a transaction of this role (a job known to exist). */
async function insertLogLine(c: PoolClient, id: string, level: LogLevel, message: string, at: string): Promise<void> {
  await c.query(APPEND_LOG_SQL.replace('$FENCE', ''), [id, at, level, message, JOB_LOG_LIMIT]);
}

/** This node's write to a job another node holds now (or that went back to the queue). */
function leaseLost(id: string): RefdeskError {
  return new RefdeskError('library_busy', `Job ${id} is no longer held by this node: its lease expired and the job went back to the queue or to another node, which runs it now.`);
}

/** A unique violation (SQLSTATE 23505), as the driver raised it inside a transaction. */
function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: unknown })?.code === '23505' || /\(23505\)$/.test(String((e as Error)?.message ?? ''));
}
