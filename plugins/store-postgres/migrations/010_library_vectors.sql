-- Refdesk PostgreSQL store, schema version 10: library-search vectors shared by the nodes (issue 24).
-- One vector per library (core/vectors.ts writeLibraryVector: its title, description and top
-- headings, embedded with its default version), so that every node ranks libraries by it, not
-- only the node that ran the embedding. `vector` is the float32 values, little-endian; the model
-- and dimension say which embedder made it (a node with another embedder ignores it). Each node
-- keeps them in memory, read again when the change feed names the library
-- (plugins/store-postgres/library-vectors.ts). Forward-only: never edit this file once released.
CREATE TABLE library_vectors (
  library_id text PRIMARY KEY REFERENCES libraries (id) ON DELETE CASCADE ON UPDATE CASCADE,
  model      text NOT NULL,
  dimensions integer NOT NULL CHECK (dimensions > 0),
  vector     bytea NOT NULL CHECK (octet_length(vector) = 4 * dimensions),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
