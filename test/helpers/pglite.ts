/**
 * PGlite (PostgreSQL compiled to WebAssembly, in this process) with its bundled pgvector
 * extension, served over the PostgreSQL wire protocol by @electric-sql/pglite-socket on a free
 * port of 127.0.0.1, so the store's pgvector SQL runs through node-postgres exactly as against a
 * real server. It serves ONE session at a time: connect with a pool of max 1. SKIP LOCKED,
 * advisory locks and LISTEN are tested on Debian's server (test/helpers/postgres.ts) instead.
 * The socket server itself admits two connections: with one, a client that reconnects (after
 * an error, or a pool replacing a client) is turned away with "Too many connections" while the
 * old socket's teardown is still under way (observed with pglite-socket 0.2.17: the next query
 * failed with "Connection terminated unexpectedly"). PGlite still runs one query at a time.
 *
 *   const lite = await startPglite();
 *   const pool = new pg.Pool({ connectionString: lite.url, max: 1 });
 *   ...
 *   await pool.end(); await lite.stop();
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { freePort } from './postgres.ts';

export interface TestPglite {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`; one session at a time. */
  url: string;
  port: number;
  db: PGlite;
  /** Stops the socket server and closes the database; safe to call twice. */
  stop(): Promise<void>;
}

export async function startPglite(): Promise<TestPglite> {
  const db = await PGlite.create({ extensions: { vector } });
  // The socket server binds the port it is given; a free one is taken just before. Two
  // connections: see the module comment (the pool on it still has max 1).
  const port = await freePort();
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port, maxConnections: 2 });
  try {
    await server.start();
  } catch (e) {
    await db.close();
    throw e;
  }
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    db,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      await db.close();
    },
  };
}
