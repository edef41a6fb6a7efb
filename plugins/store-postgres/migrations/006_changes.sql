-- Refdesk PostgreSQL store, schema version 6: the change feed's log (plugins/store-postgres/notify.ts).
-- PgDatabase.publish() adds one row per change and NOTIFYs refdesk_changes with its seq; every
-- node LISTENs on a dedicated connection and also polls `seq > last` (a pooler in transaction
-- mode drops LISTEN; a listener that reconnects missed what happened meanwhile). Rows are
-- pruned after an hour by whichever node polls. Forward-only: never edit once released.
CREATE TABLE changes (
  seq   bigserial PRIMARY KEY,
  topic text NOT NULL,
  id    text NOT NULL,
  node  text NOT NULL,
  at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX changes_by_time ON changes (at);
