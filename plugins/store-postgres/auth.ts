/**
 * API keys, the admin account and its sessions, the audit log on PostgreSQL (tables api_keys,
 * admin_account, sessions, audit_log), mirroring plugins/store-embedded/auth.ts.
 *
 * `findApiKeyByHash` runs on every request that carries a key: its answers (unknown hashes too)
 * are kept in memory per node and dropped when the change feed says a key changed (topic
 * `apiKey`, published after every create and revoke, here or on another node), so a revoked key
 * stops working on every node as soon as the node hears of it.
 */
import type { AdminAccountRecord, ApiKeyInput, ApiKeyRecord, ApiKeyStore, AuditEntry, AuditEntryInput, AuditStore, SessionRecord, SessionStore } from '../../core/contracts.ts';
import { duplicateApiKey, validateApiKeyInput } from '../../core/store-admin-rules.ts';
import { invalid } from '../../core/store-rules.ts';
import { PgRole, type PgDatabase } from './database.ts';
import { ReadCache } from './read-cache.ts';
import { iso, isoOrNull, jsonObject, num, str, strOrNull, type PgRow } from './rows.ts';

/** Audit entries kept; older ones are dropped as new ones arrive (as the embedded store's AUDIT_LIMIT). */
export const AUDIT_LIMIT = 20_000;

export class PgApiKeys extends PgRole implements ApiKeyStore {
  /** Key records by hash (null: no such key), as this node last read them. */
  readonly byHash = new ReadCache<string, ApiKeyRecord | null>();

  constructor(database: PgDatabase) {
    super(database);
    // Any key change drops every answer: unknown hashes may have become keys.
    database.changes.on('change', (topic: string) => {
      if (topic === 'apiKey') this.byHash.clear();
    });
  }

  async createApiKey(input: ApiKeyInput): Promise<ApiKeyRecord> {
    validateApiKeyInput(input);
    const [row] = await this.query(
      `INSERT INTO api_keys (id, name, plan, role, prefix, hash, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
       ON CONFLICT DO NOTHING RETURNING *`,
      [input.id, input.name, input.plan, input.role, input.prefix, input.hash, this.now()],
    );
    if (!row) throw duplicateApiKey();
    await this.database.publish('apiKey', input.id);
    return toApiKeyRecord(row);
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    this.requireOpen();
    const found = await this.byHash.get(String(hash), async (h) => {
      const [row] = await this.query('SELECT * FROM api_keys WHERE hash = $1', [h]);
      return row ? Object.freeze(toApiKeyRecord(row)) : null;
    });
    return found ? { ...found } : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    return (await this.query('SELECT * FROM api_keys ORDER BY created_at, seq')).map(toApiKeyRecord);
  }

  async revokeApiKey(id: string): Promise<ApiKeyRecord | null> {
    // Idempotent: a revoked key keeps its first revocation time.
    const [row] = await this.query('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING *', [String(id), this.now()]);
    if (!row) return null;
    await this.database.publish('apiKey', String(id));
    return toApiKeyRecord(row);
  }
}

/** The admin account and its sessions; every change is durable when it resolves. */
export class PgSessions extends PgRole implements SessionStore {
  async getAdminAccount(): Promise<AdminAccountRecord | null> {
    const [row] = await this.query('SELECT username, password_hash, updated_at FROM admin_account WHERE id = 1');
    return row ? { username: str(row.username), passwordHash: str(row.password_hash), updatedAt: iso(row.updated_at) } : null;
  }

  async setAdminAccount(account: AdminAccountRecord | null): Promise<void> {
    if (account === null) {
      await this.query('DELETE FROM admin_account');
    } else {
      await this.query(
        `INSERT INTO admin_account (id, username, password_hash, updated_at) VALUES (1, $1, $2, $3)
         ON CONFLICT (id) DO UPDATE SET username = EXCLUDED.username, password_hash = EXCLUDED.password_hash, updated_at = EXCLUDED.updated_at`,
        [account.username, account.passwordHash, account.updatedAt],
      );
    }
    await this.database.publish('session', 'admin');
  }

