import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { RefdeskError, isRefdeskError } from '../../core/errors.ts';
import { TAR_STREAM_FACTOR, tooLarge, tooManyEntries } from './limits.ts';
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

const READ_CHUNK = 256 * 1024;
const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);
const DIR_TYPES = new Set(['Directory', 'GNUDumpDir']);
const SPECIAL_TYPES: Record<string, string> = {
  CharacterDevice: 'a character device',
  BlockDevice: 'a block device',
  FIFO: 'a FIFO',
};

interface TarDoc {
  raw: string;
  data: Buffer;
}

function corrupt(kind: string, label: string, e: unknown): RefdeskError {
  let why = (e instanceof Error ? e.message : String(e)).replace(/^TAR_[A-Z_]+: /, '');
  if (why === 'Unrecognized archive format') why = 'not a tar archive, or one without any entry';
  return new RefdeskError('invalid_source', `Corrupt ${kind} ${label}: ${why}`, { cause: e });
}

function startsWithCompressionMagic(b: Buffer): boolean {
  return (b[0] === 0x1f && b[1] === 0x8b) || (b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd);
}

/**
 * Reads a tar (optionally gzipped) archive in one streaming pass, in memory. Every entry is
 * validated as it comes; the documentation entries are kept (counted against maxFiles and
 * maxBytes as their bytes arrive) and only handed out once the whole archive has been checked,
 * so nothing is yielded from an archive that turns out to be unsafe. Files that include
 * directives name and that are not documents are read by a second pass, when asked.
 */
export async function planTar(file: string, compressed: boolean, env: ReadEnv): Promise<ReadPlan> {
  const { selector } = env;
  // The common top directory is only known at the end: keep what is a document with or without
  // its first segment stripped, and choose once the whole archive has been seen.
  const isDoc = (segments: string[]) => selector.accept(segments) !== null || (segments.length > 1 && selector.accept(segments.slice(1)) !== null);
  const scan = await scanTar(file, compressed, env, isDoc, true);
  const top = scan.top;
  const selected = selectArchiveFiles(scan.files, top, env);
  const docs: PlannedDoc[] = selected.map((f) => ({
    path: f.path,
    format: f.format,
    load: async () => f.payload.data,
  }));
  env.budget.checkFiles(docs.length);

  // Include directives may name any file of the archive: documents are in memory already, other
  // files are read in one more pass over the archive for all the paths asked at once.
  const inMemory = new Map(selected.map((f) => [f.path, f.payload.data]));
  const names = new Set(scan.names.map((segments) => strippedPath(segments, top)));
  const has = (path: string) => names.has(path) && readableTarget(path, env);
  const files: UploadFiles = {
    batched: true,
    has,
    async read(paths) {
      const out = new Map<string, Buffer>();
      const rest = new Set<string>();
      for (const path of paths) {
        if (!has(path)) continue;
        const data = inMemory.get(path);
        if (data !== undefined) out.set(path, data);
        else rest.add(path);
      }
      if (rest.size > 0) {
        env.debug(`upload: reading ${rest.size} included files in a second pass over ${env.label}`);
        const again = await scanTar(file, compressed, env, (segments) => rest.has(strippedPath(segments, top)), false);
        for (const f of again.files) out.set(strippedPath(f.segments, top), f.payload.data);
      }
      return out;
    },
  };
  return { docs, files, close: async () => {} };
}

interface TarScan {
  /** The entries kept, with their bytes. */
  files: ArchiveFile<TarDoc>[];
  /** The segments of every regular file entry. */
  names: string[][];
  /** The common top directory (see CommonTop). */
  top: string | null;
}

/**
 * One streaming pass over the archive: validates every entry and keeps the bytes of the regular
 * files `keep` accepts (counted against maxBytes as they arrive, and against maxFiles when
 * `documents`).
 */
