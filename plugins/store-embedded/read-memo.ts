/**
 * Catalog reads answered from memory while the database has not changed. A served question used to
 * read the same small rows from sql.js on every request (the API key by its hash, the policy
 * setting, the versions for the answer's ETag, the served build's segment file): each read a
 * prepared statement, bound, stepped and freed, about 1 ms of the main thread per request in all.
 *
 * Every write through sqlite.ts (`run`, `transaction`) counts as a change of its database
 * (`noteWrite`); a memoised value is kept only while no write happened since it was read, so a
 * read never answers what the database no longer holds, whatever the write was. Writes are rare
 * while questions are served (a session touch, a job's progress), and each one only makes the
 * next reads go to sql.js again. The embedded store is one process's (DATA_DIR's lock), so no
 * other process changes this database under it.
 *
 * Values are shared by every caller: memoise rows or strings, and give callers their own copy of
 * anything they could change.
 */
import type { Database } from 'sql.js';

interface Memo {
  writes: number;
  values: Map<string, unknown>;
}

/** Writes per database (sql.js objects; a replaced database starts again). */
const writeCounts = new WeakMap<Database, number>();
const memos = new WeakMap<Database, Memo>();

/** Values kept per database at most (a flood of unknown API keys cannot grow it without bound). */
const MAX_VALUES = 4096;

/** Statistics for tests and reports: reads answered from memory, and reads that went to sql.js. */
export const readMemoStats = { hits: 0, misses: 0 };

/** Called by every write helper after (and, for transactions, around) its statements. */
export function noteWrite(db: Database): void {
  writeCounts.set(db, (writeCounts.get(db) ?? 0) + 1);
}

/**
 * The value `read` gives for `key`, from memory when it was read since the database's last
 * write. `read` must only read this database (a value it throws is never kept).
 */
export function memoRead<T>(db: Database, key: string, read: () => T): T {
  const writes = writeCounts.get(db) ?? 0;
  let memo = memos.get(db);
  if (!memo || memo.writes !== writes) {
    memo = { writes, values: new Map() };
    memos.set(db, memo);
  } else if (memo.values.has(key)) {
    readMemoStats.hits++;
    return memo.values.get(key) as T;
  }
  readMemoStats.misses++;
  const value = read();
  // A read that (against the rule) wrote is not kept.
  if ((writeCounts.get(db) ?? 0) === writes) {
    if (memo.values.size >= MAX_VALUES) memo.values.clear();
    memo.values.set(key, value);
  }
  return value;
}
