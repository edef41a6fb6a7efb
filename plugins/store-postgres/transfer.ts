/**
 * The PostgreSQL store's StoreTransfer (core/contracts.ts; `refdesk migrate-store`): the rows the
 * role methods cannot read or write with their ids, hashes and times, on the tables of
 * migrations/001_core.sql. The rest goes through the role methods (core/store-transfer.ts
 * ContractTransfer), so builds get their segments and vectors the way the builds role writes them.
 */
import type { ApiKeyRecord, JobLogLine, JobRecord, SessionRecord, Store } from '../../core/contracts.ts';
import { ContractTransfer, type AliasRow } from '../../core/store-transfer.ts';
import type { PgDatabase } from './database.ts';

/** ISO 8601 with milliseconds and Z, as the contract's times are. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Every table of the store (and, through CASCADE, any table a later migration made referencing
 * them), emptied by `clearAll`.
 */
const TABLES = [
  'libraries',
  'library_aliases',
  'versions',
  'builds',
  'segment_chunks',
  'build_documents',
  'document_chunks',
  'jobs',
  'job_logs',
  'api_keys',
  'admin_account',
  'sessions',
  'settings',
  'audit_log',
  'rate_limit_counters',
  'uploads',
  'library_vectors',
];

export class PgTransfer extends ContractTransfer {
  /** `store`: a PostgresStore (its role methods); `database`: its PgDatabase. */
  constructor(
    store: Store,
    private readonly database: PgDatabase,
  ) {
    super(store, database.env.dataDir);
  }

  protected async listAliases(): Promise<AliasRow[]> {
    const rows = await this.database.query<{ alias: string; target: string; created_at: string }>(`SELECT alias, target, ${iso('created_at')} AS created_at FROM library_aliases ORDER BY alias`);
    return rows.map((r) => ({ alias: r.alias, target: r.target, createdAt: r.created_at }));
  }

  protected async listApiKeyHashes(): Promise<Array<{ key: ApiKeyRecord; hash: string }>> {
    const rows = await this.database.query<{ id: string; hash: string }>('SELECT id, hash FROM api_keys');
    const hashes = new Map(rows.map((r) => [r.id, r.hash]));
    return (await this.store.listApiKeys()).map((key) => ({ key, hash: hashes.get(key.id)! }));
  }

  protected async listSessions(): Promise<SessionRecord[]> {
    const rows = await this.database.query<{ id_hash: string }>('SELECT id_hash FROM sessions ORDER BY created_at, id_hash');
    const out: SessionRecord[] = [];
    for (const r of rows) {
      const s = await this.store.getSession(r.id_hash);
      if (s) out.push(s);
    }
    return out;
  }

  protected async listSettings(): Promise<Array<{ key: string; value: unknown }>> {
    return this.database.query<{ key: string; value: unknown }>('SELECT key, value FROM settings ORDER BY key');
  }

  protected async setLibraryCreatedAt(id: string, createdAt: string): Promise<void> {
    await this.database.query('UPDATE libraries SET created_at = $2 WHERE id = $1', [id, createdAt]);
    await this.database.publish('library', id);
  }

  protected async insertAlias(a: AliasRow): Promise<void> {
    await this.database.query('INSERT INTO library_aliases (alias, target, created_at) VALUES ($1, $2, $3)', [a.alias, a.target, a.createdAt]);
    await this.database.publish('library', a.target);
  }

  protected async setVersionDate(libraryId: string, version: string, lastUpdateDate: string | null): Promise<void> {
    await this.database.query('UPDATE versions SET last_update_date = $3 WHERE library_id = $1 AND version = $2', [libraryId, version, lastUpdateDate]);
    await this.database.publish('library', libraryId);
  }

  protected async insertJob(j: JobRecord, log: JobLogLine[]): Promise<void> {
    await this.database.tx(async (c) => {
      // A job the source had running gets an expired lease: the first node to look takes it over.
      await c.query(
        `INSERT INTO jobs (id, library_id, version, kind, state, progress, error, created_at, started_at, finished_at, lease_until)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $5 = 'running' THEN now() END)`,
        [j.id, j.libraryId, j.version, j.kind, j.state, JSON.stringify(j.progress ?? {}), j.error === null ? null : JSON.stringify(j.error), j.createdAt, j.startedAt, j.finishedAt],
      );
      if (log.length > 0) {
        await c.query(
          `INSERT INTO job_logs (job_id, seq, at, level, message)
           SELECT $1, s, a, l, m FROM unnest($2::int[], $3::timestamptz[], $4::text[], $5::text[]) AS t(s, a, l, m)`,
          [j.id, log.map((l) => l.seq), log.map((l) => l.at), log.map((l) => l.level), log.map((l) => l.message)],
        );
      }
    });
    await this.database.publish('job', j.id);
  }

  protected async insertApiKey(k: ApiKeyRecord, hash: string): Promise<void> {
    await this.database.query('INSERT INTO api_keys (id, name, plan, role, prefix, hash, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
      k.id,
      k.name,
      k.plan,
      k.role,
      k.prefix,
      hash,
      k.createdAt,
      k.revokedAt,
    ]);
    await this.database.publish('apiKey', k.id);
  }

  async clearAll(): Promise<void> {
    await this.database.query(`TRUNCATE ${TABLES.join(', ')} CASCADE`);
  }
}
