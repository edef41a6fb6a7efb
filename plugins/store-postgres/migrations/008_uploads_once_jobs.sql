-- Refdesk PostgreSQL store, schema version 8: raw uploads any node can read, and start-up jobs
-- queued once per deployment. Forward-only: never edit this file once released.

-- Raw uploads (core/uploads.ts; plugins/store-postgres/uploads.ts): the archive or spec file a
-- node received for an upload or OpenAPI-upload library, kept until its job has ended, so that
-- whichever node claims the job can read it. Stored as chunked rows like segments: `name` is the
-- file's name in the receiving node's uploads folder (a random UUID and an extension), the same
-- on every node; the bytes are in `upload_chunks` in pieces, checked against size and SHA-256.
CREATE TABLE uploads (
  name       text PRIMARY KEY,
  bytes      bigint NOT NULL,
  chunks     integer NOT NULL,
  sha256     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX uploads_by_time ON uploads (created_at);

CREATE TABLE upload_chunks (
  name  text NOT NULL REFERENCES uploads (name) ON DELETE CASCADE,
  seq   integer NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (name, seq)
);

-- Jobs every starting node may find to do (re-chunking, embeddings: core/rechunk.ts,
-- core/vectors.ts) are queued with `once_per_version`: at most one such job per library version
-- is queued or running, whichever nodes queue it at the same moment (INSERT ... ON CONFLICT DO
-- NOTHING against this index: PgJobs.createJobOnce).
ALTER TABLE jobs ADD COLUMN once_per_version boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX jobs_once_per_version ON jobs (library_id, version)
  WHERE once_per_version AND state IN ('queued', 'running');
