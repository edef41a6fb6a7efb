/** The in-memory store's API key, session and audit roles (core/testing/memory-store.ts). */
import type {
  AdminAccountRecord,
  ApiKeyInput,
  ApiKeyRecord,
  ApiKeyStore,
  AuditEntry,
  AuditEntryInput,
  AuditStore,
  SessionRecord,
  SessionStore,
} from '../../contracts.ts';
import { duplicateApiKey, validateApiKeyInput } from '../../store-admin-rules.ts';
import { MemoryRole } from './state.ts';

export class MemoryApiKeys extends MemoryRole implements ApiKeyStore {
  async createApiKey(input: ApiKeyInput): Promise<ApiKeyRecord> {
    this.requireOpen();
    validateApiKeyInput(input);
    if (this.state.apiKeys.has(input.id) || [...this.state.apiKeys.values()].some((k) => k.hash === input.hash)) throw duplicateApiKey();
    const row = {
      id: input.id,
      name: input.name,
      plan: input.plan,
      role: input.role,
      prefix: input.prefix,
      hash: input.hash,
      createdAt: this.now(),
      revokedAt: null,
      rowid: this.state.nextRowid++,
    };
    this.state.apiKeys.set(input.id, row);
    return publicKey(row);
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    this.requireOpen();
    const row = [...this.state.apiKeys.values()].find((k) => k.hash === String(hash));
    return row ? publicKey(row) : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    this.requireOpen();
    return [...this.state.apiKeys.values()]
      .sort((a, b) => (a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? -1 : 1) : a.rowid - b.rowid))
      .map(publicKey);
  }

  async revokeApiKey(id: string): Promise<ApiKeyRecord | null> {
    this.requireOpen();
    const row = this.state.apiKeys.get(String(id));
    if (!row) return null;
    if (row.revokedAt === null) this.state.apiKeys.set(row.id, { ...row, revokedAt: this.now() });
    return publicKey(this.state.apiKeys.get(row.id)!);
  }
}

export class MemorySessions extends MemoryRole implements SessionStore {
  async getAdminAccount(): Promise<AdminAccountRecord | null> {
    this.requireOpen();
    return this.state.adminAccount ? { ...this.state.adminAccount } : null;
  }

  async setAdminAccount(account: AdminAccountRecord | null): Promise<void> {
    this.requireOpen();
    this.state.adminAccount = account ? { ...account } : null;
  }

  async createSession(session: SessionRecord): Promise<void> {
    this.requireOpen();
    const now = this.now();
    for (const [k, s] of this.state.sessions) if (s.expiresAt <= now) this.state.sessions.delete(k);
    this.state.sessions.set(session.idHash, { ...session });
  }

  async getSession(idHash: string): Promise<SessionRecord | null> {
    this.requireOpen();
    const s = this.state.sessions.get(String(idHash));
    return s ? { ...s } : null;
  }

  async updateSession(idHash: string, patch: { username?: string; mustChangeCredentials?: boolean; lastSeenAt?: string }): Promise<void> {
    this.requireOpen();
    const s = this.state.sessions.get(idHash);
    if (!s) return;
    this.state.sessions.set(idHash, {
      ...s,
      ...(patch.username !== undefined ? { username: patch.username } : {}),
      ...(patch.mustChangeCredentials !== undefined ? { mustChangeCredentials: patch.mustChangeCredentials } : {}),
      ...(patch.lastSeenAt !== undefined ? { lastSeenAt: patch.lastSeenAt } : {}),
    });
  }

  async deleteSessions(which: { idHash: string } | { exceptIdHash: string | null }): Promise<number> {
    this.requireOpen();
    let n = 0;
    for (const k of [...this.state.sessions.keys()]) {
      const hit = 'idHash' in which ? k === which.idHash : k !== which.exceptIdHash;
      if (hit && this.state.sessions.delete(k)) n++;
    }
    return n;
  }
}

export class MemoryAudit extends MemoryRole implements AuditStore {
  async appendAudit(entry: AuditEntryInput): Promise<AuditEntry> {
    this.requireOpen();
    const saved: AuditEntry = { ...entry, details: { ...entry.details }, id: (this.state.audit.at(-1)?.id ?? 0) + 1 };
    this.state.audit.push(saved);
    if (this.state.audit.length > 20_000) this.state.audit.splice(0, this.state.audit.length - 20_000);
    return saved;
  }

  async listAudit(query: { limit: number; before?: number }): Promise<AuditEntry[]> {
    this.requireOpen();
    const before = query.before;
    return this.state.audit
      .filter((e) => before === undefined || e.id < before)
      .reverse()
      .slice(0, query.limit)
      .map((e) => ({ ...e, details: { ...e.details } }));
  }
}

function publicKey(row: ApiKeyRecord & { hash: string }): ApiKeyRecord {
  return { id: row.id, name: row.name, plan: row.plan, role: row.role, prefix: row.prefix, createdAt: row.createdAt, revokedAt: row.revokedAt };
}
