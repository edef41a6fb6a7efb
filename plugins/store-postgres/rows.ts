/**
 * Row helpers shared by the PostgreSQL store's roles: values as node-postgres returns them
 * (timestamptz as Date, bigint as string, jsonb parsed) turned into the contract's shapes
 * (ISO 8601 timestamps with milliseconds and Z, numbers), and the job record mapper. Other roles
 * may add their mappers at the end of this file.
 */
import type { IngestProgress, JobRecord, JobState } from '../../core/contracts.ts';

export type PgRow = Record<string, unknown>;

/** An ISO 8601 timestamp with milliseconds and Z (the contract's form), or null. */
export function isoOrNull(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  return new Date(String(v)).toISOString();
}

export function iso(v: unknown): string {
  return isoOrNull(v) ?? '';
}

/** A number from an integer, bigint (a string in node-postgres) or double column; 0 for null. */
export function num(v: unknown): number {
  if (v === null || v === undefined) return 0;
  return typeof v === 'number' ? v : Number(v);
}

export function str(v: unknown): string {
  return v === null || v === undefined ? '' : String(v);
}

export function strOrNull(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

/** A jsonb object column (node-postgres parses jsonb); `fallback` when null or not an object. */
export function jsonObject<T extends object | null>(v: unknown, fallback: T): T {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as T) : fallback;
}

/** A `jobs` row as the contract's JobRecord. */
export function toJobRecord(r: PgRow): JobRecord {
  const error = jsonObject<{ code?: unknown; message?: unknown } | null>(r.error, null);
  return {
    id: str(r.id),
    libraryId: str(r.library_id),
    version: str(r.version),
    kind: str(r.kind),
    state: str(r.state) as JobState,
    progress: jsonObject<IngestProgress>(r.progress, {}),
    error: error ? { code: str(error.code), message: str(error.message) } : null,
    createdAt: iso(r.created_at),
    startedAt: isoOrNull(r.started_at),
    finishedAt: isoOrNull(r.finished_at),
  };
}
