/**
 * Backup and restore of DATA_DIR.
 *
 * A backup is a .tar.gz of a consistent snapshot: the database exported from memory by the
 * store and, in the same synchronous step, hard links of the index segment files it references
 * and of the raw uploads (EmbeddedStore.snapshot), plus `refdesk-backup.json` (what it holds).
 * It is taken by the process that holds the data directory: through a running server
 * (`GET /api/admin/backup`, which keeps serving and ingesting meanwhile), or by the CLI itself
 * when no server runs (it then takes the data directory's lock). The sealing key
 * (`DATA_DIR/secret.key`) is left out unless asked for: keep it apart from the backups.
 *
 * A restore unpacks a backup into an empty DATA_DIR (a non-empty one only with `force`), after
 * checking every entry; no server may hold the directory. Jobs that were running when the backup
 * was taken run again when the restored server starts (their partial builds are discarded).
 */
import { createReadStream, existsSync, linkSync, mkdirSync, readdirSync, copyFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { create as createTar, extract as extractTar } from 'tar';
import type { Context } from 'koa';
import type { Kernel } from '../core/kernel.ts';
import { RefdeskError } from '../core/errors.ts';
import { KERNEL_VERSION } from '../core/version.ts';
import { SECRET_KEY_FILE } from '../core/secrets.ts';
import { uploadsDir } from '../core/uploads.ts';
import { readDataLock, LOCK_FILE_NAME } from '../core/data-lock.ts';

export const BACKUP_MANIFEST = 'refdesk-backup.json';
export const BACKUP_FORMAT = 1;

export interface BackupManifest {
  format: number;
  createdAt: string;
  kernel: string;
  /** The database file name inside the archive (and in DATA_DIR). */
  database: string;
  /** Every file of the archive besides the manifest, relative. */
  files: string[];
  includesSecretKey: boolean;
  /** The data directory the backup was taken of: upload libraries name their raw upload by absolute path. */
  dataDir: string;
}

/** A store that can take a consistent copy of itself while it runs (plugins/store-embedded). */
interface SnapshotStore {
  snapshot(dir: string, sameStep?: () => void): Promise<string[]>;
}

function snapshotStore(kernel: Kernel): SnapshotStore {
  const store = kernel.store as unknown as Partial<SnapshotStore>;
  if (typeof store.snapshot !== 'function') {
    throw new RefdeskError('invalid_request', 'The configured store cannot take a backup snapshot (only the embedded store can); back up its database with its own tools.');
  }
  return store as SnapshotStore;
}

/** Hard links (copies across file systems) of every file under `from` into `to`, synchronously. */
function linkTreeSync(from: string, to: string, rel = ''): string[] {
  let entries;
  try {
    entries = readdirSync(join(from, rel), { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...linkTreeSync(from, to, r));
    else if (e.isFile()) {
      mkdirSync(dirname(join(to, r)), { recursive: true });
      try {
        linkSync(join(from, r), join(to, r));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        copyFileSync(join(from, r), join(to, r));
      }
      out.push(r);
    }
  }
  return out;
}

/** Staging folders of backups a killed process left behind (older than an hour). */
async function sweepStaleStaging(dataDir: string): Promise<void> {
  for (const name of await readdir(dataDir).catch(() => [] as string[])) {
    if (!name.startsWith('.backup-')) continue;
    const st = await stat(join(dataDir, name)).catch(() => null);
    if (st && Date.now() - st.mtimeMs > 3_600_000) await rm(join(dataDir, name), { recursive: true, force: true });
  }
}

export interface BackupFile {
  /** The .tar.gz, inside a staging folder of DATA_DIR. */
  file: string;
  manifest: BackupManifest;
  /** Removes the staging folder (call when the file has been sent or copied). */
  cleanup(): Promise<void>;
}

/** Takes a snapshot of the kernel's data directory and packs it as a .tar.gz. */
export async function createBackup(kernel: Kernel, opts: { includeSecretKey?: boolean } = {}): Promise<BackupFile> {
  const store = snapshotStore(kernel);
  const dataDir = kernel.env.dataDir;
  await sweepStaleStaging(dataDir);
  // Inside DATA_DIR: hard links need the same file system.
  const staging = await mkdtemp(join(dataDir, '.backup-'));
  const cleanup = () => rm(staging, { recursive: true, force: true });
  try {
    const data = join(staging, 'data');
    let uploads: string[] = [];
    const files = await store.snapshot(data, () => {
      uploads = linkTreeSync(uploadsDir(dataDir), join(data, 'uploads')).map((f) => `uploads/${f}`);
    });
    const database = files[0]!;
    files.push(...uploads);
    let includesSecretKey = false;
    if (opts.includeSecretKey) {
      const key = join(dataDir, SECRET_KEY_FILE);
      if (!existsSync(key)) throw new RefdeskError('invalid_request', `There is no ${SECRET_KEY_FILE} in the data directory to include (the key may come from REFDESK_SECRET_KEY or ENCRYPTION_KEY: keep that value instead).`);
      copyFileSync(key, join(data, SECRET_KEY_FILE));
      files.push(SECRET_KEY_FILE);
      includesSecretKey = true;
    }
    const manifest: BackupManifest = { format: BACKUP_FORMAT, createdAt: new Date().toISOString(), kernel: KERNEL_VERSION, database, files, includesSecretKey, dataDir };
    await writeFile(join(data, BACKUP_MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
    const file = join(staging, 'backup.tar.gz');
    await createTar({ gzip: true, cwd: data, file, portable: true }, [BACKUP_MANIFEST, ...files]);
    return { file, manifest, cleanup };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** GET /api/admin/backup[?includeSecretKey=true]: the backup as a download (mounted with the admin routes). */
export function backupRoute(kernel: Kernel) {
  return async (ctx: Context): Promise<void> => {
    const raw = ctx.query.includeSecretKey;
    if (raw !== undefined && raw !== 'true' && raw !== 'false') {
      throw new RefdeskError('invalid_request', 'includeSecretKey is true or false.');
    }
    const backup = await createBackup(kernel, { includeSecretKey: raw === 'true' });
    const size = (await stat(backup.file)).size;
    const stream = createReadStream(backup.file);
    stream.on('close', () => void backup.cleanup());
    const stamp = backup.manifest.createdAt.replace(/[:.]/g, '-');
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Disposition', `attachment; filename="refdesk-backup-${stamp}.tar.gz"`);
    ctx.set('X-Refdesk-Backup-Includes-Secret-Key', String(backup.manifest.includesSecretKey));
    ctx.type = 'application/gzip';
    ctx.length = size;
    ctx.body = stream;
  };
}

/** Whether an archive path may be restored (the manifest, the database, segments, uploads, the key). */
function allowedEntry(path: string, database: string | null): boolean {
  const p = path.replace(/^\.\//, '');
  if (p === '' || p.split('/').some((s) => s === '..' || s === '.')) return false;
  if (p === BACKUP_MANIFEST || p === SECRET_KEY_FILE) return true;
  if (database !== null && p === database) return true;
  if (database === null && /^[A-Za-z0-9._-]+$/.test(p) && !p.includes('/')) return true; // checked against the manifest after
  return /^segments\/?[A-Za-z0-9._-]*$/.test(p) || /^uploads(\/|$)/.test(p);
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** Whether DATA_DIR now has a sealing key (restored, or kept from before). */
  secretKeyPresent: boolean;
}

/**
 * Unpacks a backup into `dataDir`: refused while a process holds it, and when it is not empty
 * unless `force` (which replaces the database, segments and uploads, and the sealing key only
 * when the backup holds one).
 */
export async function restoreBackup(archive: string, dataDir: string, opts: { force?: boolean } = {}): Promise<RestoreResult> {
  const from = resolve(archive);
  const st = await stat(from).catch(() => null);
  if (!st?.isFile()) throw new RefdeskError('invalid_request', `restore: ${archive} is not a file; give the .tar.gz that refdesk backup wrote.`);
  const holder = await readDataLock(dataDir);
  if (holder) throw new RefdeskError('store_locked', `A Refdesk process (pid ${holder.pid}, ${holder.mode}) is using ${dataDir}: stop it before restoring into it.`);
  const existing = await readdir(dataDir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [] as string[];
    throw e;
  });
  const present = existing.filter((n) => n !== LOCK_FILE_NAME);
  if (present.length > 0 && !opts.force) {
    throw new RefdeskError('invalid_request', `restore: ${dataDir} is not empty (${present.slice(0, 5).join(', ')}${present.length > 5 ? ', ...' : ''}). Restore into an empty DATA_DIR, or add --force to replace its database, segments and uploads.`);
  }
  mkdirSync(dataDir, { recursive: true });
  const staging = await mkdtemp(join(dataDir, '.restore-'));
  try {
    let refused = '';
    try {
      await extractTar({
        file: from,
        cwd: staging,
        strict: true,
        preservePaths: false,
        filter: (path, entry) => {
          const type = (entry as { type?: string }).type;
          const ok = (type === 'File' || type === 'Directory' || type === undefined) && allowedEntry(path, null);
          if (!ok && !refused) refused = path;
          return ok;
        },
      });
    } catch (e) {
      throw new RefdeskError('invalid_request', `restore: ${basename(archive)} is not a readable .tar.gz backup (${(e as Error).message}).`);
    }
    if (refused) throw new RefdeskError('invalid_request', `restore: ${basename(archive)} holds "${refused.slice(0, 100)}", which no Refdesk backup holds; nothing was restored.`);
    let manifest: BackupManifest;
    try {
      manifest = JSON.parse(await readFile(join(staging, BACKUP_MANIFEST), 'utf8')) as BackupManifest;
    } catch {
      throw new RefdeskError('invalid_request', `restore: ${basename(archive)} has no ${BACKUP_MANIFEST}; it is not a backup made by refdesk backup.`);
    }
    if (manifest.format !== BACKUP_FORMAT || typeof manifest.database !== 'string' || !/^[A-Za-z0-9._-]+$/.test(manifest.database)) {
      throw new RefdeskError('invalid_request', `restore: ${BACKUP_MANIFEST} is of an unknown format (${String(manifest.format).slice(0, 10)}); this version restores format ${BACKUP_FORMAT}.`);
    }
    if (!existsSync(join(staging, manifest.database))) throw new RefdeskError('invalid_request', `restore: the backup lacks its database file ${manifest.database}; nothing was restored.`);
    const top = (await readdir(staging)).filter((n) => n !== BACKUP_MANIFEST);
    for (const n of top) {
      if (n !== manifest.database && n !== 'segments' && n !== 'uploads' && n !== SECRET_KEY_FILE) {
        throw new RefdeskError('invalid_request', `restore: the backup holds "${n}", which its manifest does not name; nothing was restored.`);
      }
    }
    if (opts.force) {
      for (const n of [manifest.database, 'segments', 'uploads', ...(top.includes(SECRET_KEY_FILE) ? [SECRET_KEY_FILE] : [])]) {
        await rm(join(dataDir, n), { recursive: true, force: true });
      }
    }
    for (const n of top) await rename(join(staging, n), join(dataDir, n));
    if (top.includes(SECRET_KEY_FILE)) await chmod(join(dataDir, SECRET_KEY_FILE), 0o600);
    return { manifest, secretKeyPresent: existsSync(join(dataDir, SECRET_KEY_FILE)) };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * After a restore into another directory: libraries built from a raw upload name it by its
 * absolute path in the old data directory; point them at the restored copy. Returns how many
 * libraries were changed.
 */
export async function relocateUploads(kernel: Kernel, oldDataDir: string): Promise<number> {
  if (typeof oldDataDir !== 'string' || oldDataDir === '') return 0;
  const oldUploads = uploadsDir(oldDataDir) + '/';
  const newUploads = uploadsDir(kernel.env.dataDir) + '/';
  if (oldUploads === newUploads) return 0;
  let changed = 0;
  for (const lib of await kernel.store.listLibraries()) {
    const path = lib.source.spec?.path;
    if (typeof path !== 'string' || !path.startsWith(oldUploads)) continue;
    await kernel.store.upsertLibrary({
      id: lib.id,
      title: lib.title,
      description: lib.description,
      branch: lib.branch,
      source: { kind: lib.source.kind, spec: { ...lib.source.spec, path: newUploads + path.slice(oldUploads.length) } },
      stars: lib.stars,
      trustScore: lib.trustScore,
      benchmarkScore: lib.benchmarkScore,
    });
    changed++;
  }
  return changed;
}

/** What to tell an operator about the sealing key after a backup. */
export function secretKeyAdvice(dataDir: string, included: boolean, env: NodeJS.ProcessEnv): string {
  if (included) {
    return `The sealing key (${SECRET_KEY_FILE}) is IN this backup: whoever has the file can open the tokens stored in it. Keep it encrypted and access-controlled.`;
  }
  const fromEnv = env.REFDESK_SECRET_KEY || env.ENCRYPTION_KEY;
  return fromEnv
    ? 'The sealing key comes from REFDESK_SECRET_KEY / ENCRYPTION_KEY and is not in this backup: keep that value in your secrets store; a restored server needs it to open the stored tokens.'
    : `The sealing key ${join(dataDir, SECRET_KEY_FILE)} is not in this backup (add --include-secret-key to include it). Keep a copy apart from the backups (a password manager or secrets store); without it a restored server cannot open the stored tokens (git, Confluence, providers).`;
}
