/**
 * The embedded store's API key, session and audit roles (tables api_keys, admin_account,
 * sessions, audit_log; the SQL of the last three is in auth-tables.ts).
 */
import type { AdminAccountRecord, ApiKeyInput, ApiKeyRecord, ApiKeyStore, AuditEntry, AuditEntryInput, AuditStore, SessionRecord, SessionStore } from '../../core/contracts.ts';
import { duplicateApiKey, validateApiKeyInput } from '../../core/store-admin-rules.ts';
import { insertAudit, insertSession, patchSession, readAdminAccount, removeSessions, selectAudit, selectSession, writeAdminAccount } from './auth-tables.ts';
import { EmbeddedRole } from './database.ts';
import { all, get, run, str, strOrNull, type Row } from './sqlite.ts';
import { memoRead } from './read-memo.ts';

export class EmbeddedApiKeys extends EmbeddedRole implements ApiKeyStore {
  async createApiKey(input: ApiKeyInput): Promise<ApiKeyRecord> {
    const db = this.requireWritable();
    validateApiKeyInput(input);
    if (get(db, 'SELECT 1 AS x FROM api_keys WHERE id = ? OR hash = ?', [input.id, input.hash])) throw duplicateApiKey();
    run(db, 'INSERT INTO api_keys (id, name, plan, role, prefix, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)', [
      input.id,
      input.name,
      input.plan,
      input.role,
      input.prefix,
      input.hash,
      this.now(),
    ]);
    await this.persist();
    return toApiKeyRecord(get(db, 'SELECT * FROM api_keys WHERE id = ?', [input.id])!);
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    // Every API request asks this: answered from memory until the database changes (read-memo.ts).
    const db = this.requireDb();
    const row = memoRead(db, `api_keys.hash\0${hash}`, () => get(db, 'SELECT * FROM api_keys WHERE hash = ?', [String(hash)]) ?? null);
    return row ? toApiKeyRecord(row) : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    return all(this.requireDb(), 'SELECT * FROM api_keys ORDER BY created_at, rowid').map(toApiKeyRecord);
  }

  async revokeApiKey(id: string): Promise<ApiKeyRecord | null> {
    const db = this.requireWritable();
    const row = get(db, 'SELECT * FROM api_keys WHERE id = ?', [String(id)]);
    if (!row) return null;
    if (row.revoked_at == null) {
      run(db, 'UPDATE api_keys SET revoked_at = ? WHERE id = ?', [this.now(), id]);
      await this.persist();
    }
    return toApiKeyRecord(get(db, 'SELECT * FROM api_keys WHERE id = ?', [id])!);
  }
}

/**
 * Session touches (and audit entries, EmbeddedAudit) come with requests: they only mark the
 * database dirty, and the flush timer (flushIntervalMs) writes them in one export, never one
 * export per request.
 */
export class EmbeddedSessions extends EmbeddedRole implements SessionStore {
  async getAdminAccount(): Promise<AdminAccountRecord | null> {
    return readAdminAccount(this.requireDb());
  }

  async setAdminAccount(account: AdminAccountRecord | null): Promise<void> {
    writeAdminAccount(this.requireWritable(), account);
    await this.persist();
  }

  async createSession(session: SessionRecord): Promise<void> {
    insertSession(this.requireWritable(), session, this.now());
    await this.persist();
  }

  async getSession(idHash: string): Promise<SessionRecord | null> {
    return selectSession(this.requireDb(), idHash);
  }

  async updateSession(idHash: string, patch: { username?: string; mustChangeCredentials?: boolean; lastSeenAt?: string }): Promise<void> {
    patchSession(this.requireWritable(), idHash, patch);
    if (patch.username !== undefined || patch.mustChangeCredentials !== undefined) await this.persist();
    else this.markDirty(); // a touch: batched
  }

  async deleteSessions(which: { idHash: string } | { exceptIdHash: string | null }): Promise<number> {
    const n = removeSessions(this.requireWritable(), which);
    if (n > 0) await this.persist();
    return n;
  }
}

export class EmbeddedAudit extends EmbeddedRole implements AuditStore {
  async appendAudit(entry: AuditEntryInput): Promise<AuditEntry> {
    const saved = insertAudit(this.requireWritable(), entry);
    this.markDirty(); // batched
    return saved;
  }

  async listAudit(query: { limit: number; before?: number }): Promise<AuditEntry[]> {
    return selectAudit(this.requireDb(), query);
  }
}

function toApiKeyRecord(r: Row): ApiKeyRecord {
  return {
    id: str(r.id),
    name: str(r.name),
    plan: str(r.plan),
    role: str(r.role) as ApiKeyRecord['role'],
    prefix: str(r.prefix),
    createdAt: str(r.created_at),
    revokedAt: strOrNull(r.revoked_at),
  };
}
