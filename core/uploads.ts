/**
 * Raw uploads: files the server saved under `<dataDir>/uploads` for an upload or OpenAPI-upload
 * library (its spec's `path`). A raw upload is kept only while a queued or running job may read
 * it: it is removed when its job ends, and files no such job needs are swept at start.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { LibrarySource } from './contracts.ts';
import type { Kernel } from './kernel.ts';

/** Source kinds whose spec `path` may name a raw upload. */
const UPLOAD_KINDS = new Set(['upload', 'openapi']);

export function uploadsDir(dataDir: string): string {
  return join(dataDir, 'uploads');
}

/** The raw upload a library's source reads (a file inside `<dataDir>/uploads`), or null. */
export function rawUploadOf(dataDir: string, source: LibrarySource): string | null {
  const path = source.spec?.path;
  if (!UPLOAD_KINDS.has(source.kind) || typeof path !== 'string' || path === '') return null;
  const dir = uploadsDir(dataDir);
  const abs = resolve(dir, path);
  const rel = relative(dir, abs);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  return abs;
}

/** The raw uploads that queued or running jobs (other than `exceptJobId`) will read. */
async function uploadsInUse(kernel: Kernel, exceptJobId?: string): Promise<Set<string>> {
  const jobs = [...(await kernel.store.listJobs({ state: 'queued' })), ...(await kernel.store.listJobs({ state: 'running' }))];
  const libraries = new Set(jobs.filter((j) => j.id !== exceptJobId).map((j) => j.libraryId));
  const inUse = new Set<string>();
  for (const id of libraries) {
    const lib = await kernel.store.getLibrary(id);
    const file = lib ? rawUploadOf(kernel.env.dataDir, lib.source) : null;
    if (file) inUse.add(file);
  }
  return inUse;
}

/**
 * Removes a raw upload once the job that read it has ended, unless another queued or running
 * job will read it too. Returns whether the file was removed.
 */
export async function releaseUpload(kernel: Kernel, file: string, endedJobId: string): Promise<boolean> {
  if ((await uploadsInUse(kernel, endedJobId)).has(file)) return false;
  await rm(file, { force: true });
  return true;
}

/**
 * Removes the raw uploads no queued or running job needs, among the files last changed before
 * `before` (files written since may belong to an upload being received). Returns their names.
 */
export async function sweepUploads(kernel: Kernel, before: Date): Promise<string[]> {
  const dir = uploadsDir(kernel.env.dataDir);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const inUse = await uploadsInUse(kernel);
  const removed: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    if (inUse.has(file)) continue;
    const info = await stat(file).catch(() => null);
    if (!info || info.mtimeMs >= before.getTime()) continue;
    await rm(file, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
