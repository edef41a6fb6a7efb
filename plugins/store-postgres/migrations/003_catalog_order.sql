-- Refdesk PostgreSQL store, schema version 3: insertion order of jobs and builds.
-- Two jobs (or builds) of a library may be created in the same millisecond; the catalog's
-- "newest job" and "newest build" of a library, and listJobs' newest-first order, break such ties
-- by insertion order, as the embedded store does with SQLite's rowid.
ALTER TABLE jobs ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE builds ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX jobs_newest_by_library ON jobs (library_id, version, created_at DESC, seq DESC);
-- API keys are listed oldest first; two keys made in the same millisecond keep their order.
ALTER TABLE api_keys ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