  async createSession(s: SessionRecord): Promise<void> {
    await this.tx(async (c) => {
      await c.query('DELETE FROM sessions WHERE expires_at <= $1', [this.now()]);
      await c.query(
        `INSERT INTO sessions (id_hash, username, created_at, last_seen_at, expires_at, must_change_credentials, client) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (id_hash) DO UPDATE SET username = EXCLUDED.username, created_at = EXCLUDED.created_at, last_seen_at = EXCLUDED.last_seen_at,
           expires_at = EXCLUDED.expires_at, must_change_credentials = EXCLUDED.must_change_credentials, client = EXCLUDED.client`,
        [s.idHash, s.username, s.createdAt, s.lastSeenAt, s.expiresAt, s.mustChangeCredentials === true, s.client],
      );
    });
  }

  async getSession(idHash: string): Promise<SessionRecord | null> {
    const [row] = await this.query('SELECT * FROM sessions WHERE id_hash = $1', [String(idHash)]);
    return row ? toSession(row) : null;
  }

  async updateSession(idHash: string, patch: { username?: string; mustChangeCredentials?: boolean; lastSeenAt?: string }): Promise<void> {
    if (patch.username !== undefined && typeof patch.username !== 'string') throw invalid('A session username must be a string.');
    await this.query(
      `UPDATE sessions SET username = COALESCE($2, username), must_change_credentials = COALESCE($3, must_change_credentials),
         last_seen_at = COALESCE($4::timestamptz, last_seen_at) WHERE id_hash = $1`,
      [String(idHash), patch.username ?? null, patch.mustChangeCredentials ?? null, patch.lastSeenAt ?? null],
    );
  }

  async deleteSessions(which: { idHash: string } | { exceptIdHash: string | null }): Promise<number> {
    const rows =
      'idHash' in which
        ? await this.query('DELETE FROM sessions WHERE id_hash = $1 RETURNING 1', [which.idHash])
        : which.exceptIdHash === null
          ? await this.query('DELETE FROM sessions RETURNING 1')
          : await this.query('DELETE FROM sessions WHERE id_hash <> $1 RETURNING 1', [which.exceptIdHash]);
    if (rows.length > 0) await this.database.publish('session', 'idHash' in which ? which.idHash : '*');
    return rows.length;
  }
}

export class PgAudit extends PgRole implements AuditStore {
  async appendAudit(entry: AuditEntryInput): Promise<AuditEntry> {
    const details = entry.details ?? {};
    const [row] = await this.query<{ id: string }>(
      'INSERT INTO audit_log (at, actor, action, target, outcome, client, details) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING id',
      [entry.at, entry.actor, entry.action, entry.target, entry.outcome, entry.client, JSON.stringify(details)],
    );
    const id = num(row.id);
    if (id % 500 === 0) await this.query('DELETE FROM audit_log WHERE id <= $1', [id - AUDIT_LIMIT]);
    return { ...entry, details, id };
  }

  async listAudit(q: { limit: number; before?: number }): Promise<AuditEntry[]> {
    const rows =
      q.before === undefined
        ? await this.query('SELECT * FROM audit_log ORDER BY id DESC LIMIT $1', [q.limit])
        : await this.query('SELECT * FROM audit_log WHERE id < $1 ORDER BY id DESC LIMIT $2', [q.before, q.limit]);
    return rows.map(toAudit);
  }
}

function toApiKeyRecord(r: PgRow): ApiKeyRecord {
  return {
    id: str(r.id),
    name: str(r.name),
    plan: str(r.plan),
    role: str(r.role) as ApiKeyRecord['role'],
    prefix: str(r.prefix),
    createdAt: iso(r.created_at),
    revokedAt: isoOrNull(r.revoked_at),
  };
}

function toSession(r: PgRow): SessionRecord {
  return {
    idHash: str(r.id_hash),
    username: str(r.username),
    createdAt: iso(r.created_at),
    lastSeenAt: iso(r.last_seen_at),
    expiresAt: iso(r.expires_at),
    mustChangeCredentials: r.must_change_credentials === true,
    client: str(r.client),
  };
}

function toAudit(r: PgRow): AuditEntry {
  return {
    id: num(r.id),
    at: iso(r.at),
    actor: str(r.actor),
    action: str(r.action),
    target: strOrNull(r.target),
    outcome: str(r.outcome) as AuditEntry['outcome'],
    client: str(r.client),
    details: jsonObject<Record<string, unknown>>(r.details, {}),
  };
}
