/**
 * The embedded store's StoreTransfer (core/contracts.ts; `refdesk migrate-store`): the rows the
 * role methods cannot read or write with their ids, hashes and times, on its sql.js tables. The
 * rest goes through the role methods (core/store-transfer.ts ContractTransfer).
 */
import type { ApiKeyRecord, JobLogLine, JobRecord, SessionRecord } from '../../core/contracts.ts';
import { ContractTransfer, type AliasRow } from '../../core/store-transfer.ts';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { vectorsDir } from '../../core/vectors.ts';
import type { EmbeddedStore } from './embedded-store.ts';
import { all, parseJson, run, str, transaction, type Database } from './sqlite.ts';

export class EmbeddedTransfer extends ContractTransfer {
  constructor(private readonly embedded: EmbeddedStore) {
    super(embedded, embedded.database.env.dataDir);
  }

  private get db(): Database {
    return this.embedded.database.requireDb();
  }

  /** A durable raw write; the libraries it changed are read again by the catalog cache. */
  private async write(libraryIds: string[], fn: (db: Database) => void): Promise<void> {
    const db = this.embedded.database.requireWritable();
    transaction(db, () => fn(db));
    this.embedded.catalogCache.touch(...libraryIds);
    await this.embedded.database.persist();
  }

  protected async listAliases(): Promise<AliasRow[]> {
    return all(this.db, 'SELECT alias, target, created_at FROM library_aliases ORDER BY alias').map((r) => ({ alias: str(r.alias), target: str(r.target), createdAt: str(r.created_at) }));
  }

  protected async listApiKeyHashes(): Promise<Array<{ key: ApiKeyRecord; hash: string }>> {
    const hashes = new Map(all(this.db, 'SELECT id, hash FROM api_keys').map((r) => [str(r.id), str(r.hash)]));
    return (await this.store.listApiKeys()).map((key) => ({ key, hash: hashes.get(key.id)! }));
  }

  protected async listSessions(): Promise<SessionRecord[]> {
    const hashes = all(this.db, 'SELECT id_hash FROM sessions ORDER BY created_at, id_hash').map((r) => str(r.id_hash));
    const out: SessionRecord[] = [];
    for (const h of hashes) {
      const s = await this.store.getSession(h);
      if (s) out.push(s);
    }
    return out;
  }

  protected async listSettings(): Promise<Array<{ key: string; value: unknown }>> {
    return all(this.db, 'SELECT key, value FROM settings ORDER BY key').map((r) => ({ key: str(r.key), value: parseJson<unknown>(r.value, null) }));
  }

  protected setLibraryCreatedAt(id: string, createdAt: string): Promise<void> {
    return this.write([id], (db) => run(db, 'UPDATE libraries SET created_at = ? WHERE id = ?', [createdAt, id]));
  }

  protected insertAlias(a: AliasRow): Promise<void> {
    return this.write([a.target], (db) => run(db, 'INSERT INTO library_aliases (alias, target, created_at) VALUES (?, ?, ?)', [a.alias, a.target, a.createdAt]));
  }

  protected setVersionDate(libraryId: string, version: string, lastUpdateDate: string | null): Promise<void> {
    return this.write([libraryId], (db) => run(db, 'UPDATE versions SET last_update_date = ? WHERE library_id = ? AND version = ?', [lastUpdateDate, libraryId, version]));
  }

  protected insertJob(j: JobRecord, log: JobLogLine[]): Promise<void> {
    return this.write([j.libraryId], (db) => {
      run(db, 'INSERT INTO jobs (id, library_id, version, kind, state, progress, error, created_at, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
        j.id,
        j.libraryId,
        j.version,
        j.kind,
        j.state,
        JSON.stringify(j.progress ?? {}),
        j.error === null ? null : JSON.stringify(j.error),
        j.createdAt,
        j.startedAt,
        j.finishedAt,
      ]);
      for (const l of log) run(db, 'INSERT INTO job_logs (job_id, seq, at, level, message) VALUES (?, ?, ?, ?, ?)', [j.id, l.seq, l.at, l.level, l.message]);
    });
  }

  protected insertApiKey(k: ApiKeyRecord, hash: string): Promise<void> {
    return this.write([], (db) =>
      run(db, 'INSERT INTO api_keys (id, name, plan, role, prefix, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [k.id, k.name, k.plan, k.role, k.prefix, hash, k.createdAt, k.revokedAt]),
    );
  }

  async clearAll(): Promise<void> {
    // Jobs first (a running one would keep its library), then each library with its files.
    await this.write([], (db) => {
      run(db, 'DELETE FROM job_logs');
      run(db, 'DELETE FROM jobs');
    });
    const ids = all(this.db, 'SELECT id FROM libraries').map((r) => str(r.id));
    for (const id of ids) await this.store.deleteLibrary(id);
    await this.write(ids, (db) => {
      for (const t of ['library_aliases', 'api_keys', 'admin_account', 'sessions', 'audit_log', 'settings']) run(db, `DELETE FROM ${t}`);
    });
    // Library-search vectors are files here (core/vectors.ts); build vectors went with their builds.
    await rm(join(vectorsDir(this.embedded.database.env.dataDir), 'libraries'), { recursive: true, force: true });
  }
}

