/** The embedded store's SQLite schema and its version check. */
import { RefdeskError } from '../../core/errors.ts';
import { get, type Database } from './sqlite.ts';

export const SCHEMA_VERSION = 5;

const SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS libraries (
  id              TEXT PRIMARY KEY,
  title           TEXT NOT NULL,
  description     TEXT NOT NULL DEFAULT '',
  branch          TEXT NOT NULL DEFAULT '',
  source_kind     TEXT NOT NULL,
  source_spec     TEXT NOT NULL,
  stars           REAL NOT NULL DEFAULT 0,
  trust_score     REAL NOT NULL DEFAULT 0,
  benchmark_score REAL NOT NULL DEFAULT 0,
  created_at      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
  library_id       TEXT NOT NULL,
  version          TEXT NOT NULL,
  active_build_id  TEXT,
  last_update_date TEXT,
  total_tokens     INTEGER NOT NULL DEFAULT 0,
  total_snippets   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (library_id, version)
);
CREATE TABLE IF NOT EXISTS builds (
  id          TEXT PRIMARY KEY,
  library_id  TEXT NOT NULL,
  version     TEXT NOT NULL,
  job_id      TEXT,
  state       TEXT NOT NULL CHECK (state IN ('building', 'finalized', 'failed')),
  started_at  TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX IF NOT EXISTS builds_by_library ON builds (library_id, version);
CREATE INDEX IF NOT EXISTS builds_by_state ON builds (state);
CREATE TABLE IF NOT EXISTS snippets (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  build_id    TEXT NOT NULL,
  seq         INTEGER NOT NULL,
  type        TEXT NOT NULL,
  title       TEXT NOT NULL,
  description TEXT NOT NULL,
  language    TEXT NOT NULL,
  code        TEXT NOT NULL,
  content     TEXT NOT NULL,
  breadcrumb  TEXT NOT NULL,
  page_title  TEXT NOT NULL,
  source_path TEXT NOT NULL,
  source_url  TEXT,
  anchor      TEXT,
  line_start  INTEGER NOT NULL,
  line_end    INTEGER NOT NULL,
  tokens      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS snippets_by_build ON snippets (build_id, seq);
CREATE TABLE IF NOT EXISTS jobs (
  id          TEXT PRIMARY KEY,
  library_id  TEXT NOT NULL,
  version     TEXT NOT NULL,
  kind        TEXT NOT NULL,
  state       TEXT NOT NULL,
  progress    TEXT NOT NULL,
  error       TEXT,
  created_at  TEXT NOT NULL,
  started_at  TEXT,
  finished_at TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_library ON jobs (library_id, created_at);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state);
CREATE TABLE IF NOT EXISTS job_logs (
  job_id  TEXT NOT NULL,
  seq     INTEGER NOT NULL,
  at      TEXT NOT NULL,
  level   TEXT NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`;

/**
 * Version 2: the documents of each build (so a refresh can skip unchanged documents), API keys
 * (hashed) and library aliases (renamed libraries answer 301).
 */
const SCHEMA_V2 = `
CREATE TABLE IF NOT EXISTS documents (
  build_id  TEXT NOT NULL,
  path      TEXT NOT NULL,
  hash      TEXT NOT NULL,
  meta      TEXT NOT NULL DEFAULT '{}',
  chunker   TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (build_id, path)
);
CREATE TABLE IF NOT EXISTS api_keys (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  plan       TEXT NOT NULL,
  role       TEXT NOT NULL,
  prefix     TEXT NOT NULL,
  hash       TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS library_aliases (
  alias      TEXT PRIMARY KEY,
  target     TEXT NOT NULL,
  created_at TEXT NOT NULL
);
`;

/**
 * Version 3: each finalized build records its index segment (plugins/store-embedded/segment.ts):
 * the file name under <dataDir>/segments, its format and checksum. NULL: none written yet (a
 * build finalized by an older version), made at its first query. A finalized build's snippets
 * leave the snippets table for one compressed record (build_snippets: gzip of the JSON array of
 * its snippets, in order), the copy its segment is rebuilt from; the snippets table holds the
 * builds being staged (and builds finalized by an older version).
 */
const SCHEMA_V3 = `
ALTER TABLE builds ADD COLUMN segment_file TEXT;
ALTER TABLE builds ADD COLUMN segment_format INTEGER;
ALTER TABLE builds ADD COLUMN segment_checksum TEXT;
CREATE TABLE IF NOT EXISTS build_snippets (
  build_id TEXT PRIMARY KEY,
  data     BLOB NOT NULL
);
`;

/**
 * Version 4: the admin account (one row once its factory credentials are changed), server-side
 * sessions (by the SHA-256 of their id) and the audit log of admin actions
 * (plugins/store-embedded/auth-tables.ts).
 */
const SCHEMA_V4 = `
CREATE TABLE IF NOT EXISTS admin_account (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  username      TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
  id_hash      TEXT PRIMARY KEY,
  username     TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  must_change  INTEGER NOT NULL,
  client       TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_log (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  at      TEXT NOT NULL,
  actor   TEXT NOT NULL,
  action  TEXT NOT NULL,
  target  TEXT,
  outcome TEXT NOT NULL,
  client  TEXT NOT NULL,
  details TEXT NOT NULL DEFAULT '{}'
);
`;

/**
 * Version 5: a finalized build's snippets are in a pack file beside its segment
 * (plugins/store-embedded/build-pack.ts, `<dataDir>/segments/<buildId>.pack`), named here; NULL
 * for a build finalized before packs (build_snippets or snippet rows, moved to a pack when its
 * segment is next rebuilt). Staged snippets are in a staging file, no longer in the snippets
 * table (whose AUTOINCREMENT sequence still numbers them).
 */
const SCHEMA_V5 = `
ALTER TABLE builds ADD COLUMN pack_file TEXT;
`;

/** The schema version recorded in the file, or null for an empty database. */
export function readSchemaVersion(db: Database): number | null {
  const hasMeta = get(db, "SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
  if (!hasMeta) return null;
  const row = get(db, "SELECT value FROM meta WHERE key = 'schema_version'");
  return row ? Number(row.value) : null;
}

/**
 * Creates the schema when absent and checks the file is one this code understands.
 * Returns true when it changed the database.
 */
export function ensureSchema(db: Database, fileForMessages: string): boolean {
  const found = readSchemaVersion(db);
  if (found !== null && !(found >= 1)) {
    throw new RefdeskError('config_error', `The data file ${fileForMessages} has an unreadable schema version; it was not written by refdesk.`);
  }
  if (found !== null && found > SCHEMA_VERSION) {
    throw new RefdeskError(
      'config_error',
      `The data file ${fileForMessages} was written by a newer refdesk (schema ${found}; this one understands up to ${SCHEMA_VERSION}). Upgrade refdesk or use another data directory.`,
    );
  }
  if (found === SCHEMA_VERSION) return false;
  // Migrations: each step is additive, run once from the version found.
  if (found === null || found < 1) db.exec(SCHEMA_V1);
  if (found === null || found < 2) db.exec(SCHEMA_V2);
  if (found === null || found < 3) db.exec(SCHEMA_V3);
  if (found === null || found < 4) db.exec(SCHEMA_V4);
  // Idempotent: a file marked older that already has the column (as the schema tests make them) keeps it.
  if ((found === null || found < 5) && !db.exec("SELECT 1 FROM pragma_table_info('builds') WHERE name = 'pack_file'")[0]) db.exec(SCHEMA_V5);
  db.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", [String(SCHEMA_VERSION)]);
  return true;
}
