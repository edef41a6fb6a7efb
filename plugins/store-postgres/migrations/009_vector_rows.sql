-- Refdesk PostgreSQL store, schema version 9: build vectors without pgvector (issue 24).
-- Where the server has no `vector` extension (migration 002 skipped), a build's vectors are kept
-- as a flat matrix of normalised float32 rows (core/vector-index.ts's `flat` file) cut in pieces,
-- like its index segment in segment_chunks, so every node fetches and caches them; the model,
-- dimension, checksum and text hashes stay in builds.embedding_* (001, 004). The size, piece
-- count and SHA-256 of the matrix are recorded here to check what a node fetched.
CREATE TABLE vector_chunks (
  build_id text NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
  seq      integer NOT NULL CHECK (seq >= 0),
  bytes    bytea NOT NULL,
  PRIMARY KEY (build_id, seq)
);
ALTER TABLE builds ADD COLUMN vectors_bytes bigint;
ALTER TABLE builds ADD COLUMN vectors_chunks integer;
