/** Shared fixtures for the embedded store tests. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger, RuntimeEnv } from '../../../core/contracts.ts';
import { EmbeddedStore, type EmbeddedStoreOptions } from '../../../plugins/store-embedded/embedded-store.ts';
import { loggerFrom } from '../../../core/services.ts';

export interface LogEntry {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

/** A logger that records what it is told. */
export function memoryLogger(entries: LogEntry[] = []): Logger & { entries: LogEntry[] } {
  const log = (level: string, message: string, fields?: Record<string, unknown>) => void entries.push({ level, message, fields });
  return { entries, ...loggerFrom(log) };
}

export const realClock = { now: () => new Date() };

export function makeStore(
  dataDir: string,
  mode: RuntimeEnv['mode'] = 'writer',
  options: Partial<EmbeddedStoreOptions> = {},
  extra: { port?: number; logger?: Logger } = {},
): EmbeddedStore {
  const env: RuntimeEnv = { dataDir, mode, ...(extra.port !== undefined ? { port: extra.port } : {}) };
  return new EmbeddedStore(options, { env, logger: extra.logger ?? memoryLogger(), clock: realClock });
}

export async function tempDataDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'refdesk-store-'));
  // A data dir that does not exist yet: the store creates it.
  return { dir: join(root, 'data'), remove: () => rm(root, { recursive: true, force: true }) };
}

/** Opens the store, runs `fn` on it, and closes it (also when `fn` throws). */
export async function withOpenStore<T>(store: EmbeddedStore, fn: (store: EmbeddedStore) => Promise<T>): Promise<T> {
  await store.open();
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * Runs `fn` with an open store on a fresh data directory and a `reopen` that closes it and opens
 * another on the same directory (what a restart sees, in another mode or with other options if
 * asked); everything is closed and removed after.
 */
export async function withReopenableStore(
  fn: (ctx: {
    dir: string;
    store: EmbeddedStore;
    logs: LogEntry[];
    reopen: (mode?: 'writer' | 'reader', options?: object) => Promise<EmbeddedStore>;
  }) => Promise<void>,
  options: object = {},
): Promise<void> {
  const data = await tempDataDir();
  const logs: LogEntry[] = [];
  let store = makeStore(data.dir, 'writer', options, { logger: memoryLogger(logs) });
  await store.open();
  try {
    await fn({
      dir: data.dir,
      store,
      logs,
      reopen: async (mode = 'writer', opts = options) => {
        await store.close();
        store = makeStore(data.dir, mode, opts, { logger: memoryLogger(logs) });
        await store.open();
        return store;
      },
    });
  } finally {
    await store.close();
    await data.remove();
  }
}
