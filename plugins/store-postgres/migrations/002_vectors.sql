-- refdesk:requires-extension vector
-- Refdesk PostgreSQL store, schema version 2: snippet vectors in pgvector.
-- The line above makes plugins/store-postgres/migrate.ts apply this file only when the server
-- offers the extension (pg_available_extensions); otherwise it is recorded as skipped (the store
-- then keeps vectors in the segments, as the embedded store does) and applied by a later
-- `refdesk db migrate` once the extension is installed.
--
-- Dimension strategy: one table for every model; each row carries its model and dimension (the
-- build's embedding_model / embedding_dimensions), the column is an untyped `vector`. HNSW needs
-- a fixed dimension, so each dimension gets a PARTIAL expression index on a cast, and a query
-- names the same cast and predicate to use it:
--   ORDER BY embedding::vector(768) <=> $1::vector(768) ... WHERE dimensions = 768
-- Below are the dimensions of the models the bundled embedders default to (384, 768, 1024,
-- 1536); `vector` HNSW indexes stop at 2000 dimensions, so 3072 (text-embedding-3-large,
-- gemini-embedding-001 at full size) is indexed as halfvec(3072). Any other dimension is
-- indexed by the store when the first build using it is finalized (same naming:
-- snippet_vectors_hnsw_<dims>), not by a migration.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE snippet_vectors (
  build_id   text NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
  -- the snippet's position in its build's segment
  ordinal    integer NOT NULL CHECK (ordinal >= 0),
  model      text NOT NULL,
  dimensions integer NOT NULL CHECK (dimensions > 0),
  embedding  vector NOT NULL,
  PRIMARY KEY (build_id, ordinal),
  CHECK (vector_dims(embedding) = dimensions)
);

CREATE INDEX snippet_vectors_hnsw_384 ON snippet_vectors USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE dimensions = 384;
CREATE INDEX snippet_vectors_hnsw_768 ON snippet_vectors USING hnsw ((embedding::vector(768)) vector_cosine_ops) WHERE dimensions = 768;
CREATE INDEX snippet_vectors_hnsw_1024 ON snippet_vectors USING hnsw ((embedding::vector(1024)) vector_cosine_ops) WHERE dimensions = 1024;
CREATE INDEX snippet_vectors_hnsw_1536 ON snippet_vectors USING hnsw ((embedding::vector(1536)) vector_cosine_ops) WHERE dimensions = 1536;
CREATE INDEX snippet_vectors_hnsw_3072 ON snippet_vectors USING hnsw ((embedding::halfvec(3072)) halfvec_cosine_ops) WHERE dimensions = 3072;
