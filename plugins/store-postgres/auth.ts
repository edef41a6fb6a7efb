/** API keys, the admin account and its sessions, the audit log on PostgreSQL. Not written yet. */
import type { AdminAccountRecord, ApiKeyInput, ApiKeyRecord, ApiKeyStore, AuditEntry, AuditEntryInput, AuditStore, SessionRecord, SessionStore } from '../../core/contracts.ts';
import { notBuilt, PgRole } from './database.ts';

export class PgApiKeys extends PgRole implements ApiKeyStore {
  async createApiKey(_input: ApiKeyInput): Promise<ApiKeyRecord> {
    return notBuilt('apiKeys', 'createApiKey');
  }
  async findApiKeyByHash(_hash: string): Promise<ApiKeyRecord | null> {
    return notBuilt('apiKeys', 'findApiKeyByHash');
  }
  async listApiKeys(): Promise<ApiKeyRecord[]> {
    return notBuilt('apiKeys', 'listApiKeys');
  }
  async revokeApiKey(_id: string): Promise<ApiKeyRecord | null> {
    return notBuilt('apiKeys', 'revokeApiKey');
  }
}

export class PgSessions extends PgRole implements SessionStore {
  async getAdminAccount(): Promise<AdminAccountRecord | null> {
    return notBuilt('sessions', 'getAdminAccount');
  }
  async setAdminAccount(_account: AdminAccountRecord | null): Promise<void> {
    return notBuilt('sessions', 'setAdminAccount');
  }
  async createSession(_session: SessionRecord): Promise<void> {
    return notBuilt('sessions', 'createSession');
  }
  async getSession(_idHash: string): Promise<SessionRecord | null> {
    return notBuilt('sessions', 'getSession');
  }
  async updateSession(_idHash: string, _patch: { username?: string; mustChangeCredentials?: boolean; lastSeenAt?: string }): Promise<void> {
    return notBuilt('sessions', 'updateSession');
  }
  async deleteSessions(_which: { idHash: string } | { exceptIdHash: string | null }): Promise<number> {
    return notBuilt('sessions', 'deleteSessions');
  }
}

export class PgAudit extends PgRole implements AuditStore {
  async appendAudit(_entry: AuditEntryInput): Promise<AuditEntry> {
    return notBuilt('audit', 'appendAudit');
  }
  async listAudit(_query: { limit: number; before?: number }): Promise<AuditEntry[]> {
    return notBuilt('audit', 'listAudit');
  }
}
