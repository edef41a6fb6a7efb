import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { RefdeskError, isRefdeskError } from '../../core/errors.ts';
import { tooManyEntries } from './limits.ts';
import { displayName, splitEntryName, unsafeEntry } from './paths.ts';
import {
  CommonTop,
  readableTarget,
  selectArchiveFiles,
  skipTooBig,
  strippedPath,
  type ArchiveFile,
  type PlannedDoc,
  type ReadEnv,
  type ReadPlan,
  type UploadFiles,
} from './plan.ts';

// Unix file types in the high 16 bits of a zip entry's external attributes.
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
const SPECIAL_TYPES = new Map<number, string>([
  [0o010000, 'a FIFO'],
  [0o020000, 'a character device'],
  [0o060000, 'a block device'],
  [0o140000, 'a socket'],
]);

interface ZipDoc {
  entry: Entry;
  /** The entry name as stored, for messages. */
  raw: string;
}

function corrupt(label: string, e: unknown): RefdeskError {
  const why = e instanceof Error ? e.message : String(e);
  return new RefdeskError('invalid_source', `Corrupt zip archive ${label}: ${why}`, { cause: e });
}

function isAbort(e: unknown): boolean {
  return e instanceof Error && e.name === 'AbortError';
}

function openZip(file: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(
      file,
      // Names are decoded and validated here (decodeStrings: false keeps yauzl from refusing
      // them with its own messages); sizes are checked against the bytes really inflated.
      { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: false, strictFileNames: true },
      (err, zip) => (err ? reject(err) : resolve(zip)),
    );
  });
}

/** Central directory entries one at a time; errors after the last call are kept, not thrown. */
function entryReader(zip: ZipFile): { next(): Promise<Entry | null> } {
  let pending: { resolve(e: Entry | null): void; reject(e: Error): void } | null = null;
  let failure: Error | null = null;
  let ended = false;
  const settle = (): typeof pending => {
    const p = pending;
    pending = null;
    return p;
  };
  zip.on('entry', (e: Entry) => settle()?.resolve(e));
  zip.on('end', () => {
    ended = true;
    settle()?.resolve(null);
  });
  zip.on('error', (e: Error) => {
    failure = e;
    settle()?.reject(e);
  });
  return {
    next() {
      if (failure) return Promise.reject(failure);
      if (ended) return Promise.resolve(null);
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        zip.readEntry();
      });
    },
  };
}

/**
 * Plans a zip archive: every central directory entry is validated first (names, links, device
 * entries, entry count), so an unsafe archive is refused before anything is read from it. The
 * documentation entries are then inflated one at a time, in path order, as they are yielded.
 */
export async function planZip(file: string, env: ReadEnv): Promise<ReadPlan> {
  let zip: ZipFile;
  try {
    zip = await openZip(file);
  } catch (e) {
    throw corrupt(env.label, e);
  }
  let closed = false;
  const close = async (): Promise<void> => {
    if (!closed) {
      closed = true;
      zip.close();
    }
  };
  try {
    if (zip.entryCount > env.limits.maxArchiveEntries) throw tooManyEntries(env.limits);
    const top = new CommonTop();
    const files: ArchiveFile<ZipDoc>[] = [];
    const reader = entryReader(zip);
    let count = 0;
    for (;;) {
      env.signal.throwIfAborted();
      let entry: Entry | null;
      try {
        entry = await reader.next();
      } catch (e) {
        throw corrupt(env.label, e);
      }
      if (entry === null) break;
      count += 1;
      if (count > env.limits.maxArchiveEntries) throw tooManyEntries(env.limits);

      const raw = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
      const split = splitEntryName(raw);
      if ('unsafe' in split) throw unsafeEntry(env.label, raw, split.unsafe);
      const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
      if (mode === S_IFLNK) throw unsafeEntry(env.label, raw, 'is a symbolic link');
      const special = SPECIAL_TYPES.get(mode);
      if (special !== undefined) throw unsafeEntry(env.label, raw, `is ${special}`);
      const isDir = split.trailingSlash || mode === S_IFDIR;
      if (!isDir && split.segments.length === 0) throw unsafeEntry(env.label, raw, 'is a file without a name');
      top.add(split.segments, isDir);
      if (!isDir) files.push({ segments: split.segments, payload: { entry, raw } });
    }

    const docs: PlannedDoc[] = [];
    let declared = 0;
    for (const f of selectArchiveFiles(files, top.value, env)) {
      const { entry, raw } = f.payload;
      if (!readable(entry, f.path, env)) continue;
      env.budget.checkFiles(docs.length + 1);
      // Sizes in headers may understate, never overstate what we accept: refuse early when
      // even the declared sizes are over the limit; the real bytes are counted while reading.
      declared += entry.uncompressedSize;
      env.budget.checkPlannedBytes(declared);
      docs.push({ path: f.path, format: f.format, load: () => readEntry(zip, entry, raw, f.path, env) });
    }
    // Every file entry, for include directives (the last of a repeated path wins, as for documents).
    const all = new Map<string, ZipDoc>();
    for (const f of files) all.set(strippedPath(f.segments, top.value), f.payload);
    const zipFiles: UploadFiles = {
      batched: false,
      has: (path) => all.has(path) && readableTarget(path, env),
      async read(paths) {
        const out = new Map<string, Buffer>();
        for (const path of paths) {
          const doc = all.get(path);
          if (doc === undefined || !readableTarget(path, env) || !readable(doc.entry, path, env)) continue;
          const data = await readEntry(zip, doc.entry, doc.raw, path, env);
          if (data !== null) out.set(path, data);
        }
        return out;
      },
    };
    return { docs, files: zipFiles, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Whether an entry can be read: not encrypted, stored or deflated, within maxFileBytes (else a warning). */
function readable(entry: Entry, path: string, env: ReadEnv): boolean {
  if (entry.isEncrypted()) {
    env.warn(`Skipped ${path}: it is encrypted`);
    return false;
  }
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    env.warn(`Skipped ${path}: unsupported zip compression method ${entry.compressionMethod}`);
    return false;
  }
  if (entry.uncompressedSize > env.limits.maxFileBytes) {
    skipTooBig(env, path, entry.uncompressedSize, true);
    return false;
  }
  return true;
}

async function readEntry(zip: ZipFile, entry: Entry, raw: string, path: string, env: ReadEnv): Promise<Buffer | null> {
  let stream: Readable;
  try {
    stream = await zip.openReadStreamPromise(entry);
  } catch (e) {
    throw corrupt(env.label, e);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      env.signal.throwIfAborted();
      env.budget.addBytes(chunk.length);
      total += chunk.length;
      if (total > env.limits.maxFileBytes) {
        skipTooBig(env, path, env.limits.maxFileBytes, false);
        return null;
      }
      chunks.push(chunk);
    }
  } catch (e) {
    if (isRefdeskError(e) || isAbort(e)) throw e;
    throw corrupt(env.label, new Error(`entry "${displayName(raw)}": ${e instanceof Error ? e.message : String(e)}`));
  } finally {
    stream.destroy();
  }
  if (total !== entry.uncompressedSize) {
    throw corrupt(
      env.label,
      `entry "${displayName(raw)}" holds ${total} bytes but its header says ${entry.uncompressedSize}`,
    );
  }
  const data = Buffer.concat(chunks, total);
  if (crc32(data) !== entry.crc32 >>> 0) {
    throw corrupt(env.label, `entry "${displayName(raw)}" fails its CRC-32 check`);
  }
  return data;
}
