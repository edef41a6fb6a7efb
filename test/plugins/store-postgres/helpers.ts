/**
 * PostgresStore fixtures on Debian's PostgreSQL server (test/helpers/postgres.ts): one cluster
 * per test file, started on first use, a fresh database per store.
 */
import { after } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MakeStore } from '../../../core/testing/store-contract.ts';
import { PostgresStore, type PostgresStoreOptions } from '../../../plugins/store-postgres/store.ts';
import { memoryLogger, realClock } from '../store-embedded/helpers.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';

let cluster: Promise<TestPostgres> | null = null;
let databases = 0;

// Registered at import (the file's top level): a hook registered inside a test would run after that test.
after(async () => {
  if (cluster) await (await cluster).stop();
});

/** The file's cluster (started at first use, stopped after the file's tests). */
export function testCluster(): Promise<TestPostgres> {
  cluster ??= startPostgres();
  return cluster;
}

/** A fresh database on the file's cluster; its URL. */
export async function freshDatabaseUrl(): Promise<string> {
  return (await testCluster()).createDatabase(`store_${process.pid}_${++databases}`);
}

/** A PostgresStore (not opened) on `url`, with a data directory of its own. */
export async function pgStore(url: string, options: Partial<PostgresStoreOptions> = {}): Promise<{ store: PostgresStore; remove(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'refdesk-pgstore-'));
  const store = new PostgresStore({ poolSize: 4, ...options }, { env: { dataDir, mode: 'server' }, logger: memoryLogger(), clock: realClock, databaseUrl: url });
  return { store, remove: () => rm(dataDir, { recursive: true, force: true }) };
}

/** A fresh, open PostgresStore on a fresh database; `pick` hands the suite the store or a role object. */
export function postgres<S>(pick: (store: PostgresStore) => S): MakeStore<S> {
  return async () => {
    const url = await freshDatabaseUrl();
    const { store, remove } = await pgStore(url);
    await store.open();
    return {
      store: pick(store),
      async cleanup() {
        await store.close();
        await remove();
      },
    };
  };
}

/** A fresh database and `n` open stores on it (n nodes); all closed and removed after `fn`. */
export async function withStores(n: number, fn: (url: string, ...stores: PostgresStore[]) => Promise<void>): Promise<void> {
  const url = await freshDatabaseUrl();
  const made: Array<{ store: PostgresStore; remove(): Promise<void> }> = [];
  try {
    for (let i = 0; i < n; i++) made.push(await pgStore(url));
    for (const m of made) await m.store.open();
    await fn(url, ...made.map((m) => m.store));
  } finally {
    for (const m of made) {
      await m.store.close();
      await m.remove();
    }
  }
}

/** Resolves with the next change event of `store`'s feed that matches (from `node` when given). */
export function nextChange(store: PostgresStore, topic: string, id: string, node?: string): Promise<void> {
  return new Promise((resolve) => {
    const on = (t: string, i: string, n: string) => {
      if (t === topic && i === id && (node === undefined || n === node)) {
        store.database.changes.off('change', on);
        resolve();
      }
    };
    store.database.changes.on('change', on);
  });
}
