/**
 * Stored builds (issue 17): every build keeps the normalised documents its chunker consumed, so a
 * chunker change re-chunks a library without its source or upload (core/rechunk.ts).
 *
 * One file per finalized build, `<dataDir>/builds/<buildId>.docs.gz`: gzip of JSON lines, a
 * header line `{"format":"refdesk-docs","version":1}` and then one StoredDocument a line, in the
 * order the source gave them. It is written streamed while the build runs (async zlib: the
 * compression runs off the event loop, and no document is held twice) under
 * `<buildId>.docs.gz.partial`, fsynced and renamed when the build is about to be finalized. The
 * store removes the file with its build (replaced, deleted, or never finalized).
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip, createGzip, type Gzip } from 'node:zlib';
import type { BuildStore, SourceDocument } from './contracts.ts';

export const STORED_DOCS_DIR = 'builds';
export const STORED_DOCS_FORMAT = 1;
const EXT = '.docs.gz';
const PARTIAL = '.partial';
const HEADER = JSON.stringify({ format: 'refdesk-docs', version: STORED_DOCS_FORMAT });

/** A document as the chunker consumed it (a SourceDocument with its hash and meta settled). */
export type StoredDocument = Omit<SourceDocument, 'hash' | 'meta' | 'unchanged'> & { hash: string; meta: Record<string, string> };

/** A build's file that cannot be read: missing, of another format, or damaged (rebuilt or reported, never a crash). */
export class UnreadableBuildFileError extends Error {
  constructor(
    readonly reason: 'missing' | 'old-format' | 'corrupt',
    message: string,
  ) {
    super(message);
    this.name = 'UnreadableBuildFileError';
  }
}

/** The stored documents of a build cannot be read: missing, another format, or damaged. */
export class StoredDocsError extends UnreadableBuildFileError {
  override name = 'StoredDocsError';
}

const validId = (buildId: string) => /^[\w-]+$/.test(buildId);

export function storedDocsDir(dataDir: string): string {
  return join(dataDir, STORED_DOCS_DIR);
}

export function storedDocsPath(dataDir: string, buildId: string): string {
  if (!validId(buildId)) throw new Error(`not a build id: ${JSON.stringify(buildId).slice(0, 60)}`);
  return join(storedDocsDir(dataDir), `${buildId}${EXT}`);
}

/** True when the build has its stored documents. */
export async function hasStoredDocs(dataDir: string, buildId: string): Promise<boolean> {
  if (!validId(buildId)) return false;
  return stat(storedDocsPath(dataDir, buildId)).then(
    (s) => s.isFile(),
    () => false,
  );
}

/**
 * Whether a build's stored documents are on this node's disk, asking the store to bring them
 * first when it keeps them elsewhere (BuildStore.localStoredDocs: the PostgreSQL store).
 */
export async function hasLocalStoredDocs(store: Pick<BuildStore, 'localStoredDocs'>, dataDir: string, buildId: string): Promise<boolean> {
  if (store.localStoredDocs) return store.localStoredDocs(buildId);
  return hasStoredDocs(dataDir, buildId);
}

/** The record of a document as stored (only the fields a chunker reads). */
export function storedDocument(doc: SourceDocument, hash: string, meta: Record<string, string>): StoredDocument {
  const out: StoredDocument = { path: doc.path, format: doc.format, content: doc.content, hash, meta };
  if (doc.url !== undefined) out.url = doc.url;
  if (doc.lineMap !== undefined) out.lineMap = doc.lineMap;
  if (doc.title !== undefined) out.title = doc.title;
  return out;
}

/**
 * Writes a build's stored documents, one at a time, streamed through gzip to the partial file.
 * `commit()` makes it the build's file; `discard()` removes it. Never holds more than one
 * document's line plus the stream's buffers.
 */
export class StoredDocsWriter {
  private constructor(
    readonly file: string,
    private readonly gzip: Gzip,
    private readonly out: WriteStream,
    private readonly done: Promise<void>,
  ) {}

  /** Opens the partial file of the build (creating `<dataDir>/builds`). */
  static async create(dataDir: string, buildId: string): Promise<StoredDocsWriter> {
    const file = storedDocsPath(dataDir, buildId);
    await mkdir(storedDocsDir(dataDir), { recursive: true });
    const out = createWriteStream(file + PARTIAL);
    await once(out, 'open');
    const gzip = createGzip({ level: 6 });
    gzip.pipe(out);
    const done = new Promise<void>((resolve, reject) => {
      out.once('finish', resolve);
      out.once('error', reject);
      gzip.once('error', reject);
    });
    done.catch(() => {}); // observed by commit(); a failure meanwhile is not an unhandled rejection
    const writer = new StoredDocsWriter(file, gzip, out, done);
    await writer.line(HEADER);
    return writer;
  }

