/**
 * One writer per data directory: `<dataDir>/refdesk.lock` names the process that writes it.
 * A lock whose process no longer exists is stale and is taken over.
 */
import { access, constants, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { RefdeskError } from './errors.ts';
import type { RuntimeEnv } from './contracts.ts';

export const LOCK_FILE_NAME = 'refdesk.lock';

export interface DataLockInfo {
  pid: number;
  mode: RuntimeEnv['mode'];
  /** The HTTP port when mode is 'server'. */
  port?: number;
  /** ISO 8601 time the lock was taken. */
  startedAt: string;
}

/** A lock file that cannot be parsed younger than this is assumed to be mid-creation. */
const UNREADABLE_GRACE_MS = 5000;

export function lockFilePath(dataDir: string): string {
  return join(dataDir, LOCK_FILE_NAME);
}

/** True when a process with this pid exists (EPERM means it exists but belongs to someone else). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseLock(text: string): DataLockInfo | null {
  try {
    const v = JSON.parse(text) as Partial<DataLockInfo>;
    if (!v || typeof v !== 'object' || !Number.isInteger(v.pid) || typeof v.mode !== 'string') return null;
    return {
      pid: v.pid!,
      mode: v.mode,
      ...(typeof v.port === 'number' ? { port: v.port } : {}),
      startedAt: typeof v.startedAt === 'string' ? v.startedAt : '',
    };
  } catch {
    return null;
  }
}

type LockFileState = { kind: 'absent' } | { kind: 'held'; info: DataLockInfo; alive: boolean } | { kind: 'unreadable'; ageMs: number };

async function inspectLock(path: string): Promise<LockFileState> {
  let text: string;
  let mtimeMs: number;
  try {
    [text, { mtimeMs }] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
  } catch (err) {
    // No lock file, or no data directory at all (a missing one, or a file where it should be).
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'absent' };
    throw err;
  }
  const info = parseLock(text);
  if (!info) return { kind: 'unreadable', ageMs: Date.now() - mtimeMs };
  return { kind: 'held', info, alive: isProcessAlive(info.pid) };
}

/**
 * The process holding the data directory, or null when there is none (no lock file, or a
 * stale one whose process has exited). The CLI uses this to find a running server.
 */
export async function readDataLock(dataDir: string): Promise<DataLockInfo | null> {
  const state = await inspectLock(lockFilePath(dataDir));
  return state.kind === 'held' && state.alive ? state.info : null;
}

function lockedError(dataDir: string, info: DataLockInfo): RefdeskError {
  const lockPath = lockFilePath(dataDir);
  const since = info.startedAt ? `, since ${info.startedAt}` : '';
  const self = info.pid === process.pid ? ' (this process: the store is already open)' : '';
  let what: string;
  if (info.mode === 'server') {
    const port = info.port !== undefined ? `, port ${info.port}` : '';
    const api = info.port !== undefined ? ` at http://localhost:${info.port}/` : '';
    what =
      `is in use by a running refdesk server (pid ${info.pid}${port}${since})${self}. ` +
      `Stop that server first, or make the change through its HTTP API${api}.`;
  } else {
    what =
      `is in use by another refdesk process (pid ${info.pid}, mode ${info.mode}${since})${self}. ` +
      `Wait for it to finish or stop it, then try again.`;
  }
  return new RefdeskError(
    'store_locked',
    `The data directory ${dataDir} ${what} Only one process may write to a data directory at a time. ` +
      `If no refdesk process with pid ${info.pid} is running, delete ${lockPath}.`,
  );
}

/**
 * Makes sure the data directory exists and this process can write it, before anything opens it.
 * Throws RefdeskError('config_error') with one sentence naming the directory, the cause and what
 * to do (a file in its place, no permission, a read-only file system, no space).
 */
export async function prepareDataDir(dataDir: string): Promise<void> {
  const fail = (why: string, fix: string) => new RefdeskError('config_error', `DATA_DIR ${dataDir} ${why}: ${fix}`);
  const explain = async (err: unknown): Promise<RefdeskError> => {
    const code = (err as NodeJS.ErrnoException).code;
    switch (code) {
      case 'EEXIST':
      case 'ENOTDIR': {
        const isFile = await stat(dataDir).then((st) => !st.isDirectory(), () => false);
        return fail(isFile ? 'is a file, not a directory' : 'is below a file, not a directory', 'set DATA_DIR to a directory (it is created if missing).');
      }
      case 'EACCES':
      case 'EPERM':
        return fail('is not writable by this user', 'give this user write permission on it, or set DATA_DIR to a directory it can write.');
      case 'EROFS':
        return fail('is on a read-only file system', 'set DATA_DIR to a writable directory.');
      case 'ENOSPC':
        return fail('is on a full disk', 'free some space or set DATA_DIR elsewhere.');
      default:
        return fail(`cannot be used (${code ?? (err as Error).message})`, 'set DATA_DIR to a writable directory.');
    }
  };
  try {
    await mkdir(dataDir, { recursive: true });
    if (!(await stat(dataDir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    await access(dataDir, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw await explain(err);
  }
}

export interface DataLock {
  readonly info: DataLockInfo;
  /** Removes the lock file if it is still ours. */
  release(): Promise<void>;
}

/**
 * Takes the data directory's lock by creating the lock file exclusively. Throws
 * RefdeskError('store_locked') naming the holder when a live process holds it; replaces a
 * stale lock (its process has exited). `onStale` is told about a takeover.
 */
export async function acquireDataLock(
  dataDir: string,
  info: DataLockInfo,
  onStale?: (stale: DataLockInfo | null) => void,
): Promise<DataLock> {
  const path = lockFilePath(dataDir);
  const text = JSON.stringify(info) + '\n';
  for (let attempt = 0; attempt < 5; attempt++) {
    let fh: Awaited<ReturnType<typeof open>> | undefined;
    try {
      fh = await open(path, 'wx', 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (fh) {
      try {
        await fh.writeFile(text, 'utf8');
        await fh.sync();
      } catch (err) {
        await fh.close().catch(() => {});
        await unlink(path).catch(() => {});
        throw err;
      }
      await fh.close();
      return { info, release: () => releaseDataLock(dataDir, info) };
    }

    const state = await inspectLock(path);
    if (state.kind === 'absent') continue; // released meanwhile: try again
    if (state.kind === 'held' && state.alive) throw lockedError(dataDir, state.info);
    if (state.kind === 'unreadable' && state.ageMs < UNREADABLE_GRACE_MS) {
      throw new RefdeskError(
        'store_locked',
        `The data directory ${dataDir} is being locked by another refdesk process right now (${path} is being written). Try again in a moment; if this persists, delete ${path}.`,
      );
    }
    onStale?.(state.kind === 'held' ? state.info : null);
    await unlink(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
  throw new RefdeskError('store_locked', `Could not lock the data directory ${dataDir}: other processes keep taking ${path}. Try again.`);
}

async function releaseDataLock(dataDir: string, info: DataLockInfo): Promise<void> {
  const path = lockFilePath(dataDir);
  const state = await inspectLock(path);
  if (state.kind === 'held' && state.info.pid === info.pid && state.info.startedAt === info.startedAt) {
    await unlink(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}
