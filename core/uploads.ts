/**
 * Raw uploads: files the server saved under `<dataDir>/uploads` for an upload or OpenAPI-upload
 * library (its spec's `path`). A raw upload is kept only while a queued or running job may read
 * it: it is removed when its job ends, and files no such job needs are swept at start.
 *
 * On a store several nodes share (its UploadStore, `store.uploads`: PostgreSQL), the node that
 * receives an upload also puts it in the store (addLibrary: shareUpload), and the node that runs
 * its job, whichever it is, fetches it to its own uploads folder under the same name
 * (localUpload); the job's end removes it from the store and from that node's folder. A copy on
 * another node's disk goes at that node's next sweep (its start, and daily).
 */
import { mkdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { LibrarySource, Store, UploadStore, UploadStoreHost } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { RefdeskError } from './errors.ts';
import { readdirOrEmpty } from './missing-files.ts';

/**
 * The spec field in which a source kind names a raw upload, from its definition: a source that is
 * added by files (`addPayload: 'files'`) names it in `path`, a source with a spec-file upload
 * (`specUpload`) in its `specField`; null for any other kind (or one the config does not load).
 */
export function uploadSpecField(kernel: Pick<Kernel, 'sources'>, kind: string): string | null {
  const def = kernel.sources.get(kind)?.def;
  if (!def) return null;
  if (def.specUpload) return def.specUpload.specField;
  return def.addPayload === 'files' ? 'path' : null;
}

export function uploadsDir(dataDir: string): string {
  return join(dataDir, 'uploads');
}

/** The raw upload a library's source reads (a file inside `<dataDir>/uploads`), or null. */
export function rawUploadOf(kernel: Pick<Kernel, 'sources' | 'env'>, source: LibrarySource): string | null {
  const field = uploadSpecField(kernel, source.kind);
  const path = field ? source.spec?.[field] : undefined;
  if (typeof path !== 'string' || path === '') return null;
  const dir = uploadsDir(kernel.env.dataDir);
  const abs = resolve(dir, path);
  const rel = relative(dir, abs);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  return abs;
}

/** The name of a raw upload the routes saved: a random UUID and an extension, e.g. `<uuid>.upload`. */
const RAW_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(\.[A-Za-z0-9]{1,10})?$/;

/**
 * The name of the raw upload a spec value names (a path `.../uploads/<uuid>.<ext>`, as the upload
 * routes save them, on any node), or null.
 */
export function rawUploadName(path: string): string | null {
  const name = basename(path);
  return basename(dirname(path)) === 'uploads' && RAW_NAME.test(name) ? name : null;
}

/** A store in the shared uploads of a cluster is kept this long before a sweep may drop it (being added meanwhile). */
const SHARED_SWEEP_GRACE_MS = 10 * 60_000;

/** The store's shared raw uploads (UploadStore), or null (the embedded store: the local file is all there is). */
export function sharedUploads(store: Store): UploadStore | null {
  const u = (store as Partial<UploadStoreHost>).uploads;
  const methods = ['putUpload', 'fetchUpload', 'removeUpload', 'listUploads'] as const;
  return u && methods.every((m) => typeof u[m] === 'function') ? u : null;
}

/**
 * The raw upload a library's source reads, as a file of this node: `rawUploadOf`, and on a store
 * that shares uploads also a raw upload another node received (a path in that node's uploads
 * folder), which is then this node's uploads folder's file of the same name (fetched by localUpload).
 */
export function rawUploadFor(kernel: Kernel, source: LibrarySource): string | null {
  const local = rawUploadOf(kernel, source);
  if (local || !sharedUploads(kernel.store)) return local;
  const field = uploadSpecField(kernel, source.kind);
  const path = field ? source.spec?.[field] : undefined;
  if (typeof path !== 'string' || !isAbsolute(path)) return null;
  const name = basename(path);
  return basename(dirname(path)) === 'uploads' && RAW_NAME.test(name) ? resolve(uploadsDir(kernel.env.dataDir), name) : null;
}

/** The name a file of this node's uploads folder has in the shared uploads, or null (a file in a subfolder). */
function sharedName(kernel: Kernel, file: string): string | null {
  return dirname(file) === resolve(uploadsDir(kernel.env.dataDir)) ? basename(file) : null;
}

/**
 * On a store that shares uploads: puts the raw upload of a library about to be added there, so
 * that any node can run its job. Returns the function that removes it again (the add failed), or
 * null when there is nothing to share (no such store, no raw upload, not a file).
 */
export async function shareUpload(kernel: Kernel, source: LibrarySource): Promise<(() => Promise<void>) | null> {
  const shared = sharedUploads(kernel.store);
  const file = shared ? rawUploadOf(kernel, source) : null;
  const name = file ? sharedName(kernel, file) : null;
  if (!shared || !file || !name || !(await stat(file).catch(() => null))?.isFile()) return null;
  await shared.putUpload(name, file);
  return () => shared.removeUpload(name);
}

/**
 * Makes sure a job's raw upload is on this node's disk: fetched from the shared uploads when
 * another node received it. Throws `invalid_source` when the store shares uploads and neither
 * this node nor the store has it; without shared uploads, the source reports a missing file.
 */
export async function localUpload(kernel: Kernel, file: string): Promise<void> {
  const shared = sharedUploads(kernel.store);
  const name = sharedName(kernel, file);
  if (!shared || !name || (await stat(file).catch(() => null))) return;
  await mkdir(dirname(file), { recursive: true });
  if (await shared.fetchUpload(name, file)) return;
  throw new RefdeskError('invalid_source', `The uploaded file ${name} is neither on this node nor in the database (it was removed, or received before the database kept uploads): upload it again.`);
}

/** The spec a job's source reads: its `path` made this node's copy of the raw upload when that differs. */
export function withLocalUpload(kernel: Kernel, spec: Record<string, unknown>, file: string | null): Record<string, unknown> {
  if (!file || spec.path === file || !sharedUploads(kernel.store)) return spec;
  return { ...spec, path: file };
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
    const file = lib ? rawUploadFor(kernel, lib.source) : null;
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
  const shared = sharedUploads(kernel.store);
  const name = sharedName(kernel, file);
  if (shared && name) await shared.removeUpload(name);
  return true;
}

/**
 * Removes the raw uploads no queued or running job needs, among the files last changed before
 * `before` (files written since may belong to an upload being received). Returns their names.
 */
export async function sweepUploads(kernel: Kernel, before: Date): Promise<string[]> {
  const dir = uploadsDir(kernel.env.dataDir);
  const names = await readdirOrEmpty(dir);
  const shared = sharedUploads(kernel.store);
  // Shared uploads are added by every node: only those older than the grace may be swept.
  const storedNames = shared ? await shared.listUploads(new Date(before.getTime() - SHARED_SWEEP_GRACE_MS)) : [];
  if (names.length === 0 && storedNames.length === 0) return [];
  const inUse = await uploadsInUse(kernel);
  const removed: string[] = [];
  for (const name of storedNames) {
    if (inUse.has(join(dir, name))) continue;
    await shared!.removeUpload(name);
    removed.push(name);
  }
  for (const name of names) {
    const file = join(dir, name);
    if (inUse.has(file)) continue;
    const info = await stat(file).catch(() => null);
    if (!info || info.mtimeMs >= before.getTime()) continue;
    await rm(file, { recursive: true, force: true });
    if (!removed.includes(name)) removed.push(name);
  }
  return removed;
}
