/**
 * The embedded store's admin account, sessions and audit log (schema version 4): plain
 * functions over the database, called by EmbeddedStore's methods of the same names. Whether a
 * change is written at once or batched is the caller's choice (see EmbeddedStore).
 */
import type { AdminAccountRecord, AuditEntry, AuditEntryInput, SessionRecord } from '../../core/contracts.ts';
import { all, get, num, run, str, strOrNull, type Database, type Row } from './sqlite.ts';

/** Audit entries kept; older ones are dropped as new ones arrive. */
export const AUDIT_LIMIT = 20_000;

export function readAdminAccount(db: Database): AdminAccountRecord | null {
  const row = get(db, 'SELECT username, password_hash, updated_at FROM admin_account WHERE id = 1');
  return row ? { username: str(row.username), passwordHash: str(row.password_hash), updatedAt: str(row.updated_at) } : null;
}

export function writeAdminAccount(db: Database, a: AdminAccountRecord | null): void {
  if (a === null) {
    run(db, 'DELETE FROM admin_account');
    return;
  }
  run(db, 'INSERT OR REPLACE INTO admin_account (id, username, password_hash, updated_at) VALUES (1, ?, ?, ?)', [a.username, a.passwordHash, a.updatedAt]);
}

function toSession(row: Row): SessionRecord {
  return {
    idHash: str(row.id_hash),
    username: str(row.username),
    createdAt: str(row.created_at),
    lastSeenAt: str(row.last_seen_at),
    expiresAt: str(row.expires_at),
    mustChangeCredentials: num(row.must_change) === 1,
    client: str(row.client),
  };
}

export function insertSession(db: Database, s: SessionRecord, now: string): void {
  run(db, 'DELETE FROM sessions WHERE expires_at <= ?', [now]);
  run(db, 'INSERT OR REPLACE INTO sessions (id_hash, username, created_at, last_seen_at, expires_at, must_change, client) VALUES (?, ?, ?, ?, ?, ?, ?)', [
    s.idHash,
    s.username,
    s.createdAt,
    s.lastSeenAt,
    s.expiresAt,
    s.mustChangeCredentials ? 1 : 0,
    s.client,
  ]);
}

export function selectSession(db: Database, idHash: string): SessionRecord | null {
  const row = get(db, 'SELECT * FROM sessions WHERE id_hash = ?', [String(idHash)]);
  return row ? toSession(row) : null;
}

export function patchSession(db: Database, idHash: string, patch: { username?: string; mustChangeCredentials?: boolean; lastSeenAt?: string }): void {
  if (patch.username !== undefined) run(db, 'UPDATE sessions SET username = ? WHERE id_hash = ?', [patch.username, idHash]);
  if (patch.mustChangeCredentials !== undefined) run(db, 'UPDATE sessions SET must_change = ? WHERE id_hash = ?', [patch.mustChangeCredentials ? 1 : 0, idHash]);
  if (patch.lastSeenAt !== undefined) run(db, 'UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?', [patch.lastSeenAt, idHash]);
}

export function removeSessions(db: Database, which: { idHash: string } | { exceptIdHash: string | null }): number {
  if ('idHash' in which) return run(db, 'DELETE FROM sessions WHERE id_hash = ?', [which.idHash]);
  if (which.exceptIdHash === null) return run(db, 'DELETE FROM sessions');
  return run(db, 'DELETE FROM sessions WHERE id_hash <> ?', [which.exceptIdHash]);
}

function toAudit(row: Row): AuditEntry {
  let details: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(str(row.details)) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) details = parsed as Record<string, unknown>;
  } catch {
    details = {};
  }
  return {
    id: num(row.id),
    at: str(row.at),
    actor: str(row.actor),
    action: str(row.action),
    target: strOrNull(row.target),
    outcome: str(row.outcome) as AuditEntry['outcome'],
    client: str(row.client),
    details,
  };
}

export function insertAudit(db: Database, e: AuditEntryInput): AuditEntry {
  run(db, 'INSERT INTO audit_log (at, actor, action, target, outcome, client, details) VALUES (?, ?, ?, ?, ?, ?, ?)', [
    e.at,
    e.actor,
    e.action,
    e.target,
    e.outcome,
    e.client,
    JSON.stringify(e.details ?? {}),
  ]);
  const id = num(get(db, 'SELECT last_insert_rowid() AS id')?.id);
  if (id % 500 === 0) run(db, 'DELETE FROM audit_log WHERE id <= ?', [id - AUDIT_LIMIT]);
  return { ...e, id };
}

export function selectAudit(db: Database, q: { limit: number; before?: number }): AuditEntry[] {
  const rows =
    q.before === undefined
      ? all(db, 'SELECT * FROM audit_log ORDER BY id DESC LIMIT ?', [q.limit])
      : all(db, 'SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?', [q.before, q.limit]);
  return rows.map(toAudit);
}
