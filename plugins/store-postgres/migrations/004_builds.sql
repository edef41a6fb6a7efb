-- Refdesk PostgreSQL store, schema version 4: what the builds role (plugins/store-postgres/builds.ts)
-- needs beyond 001. Forward-only: never edit this file once released.

-- Snippet ids are unique across builds and libraries (core/contracts.ts StoredSnippet.id), as
-- the embedded store's AUTOINCREMENT is: each addSnippets takes its ids from this sequence.
CREATE SEQUENCE snippet_ids AS bigint START 1;

-- The SHA-256 of the whole segment file (builds.segment_checksum is the segment header's own
-- checksum, which openSegment checks): a node verifies a fetched segment against it before
-- caching it.
ALTER TABLE builds ADD COLUMN segment_sha256 text;

-- The order the source gave a build's documents in: a re-chunk from the stored documents
-- (document_chunks) reads them in that order, as the embedded store's stored-docs file does.
ALTER TABLE build_documents ADD COLUMN ord integer;
ALTER TABLE build_documents ADD COLUMN stored boolean NOT NULL DEFAULT false;
