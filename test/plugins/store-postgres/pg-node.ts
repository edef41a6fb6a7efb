/**
 * Nodes of one deployment for the PostgreSQL store's cluster tests (change feed, shared rate
 * limits, readiness): a PgDatabase per node on one database of a throwaway cluster
 * (test/helpers/postgres.ts), each with its own data directory, and a logger that keeps lines.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../../core/services.ts';
import { memoryLogger, type LogEntry } from '../store-embedded/helpers.ts';
import { PgDatabase, type PostgresStoreOptions } from '../../../plugins/store-postgres/database.ts';

export type LogLine = LogEntry;

export interface TestNodes {
  /** Opens a node (a PgDatabase) on `url`; closed by `closeAll`. */
  open(url: string, options?: Partial<PostgresStoreOptions>): Promise<PgDatabase & { log: LogLine[] }>;
  closeAll(): Promise<void>;
}

export function testNodes(): TestNodes {
  const nodes: PgDatabase[] = [];
  const dirs: string[] = [];
  return {
    async open(url, options = {}) {
      const dataDir = mkdtempSync(join(tmpdir(), 'refdesk-pgnode-'));
      dirs.push(dataDir);
      const logger = memoryLogger();
      const db = new PgDatabase(options, { env: { dataDir, mode: 'server' }, logger, clock: systemClock, databaseUrl: url });
      await db.open();
      nodes.push(db);
      return Object.assign(db, { log: logger.entries });
    },
    async closeAll() {
      for (const n of nodes.splice(0)) await n.close().catch(() => undefined);
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** Waits until `check()` is true, polling every 20 ms; fails after `ms` with `what`. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
