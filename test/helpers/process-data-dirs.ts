/**
 * Data directories for a test file's `refdesk` processes (test/e2e/refdesk-process.ts): the
 * function returned makes one; after the file's tests every process is stopped, then every
 * directory made is removed. One call per test file, at its top level.
 */
import { after } from 'node:test';
import { makeDataDir, removeDataDir, stopAll } from '../e2e/refdesk-process.ts';

export function processDataDirs(prefix?: string): () => string {
  const dirs: string[] = [];
  after(async () => {
    await stopAll();
    for (const d of dirs) removeDataDir(d);
  });
  return () => {
    const d = makeDataDir(prefix);
    dirs.push(d);
    return d;
  };
}
