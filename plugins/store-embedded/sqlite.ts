/**
 * Thin synchronous helpers over sql.js. Statements are prepared and freed within one call:
 * nothing prepared outlives the method that made it, so `db.export()` never has to care.
 */
import { createRequire } from 'node:module';
import initSqlJs from 'sql.js';
import type { BindParams, Database, SqlJsStatic, SqlValue } from 'sql.js';
import { noteWrite } from './read-memo.ts';

export type { Database, SqlValue };
export type Row = Record<string, SqlValue>;

let sqlJs: Promise<SqlJsStatic> | null = null;

/** Loads the sql.js WASM module once per process. */
export function loadSqlJs(): Promise<SqlJsStatic> {
  if (!sqlJs) {
    const wasmPath = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
    sqlJs = initSqlJs({ locateFile: () => wasmPath }).catch((err: unknown) => {
      sqlJs = null;
      throw err;
    });
  }
  return sqlJs;
}

/** All rows of a query, as objects keyed by column name. */
export function all(db: Database, sql: string, params: BindParams = []): Row[] {
  const stmt = db.prepare(sql);
  try {
    stmt.bind(params);
    const rows: Row[] = [];
    while (stmt.step()) rows.push(stmt.getAsObject());
    return rows;
  } finally {
    stmt.free();
  }
}

/** The first row of a query, or undefined. */
export function get(db: Database, sql: string, params: BindParams = []): Row | undefined {
  const stmt = db.prepare(sql);
  try {
    stmt.bind(params);
    return stmt.step() ? stmt.getAsObject() : undefined;
  } finally {
    stmt.free();
  }
}

/** Runs one statement; returns the number of rows it changed. */
export function run(db: Database, sql: string, params: BindParams = []): number {
  try {
    db.run(sql, params);
    return db.getRowsModified();
  } finally {
    noteWrite(db); // what was read before may have changed (read-memo.ts)
  }
}

/** Runs `fn` in one transaction: committed when it returns, rolled back when it throws. */
export function transaction<T>(db: Database, fn: () => T): T {
  db.run('BEGIN');
  let result: T;
  try {
    try {
      result = fn();
    } catch (err) {
      db.run('ROLLBACK');
      throw err;
    }
    db.run('COMMIT');
  } finally {
    // Statements prepared inside fn write too; whatever was read inside the transaction is stale.
    noteWrite(db);
  }
  return result;
}

export function str(v: SqlValue | undefined): string {
  return typeof v === 'string' ? v : v == null ? '' : String(v);
}

export function strOrNull(v: SqlValue | undefined): string | null {
  return v == null ? null : String(v);
}

export function num(v: SqlValue | undefined): number {
  return typeof v === 'number' ? v : v == null ? 0 : Number(v);
}

/** A JSON column parsed, or `fallback` when it is not a string or not JSON. */
export function parseJson<T>(text: unknown, fallback: T): T {
  if (typeof text !== 'string') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
