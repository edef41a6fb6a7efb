-- Refdesk PostgreSQL store, schema version 1: every table the store roles share
-- (core/contracts.ts: catalog, builds, jobs, API keys, sessions, audit, settings), plus the
-- rate-limit counters the nodes flush. Forward-only: never edit this file once released; add
-- a new NNN_name.sql instead (plugins/store-postgres/migrate.ts refuses an edited one).
-- Times are timestamptz; ids are the text ids the kernel makes.

-- catalog --------------------------------------------------------------------------------
CREATE TABLE libraries (
  id              text PRIMARY KEY,
  title           text NOT NULL,
  description     text NOT NULL DEFAULT '',
  branch          text NOT NULL DEFAULT '',
  source_kind     text NOT NULL,
  -- the source spec; values under the kind's secret keys are sealed (core/secrets.ts, ENCRYPTION_KEY)
  source_spec     jsonb NOT NULL DEFAULT '{}',
  stars           double precision NOT NULL DEFAULT 0,
  trust_score     double precision NOT NULL DEFAULT 0,
  benchmark_score double precision NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE library_aliases (
  alias      text PRIMARY KEY,
  target     text NOT NULL REFERENCES libraries (id) ON DELETE CASCADE ON UPDATE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX library_aliases_by_target ON library_aliases (target);

-- builds: a build's index segment (the snippets, their lexical index and vectors when pgvector
-- is absent) is stored as ordered chunks of bytes, so any node can load any library piece by piece.
CREATE TABLE builds (
  id               text PRIMARY KEY,
  library_id       text NOT NULL REFERENCES libraries (id) ON DELETE CASCADE ON UPDATE CASCADE,
  version          text NOT NULL,
  job_id           text,
  state            text NOT NULL CHECK (state IN ('building', 'finalized', 'failed')),
  started_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz,
  total_snippets   bigint NOT NULL DEFAULT 0,
  total_tokens     bigint NOT NULL DEFAULT 0,
  segment_format   integer,
  segment_bytes    bigint,
  segment_chunks   integer,
  segment_checksum text,
  -- the embedding model and its dimension for this build's vectors (null: no vectors)
  embedding_model      text,
  embedding_dimensions integer CHECK (embedding_dimensions > 0)
);
CREATE INDEX builds_by_library ON builds (library_id, version);
CREATE INDEX builds_building ON builds (started_at) WHERE state = 'building';

CREATE TABLE versions (
  library_id       text NOT NULL REFERENCES libraries (id) ON DELETE CASCADE ON UPDATE CASCADE,
  version          text NOT NULL,
  active_build_id  text REFERENCES builds (id) ON DELETE SET NULL,
  last_update_date timestamptz,
  total_tokens     bigint NOT NULL DEFAULT 0,
  total_snippets   bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (library_id, version)
);

CREATE TABLE segment_chunks (
  build_id text NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
  seq      integer NOT NULL CHECK (seq >= 0),
  bytes    bytea NOT NULL,
  PRIMARY KEY (build_id, seq)
);

-- the documents of each build (a refresh skips unchanged ones) ...
CREATE TABLE build_documents (
  build_id text NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
  path     text NOT NULL,
  hash     text NOT NULL,
  meta     jsonb NOT NULL DEFAULT '{}',
  chunker  text NOT NULL DEFAULT '',
  PRIMARY KEY (build_id, path)
);

-- ... and their stored text (core/stored-docs.ts), chunked like the segments.
CREATE TABLE document_chunks (
  build_id text NOT NULL,
  path     text NOT NULL,
  seq      integer NOT NULL CHECK (seq >= 0),
  bytes    bytea NOT NULL,
  PRIMARY KEY (build_id, path, seq),
  FOREIGN KEY (build_id, path) REFERENCES build_documents (build_id, path) ON DELETE CASCADE
);

-- jobs: claimed with FOR UPDATE SKIP LOCKED; a running job holds a lease its node's heartbeat
-- renews; a lease past lease_until may be taken over by another node.
CREATE TABLE jobs (
  id                  text PRIMARY KEY,
  library_id          text NOT NULL REFERENCES libraries (id) ON DELETE CASCADE ON UPDATE CASCADE,
  version             text NOT NULL,
  kind                text NOT NULL,
  state               text NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'interrupted')),
  progress            jsonb NOT NULL DEFAULT '{}',
  error               jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  started_at          timestamptz,
  finished_at         timestamptz,
  claimed_by          text,
  lease_until         timestamptz,
  heartbeat_at        timestamptz,
  attempts            integer NOT NULL DEFAULT 0,
  cancel_requested_at timestamptz
);
CREATE INDEX jobs_by_library ON jobs (library_id, created_at);
CREATE INDEX jobs_queued ON jobs (created_at) WHERE state = 'queued';
CREATE INDEX jobs_leases ON jobs (lease_until) WHERE state = 'running';

CREATE TABLE job_logs (
  job_id  text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  seq     integer NOT NULL,
  at      timestamptz NOT NULL DEFAULT now(),
  level   text NOT NULL CHECK (level IN ('debug', 'info', 'warn', 'error')),
  message text NOT NULL,
  PRIMARY KEY (job_id, seq)
);

-- API keys (hashes only) -----------------------------------------------------------------
CREATE TABLE api_keys (
  id         text PRIMARY KEY,
  name       text NOT NULL,
  plan       text NOT NULL,
  role       text NOT NULL CHECK (role IN ('member', 'admin')),
  prefix     text NOT NULL,
  hash       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

-- the admin account (one row once its factory credentials are changed) and its sessions -----
CREATE TABLE admin_account (
  id            integer PRIMARY KEY CHECK (id = 1),
  username      text NOT NULL,
  password_hash text NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
  id_hash                 text PRIMARY KEY,
  username                text NOT NULL,
  created_at              timestamptz NOT NULL,
  last_seen_at            timestamptz NOT NULL,
  expires_at              timestamptz NOT NULL,
  must_change_credentials boolean NOT NULL DEFAULT false,
  client                  text NOT NULL
);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

-- settings: JSON values by key; secret values inside are sealed under ENCRYPTION_KEY
-- (identical on every node). The access policy is the `policy` setting (core/settings.ts).
CREATE TABLE settings (
  key        text PRIMARY KEY,
  value      jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- audit log ------------------------------------------------------------------------------
CREATE TABLE audit_log (
  id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at      timestamptz NOT NULL,
  actor   text NOT NULL,
  action  text NOT NULL,
  target  text,
  outcome text NOT NULL CHECK (outcome IN ('success', 'failure', 'denied')),
  client  text NOT NULL,
  details jsonb NOT NULL DEFAULT '{}'
);

-- rate limits: fixed windows per client; each node counts in memory and adds its counts here
-- in small batches (INSERT ... ON CONFLICT DO UPDATE SET count = count + EXCLUDED.count).
CREATE TABLE rate_limit_counters (
  client       text NOT NULL,
  window_start timestamptz NOT NULL,
  count        bigint NOT NULL DEFAULT 0 CHECK (count >= 0),
  PRIMARY KEY (client, window_start)
);
CREATE INDEX rate_limit_counters_by_window ON rate_limit_counters (window_start);