  /** Appends one document. */
  add(doc: StoredDocument): Promise<void> {
    return this.line(JSON.stringify(doc));
  }

  /** Appends a document line as another stored build holds it (already JSON). */
  addLine(line: string): Promise<void> {
    return this.line(line);
  }

  private async line(text: string): Promise<void> {
    if (!this.gzip.write(text + '\n')) await Promise.race([once(this.gzip, 'drain'), this.done]);
  }

  /** Ends the stream, makes it durable and gives it the build's file name. */
  async commit(): Promise<void> {
    this.gzip.end();
    await this.done;
    const fh = await open(this.file + PARTIAL, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(this.file + PARTIAL, this.file);
  }

  /** Stops writing and removes the partial file. Never throws. */
  async discard(): Promise<void> {
    this.gzip.destroy();
    this.out.destroy();
    await rm(this.file + PARTIAL, { force: true }).catch(() => {});
  }
}

/**
 * The lines of a build's stored documents, after the header, as (path, JSON line). Throws
 * StoredDocsError when the file is missing, of another format, or damaged (gzip's checksum,
 * a line that is not a document).
 */
export async function* readStoredDocLines(dataDir: string, buildId: string): AsyncGenerator<{ path: string; line: string }> {
  const file = storedDocsPath(dataDir, buildId);
  const input = createReadStream(file);
  const gunzip = createGunzip();
  input.on('error', (e) => gunzip.destroy(e));
  input.pipe(gunzip);
  const decoder = new StringDecoder('utf8');
  let first = true;
  let rest = '';
  const take = (line: string): { path: string; line: string } | null => {
    if (first) {
      first = false;
      let header: { format?: unknown; version?: unknown } | null;
      try {
        header = JSON.parse(line) as { format?: unknown; version?: unknown } | null;
      } catch {
        header = null;
      }
      if (header?.format !== 'refdesk-docs') throw new StoredDocsError('corrupt', `stored documents ${file} have no header`);
      if (header.version !== STORED_DOCS_FORMAT) throw new StoredDocsError('old-format', `stored documents ${file} have format ${String(header.version)}; this version reads ${STORED_DOCS_FORMAT}`);
      return null;
    }
    if (line === '') return null;
    let path: unknown;
    try {
      path = (JSON.parse(line) as { path?: unknown }).path;
    } catch {
      path = undefined;
    }
    if (typeof path !== 'string') throw new StoredDocsError('corrupt', `stored documents ${file}: a line is not a document`);
    return { path, line };
  };
  try {
    for await (const chunk of gunzip) {
      rest += decoder.write(chunk as Buffer);
      let nl: number;
      while ((nl = rest.indexOf('\n')) >= 0) {
        const got = take(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
        if (got) yield got;
      }
    }
    rest += decoder.end();
    if (rest !== '') throw new StoredDocsError('corrupt', `stored documents ${file} end in the middle of a line`);
    if (first) throw new StoredDocsError('corrupt', `stored documents ${file} are empty`);
  } catch (err) {
    if (err instanceof StoredDocsError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new StoredDocsError('missing', `stored documents ${file} are missing`);
    throw new StoredDocsError('corrupt', `stored documents ${file} cannot be read: ${(err as Error).message}`);
  } finally {
    input.destroy();
    gunzip.destroy();
  }
}

/** A build's stored documents, one by one (parsed). Throws StoredDocsError like readStoredDocLines. */
export async function* readStoredDocs(dataDir: string, buildId: string): AsyncGenerator<StoredDocument> {
  for await (const { line } of readStoredDocLines(dataDir, buildId)) yield JSON.parse(line) as StoredDocument;
}

/** Removes the stored documents of these builds (and partial files of them); missing ones are fine. */
export async function removeStoredDocs(dataDir: string, buildIds: readonly string[]): Promise<void> {
  for (const id of buildIds) {
    if (!validId(id)) continue;
    const file = storedDocsPath(dataDir, id);
    await rm(file, { force: true });
    await rm(file + PARTIAL, { force: true });
  }
}

/** Removes stored documents of builds not in `keep` (finalized build ids). Returns the names removed. */
export async function removeOrphanStoredDocs(dataDir: string, keep: ReadonlySet<string>): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(storedDocsDir(dataDir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const name of names) {
    const i = name.indexOf(EXT);
    if (i <= 0) continue;
    if (name.endsWith(EXT) && keep.has(name.slice(0, i))) continue;
    await rm(join(storedDocsDir(dataDir), name), { force: true });
    removed.push(name);
  }
  return removed;
}