async function scanTar(file: string, compressed: boolean, env: ReadEnv, keep: (segments: string[]) => boolean, documents: boolean): Promise<TarScan> {
  const { limits, label } = env;
  const top = new CommonTop();
  const files: ArchiveFile<TarDoc>[] = [];
  const names: string[][] = [];
  let failure: unknown = null;
  let entries = 0;

  const parser = new Parser({ strict: true });
  const fail = (e: unknown): void => {
    if (failure === null) failure = e;
    parser.abort(new Error('stopped reading the archive'));
  };
  const countEntry = (): void => {
    entries += 1;
    if (entries > limits.maxArchiveEntries) throw tooManyEntries(limits);
  };

  const onEntry = (entry: ReadEntry): void => {
    countEntry();
    const raw = entry.path;
    const split = splitEntryName(raw);
    if ('unsafe' in split) throw unsafeEntry(label, raw, split.unsafe);
    if (entry.type === 'SymbolicLink') {
      throw unsafeEntry(label, raw, `is a symbolic link (to "${displayName(entry.linkpath ?? '')}")`);
    }
    if (entry.type === 'Link') throw unsafeEntry(label, raw, `is a hard link (to "${displayName(entry.linkpath ?? '')}")`);
    const special = SPECIAL_TYPES[entry.type];
    if (special !== undefined) throw unsafeEntry(label, raw, `is ${special}`);
    if (DIR_TYPES.has(entry.type)) {
      top.add(split.segments, true);
      entry.resume();
      return;
    }
    if (!FILE_TYPES.has(entry.type)) throw unsafeEntry(label, raw, `has an unsupported type (${entry.type})`);
    if (split.segments.length === 0) throw unsafeEntry(label, raw, 'is a file without a name');
    top.add(split.segments, false);
    const segments = split.segments;
    names.push(segments);
    if (!keep(segments)) {
      entry.resume();
      return;
    }
    if (entry.size > limits.maxFileBytes) {
      skipTooBig(env, raw, entry.size, true);
      entry.resume();
      return;
    }
    if (documents) env.budget.addFile();
    const chunks: Buffer[] = [];
    let total = 0;
    let skipped = false;
    entry.on('data', (chunk: Buffer) => {
      if (skipped || failure !== null) return;
      try {
        env.budget.addBytes(chunk.length);
        total += chunk.length;
        if (total > limits.maxFileBytes) {
          skipped = true;
          chunks.length = 0;
          skipTooBig(env, raw, limits.maxFileBytes, false);
          return;
        }
        chunks.push(chunk);
      } catch (e) {
        fail(e);
      }
    });
    entry.on('end', () => {
      if (!skipped && failure === null) files.push({ segments, payload: { raw, data: Buffer.concat(chunks, total) } });
    });
  };

  const onIgnored = (entry: ReadEntry): void => {
    if (entry.meta) return; // an oversized extended header: the next entry is still checked
    countEntry();
    const raw = entry.path;
    const split = splitEntryName(raw);
    if ('unsafe' in split) throw unsafeEntry(label, raw, split.unsafe);
    top.add(split.segments, false);
    env.warn(`Skipped ${displayName(raw)}: unsupported tar entry type ${entry.type}`);
  };

  let ended = false;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  parser.on('entry', (entry: ReadEntry) => {
    try {
      onEntry(entry);
    } catch (e) {
      entry.resume();
      fail(e);
    }
  });
  parser.on('ignoredEntry', (entry: ReadEntry) => {
    try {
      onIgnored(entry);
    } catch (e) {
      fail(e);
    }
  });
  parser.on('error', (e: unknown) => {
    if (failure === null) failure = corrupt('tar archive', label, e);
    resolveDone();
  });
  parser.on('end', () => {
    ended = true;
    resolveDone();
  });

  const input = createReadStream(file, { highWaterMark: READ_CHUNK, signal: env.signal });
  let stream: Readable = input;
  if (compressed) {
    const gunzip = createGunzip();
    input.on('error', (e) => gunzip.destroy(e));
    stream = input.pipe(gunzip);
  }
  const cap = limits.maxBytes * TAR_STREAM_FACTOR;
  let expanded = 0;
  let head: Buffer | null = Buffer.alloc(0);
  try {
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        env.signal.throwIfAborted();
        expanded += chunk.length;
        if (compressed && expanded > cap) {
          throw tooLarge(
            `the archive expands to more than ${cap} bytes (${TAR_STREAM_FACTOR} × maxBytes)`,
            'maxBytes',
            limits.maxBytes,
          );
        }
        let data = chunk;
        if (head !== null) {
          // Nested compression would be inflated again inside the tar parser, past our count.
          head = Buffer.concat([head, chunk]);
          if (head.length < 4) continue;
          if (startsWithCompressionMagic(head)) {
            throw new RefdeskError('invalid_source', `Unsupported archive ${label}: it is compressed twice`);
          }
          data = head;
          head = null;
        }
        parser.write(data);
        if (failure !== null) throw failure;
      }
    } catch (e) {
      env.signal.throwIfAborted();
      if (isRefdeskError(e)) throw e;
      throw corrupt(compressed ? 'gzip data in' : 'tar archive', label, e);
    }
    if (head !== null && head.length > 0) parser.write(head);
    parser.end();
    if (!ended && failure === null) await done;
    env.signal.throwIfAborted();
    if (failure !== null) throw failure;
  } finally {
    input.destroy();
    stream.destroy();
  }

  return { files, names, top: top.value };
}
