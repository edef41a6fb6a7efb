-- Refdesk PostgreSQL store, schema version 5: a job's lease fences its build.
-- A node runs a job under a lease (jobs.claimed_by, lease_until, attempts: each claim adds one
-- attempt). A node that lost the lease (it stopped renewing it, and the job went back to the
-- queue or to another node) must never finalize its build over the result of the node that took
-- the job over. So a build remembers which attempt of its job made it, and the database refuses
-- to finalize it unless that attempt still holds an unexpired lease. Done here, in the database,
-- whatever code finalizes the build (plugins/store-postgres/builds.ts).

ALTER TABLE builds ADD COLUMN job_attempt integer;

-- A build begun for a leased job records the job's attempt.
CREATE FUNCTION refdesk_build_job_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.job_id IS NOT NULL AND NEW.job_attempt IS NULL THEN
    SELECT attempts INTO NEW.job_attempt FROM jobs WHERE id = NEW.job_id AND lease_until IS NOT NULL;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER builds_job_attempt BEFORE INSERT ON builds
  FOR EACH ROW EXECUTE FUNCTION refdesk_build_job_attempt();

-- Finalizing it needs that attempt to hold the job's lease still (time: the database's clock).
CREATE FUNCTION refdesk_build_lease_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  j record;
BEGIN
  IF NEW.state = 'finalized' AND OLD.state IS DISTINCT FROM 'finalized' AND NEW.job_attempt IS NOT NULL THEN
    SELECT state, attempts, lease_until INTO j FROM jobs WHERE id = NEW.job_id FOR UPDATE;
    IF NOT FOUND OR j.state <> 'running' OR j.attempts <> NEW.job_attempt OR j.lease_until IS NULL OR j.lease_until <= clock_timestamp() THEN
      RAISE EXCEPTION 'build % of job % cannot be finalized: this node lost the job''s lease (another node runs it now, or it went back to the queue)', NEW.id, NEW.job_id
        USING ERRCODE = 'RDL01';
    END IF;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER builds_lease_check BEFORE UPDATE OF state ON builds
  FOR EACH ROW EXECUTE FUNCTION refdesk_build_lease_check();
