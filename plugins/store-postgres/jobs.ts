/** The jobs role on PostgreSQL: the job queue with leases (FOR UPDATE SKIP LOCKED), job logs. Not written yet. */
import type { IngestProgress, JobLogLine, JobRecord, JobState, JobStore, LogLevel } from '../../core/contracts.ts';
import type { PgCatalog } from './catalog.ts';
import { notBuilt, PgRole, type PgDatabase } from './database.ts';

export class PgJobs extends PgRole implements JobStore {
  constructor(
    database: PgDatabase,
    protected readonly catalog: PgCatalog,
  ) {
    super(database);
  }
  /** Run by PostgresStore.open(): what happens to jobs whose node died (leases), builds left unfinished. */
  async recover(): Promise<void> {}
  async createJob(_input: { libraryId: string; version: string; kind: string }): Promise<JobRecord> {
    return notBuilt('jobs', 'createJob');
  }
  async updateJob(_id: string, _patch: { state?: JobState; progress?: IngestProgress; error?: JobRecord['error'] }): Promise<JobRecord> {
    return notBuilt('jobs', 'updateJob');
  }
  async claimJob(_id: string): Promise<JobRecord | null> {
    return notBuilt('jobs', 'claimJob');
  }
  async appendJobLog(_id: string, _level: LogLevel, _message: string): Promise<void> {
    return notBuilt('jobs', 'appendJobLog');
  }
  async getJob(_id: string): Promise<JobRecord | null> {
    return notBuilt('jobs', 'getJob');
  }
  async getJobLog(_id: string): Promise<JobLogLine[]> {
    return notBuilt('jobs', 'getJobLog');
  }
  async listJobs(_filter?: { libraryId?: string; state?: JobState; limit?: number }): Promise<JobRecord[]> {
    return notBuilt('jobs', 'listJobs');
  }
}
