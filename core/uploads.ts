/**
 * Raw uploads: files the server saved under `<dataDir>/uploads` for an upload or OpenAPI-upload
 * library (its spec's `path`). A raw upload is kept only while a queued or running job may read
 * it: it is removed when its job ends, and files no such job needs are swept at start.
 */
import { rm, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { LibrarySource } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { readdirOrEmpty } from './missing-files.ts';

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

/** Raw uploads running jobs of this process read now (a file -> how many jobs read it). */
const reading = new WeakMap<Kernel, Map<string, number>>();

/**
 * Marks a raw upload as read by a running job until the returned function is called, so that
 * a newer upload replacing it in the library's spec does not remove it under the job.
 */
export function holdUpload(kernel: Kernel, file: string): () => void {
  let held = reading.get(kernel);
  if (!held) reading.set(kernel, (held = new Map()));
  held.set(file, (held.get(file) ?? 0) + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const n = (held.get(file) ?? 1) - 1;
    if (n > 0) held.set(file, n);
    else held.delete(file);
  };
}

/** The raw uploads that running jobs read and queued or running jobs (other than `exceptJobId`) will read. */
async function uploadsInUse(kernel: Kernel, exceptJobId?: string): Promise<Set<string>> {
  const jobs = [...(await kernel.store.listJobs({ state: 'queued' })), ...(await kernel.store.listJobs({ state: 'running' }))];
  const libraries = new Set(jobs.filter((j) => j.id !== exceptJobId).map((j) => j.libraryId));
  const inUse = new Set<string>(reading.get(kernel)?.keys() ?? []);
  for (const id of libraries) {
    const lib = await kernel.store.getLibrary(id);
    const file = lib ? rawUploadOf(kernel.env.dataDir, lib.source) : null;
    if (file) inUse.add(file);
  }
  return inUse;
}

/**
 * Removes a raw upload once the job that read it has ended (or a newer upload replaced it),
 * unless a running job reads it or a queued or running job (other than `endedJobId`) will.
 * Returns whether the file was removed.
 */
export async function releaseUpload(kernel: Kernel, file: string, endedJobId?: string): Promise<boolean> {
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
  const names = await readdirOrEmpty(dir);
  if (names.length === 0) return [];
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
