/**
 * Package archives read in memory, never extracted to disk: npm tarballs and sdists (.tar.gz),
 * wheels (.zip). Only the files `want` picks are kept. An entry whose name escapes the archive
 * (absolute, '..', backslashes, NUL) is refused: skipped with a warning, never read. Links and
 * special entries are ignored.
 */
import { gunzipSync } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import yauzl from 'yauzl';
import { RefdeskError } from '../../core/errors.ts';

export interface ArchiveFile {
  /** Path inside the package, top folder (`package/`, `name-1.0/`) removed. */
  path: string;
  data: Buffer;
}

export interface ArchiveLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxUnpackedBytes: number;
}

export interface ArchiveRead {
  files: ArchiveFile[];
  warnings: string[];
}

/** Why an entry name is unsafe, or null. Returns the segments of a safe name. */
export function entrySegments(raw: string): string[] | { unsafe: string } {
  if (raw.includes('\0')) return { unsafe: 'contains NUL' };
  if (raw.includes('\\')) return { unsafe: 'contains a backslash' };
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) return { unsafe: 'is an absolute path' };
  const segs = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segs.includes('..')) return { unsafe: "contains a '..' segment" };
  return segs;
}

function show(raw: string): string {
  return JSON.stringify(raw.replace(/[\u0000-\u001f]/g, '?').slice(0, 120));
}

class Collector {
  files: ArchiveFile[] = [];
  warnings: string[] = [];
  unpacked = 0;
  constructor(
    private readonly limits: ArchiveLimits,
    private readonly want: (path: string) => boolean,
    private readonly stripTop: boolean,
    private readonly label: string,
  ) {}

  /** The package path of an entry, or null when it is not kept. */
  accept(raw: string, size: number): string | null {
    const segs = entrySegments(raw);
    if (!Array.isArray(segs)) {
      this.warnings.push(`refused the entry ${show(raw)} of ${this.label}: it ${segs.unsafe}`);
      return null;
    }
    const inner = this.stripTop ? segs.slice(1) : segs;
    if (inner.length === 0) return null;
    const path = inner.join('/');
    if (!this.want(path)) return null;
    if (size > this.limits.maxFileBytes) {
      this.warnings.push(`skipped ${path}: ${size} bytes, more than maxFileBytes (${this.limits.maxFileBytes})`);
      return null;
    }
    if (this.files.length >= this.limits.maxFiles) {
      throw new RefdeskError('too_large', `${this.label} holds more than ${this.limits.maxFiles} documentation files (maxFiles).`);
    }
    return path;
  }

  add(path: string, data: Buffer): void {
    if (data.length > this.limits.maxFileBytes) {
      this.warnings.push(`skipped ${path}: more than maxFileBytes (${this.limits.maxFileBytes})`);
      return;
    }
    this.files.push({ path, data });
  }

  count(n: number): void {
    this.unpacked += n;
    if (this.unpacked > this.limits.maxUnpackedBytes) {
      throw new RefdeskError('too_large', `${this.label} expands to more than ${this.limits.maxUnpackedBytes} bytes (maxUnpackedBytes).`);
    }
  }
}

/** Reads a .tar.gz (or plain .tar) held in memory. */
export async function readTarGz(data: Buffer, label: string, limits: ArchiveLimits, want: (path: string) => boolean, stripTop = true): Promise<ArchiveRead> {
  let tar: Buffer;
  if (data[0] === 0x1f && data[1] === 0x8b) {
    try {
      tar = gunzipSync(data, { maxOutputLength: limits.maxUnpackedBytes });
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) {
        throw new RefdeskError('too_large', `${label} expands to more than ${limits.maxUnpackedBytes} bytes (maxUnpackedBytes).`);
      }
      throw new RefdeskError('invalid_source', `${label} is not a valid gzip file.`);
    }
  } else {
    tar = data;
  }
  const c = new Collector(limits, want, stripTop, label);
  let failure: unknown = null;
  const parser = new Parser({ strict: true });
  const done = new Promise<void>((resolve) => {
    parser.on('end', () => resolve());
    parser.on('close', () => resolve());
    parser.on('error', (e: unknown) => {
      failure ??= new RefdeskError('invalid_source', `${label} is not a valid tar archive (${(e as Error).message}).`);
      resolve();
    });
  });
  parser.on('entry', (entry: ReadEntry) => {
    try {
      const isFile = entry.type === 'File' || entry.type === 'OldFile' || entry.type === 'ContiguousFile';
      const path = isFile && failure === null ? c.accept(entry.path, entry.size ?? 0) : null;
      if (path === null) {
        if (!isFile && (entry.type === 'SymbolicLink' || entry.type === 'Link')) {
          const segs = entrySegments(entry.path);
          if (!Array.isArray(segs)) c.warnings.push(`refused the entry ${show(entry.path)} of ${label}: it ${segs.unsafe}`);
        }
        entry.resume();
        return;
      }
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () => {
        if (failure === null) c.add(path, Buffer.concat(chunks));
      });
    } catch (e) {
      failure ??= e;
      entry.resume();
    }
  });
  parser.on('ignoredEntry', (entry: ReadEntry) => {
    const segs = entrySegments(entry.path);
    if (!Array.isArray(segs)) c.warnings.push(`refused the entry ${show(entry.path)} of ${label}: it ${segs.unsafe}`);
  });
  parser.end(tar);
  await done;
  if (failure !== null) throw failure;
  return { files: c.files, warnings: c.warnings };
}

/** Reads a .zip (a wheel) held in memory with yauzl. */
export async function readZip(data: Buffer, label: string, limits: ArchiveLimits, want: (path: string) => boolean, stripTop = false): Promise<ArchiveRead> {
  const c = new Collector(limits, want, stripTop, label);
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    // Names are checked by us (entrySegments), so an unsafe entry is refused, not fatal.
    yauzl.fromBuffer(data, { lazyEntries: true, strictFileNames: false, validateEntrySizes: true, decodeStrings: false } as yauzl.Options, (err, z) => {
      if (err || !z) reject(new RefdeskError('invalid_source', `${label} is not a valid zip archive (${err?.message ?? 'unreadable'}).`));
      else resolve(z);
    });
  });
  await new Promise<void>((resolve, reject) => {
    const fail = (e: unknown) => {
      zip.close();
      reject(e instanceof RefdeskError ? e : new RefdeskError('invalid_source', `${label} is not a valid zip archive (${(e as Error).message}).`));
    };
    zip.on('error', fail);
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      try {
        const raw = Buffer.isBuffer(entry.fileName) ? (entry.fileName as unknown as Buffer).toString('utf8') : String(entry.fileName);
        if (raw.endsWith('/')) return zip.readEntry();
        c.count(entry.uncompressedSize);
        const path = c.accept(raw, entry.uncompressedSize);
        if (path === null) return zip.readEntry();
        zip.openReadStream(entry, (err, stream) => {
          if (err || !stream) return fail(err ?? new Error('unreadable entry'));
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('error', fail);
          stream.on('end', () => {
            c.add(path, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      } catch (e) {
        fail(e);
      }
    });
    zip.readEntry();
  });
  return { files: c.files, warnings: c.warnings };
}
