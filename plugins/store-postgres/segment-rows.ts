/**
 * Files of a build as chunked rows (issue 24): an index segment in `segment_chunks(build_id, seq,
 * bytes)` and each stored document (core/stored-docs.ts) in `document_chunks(build_id, path,
 * seq, bytes)`, written and read a piece at a time (PIECE_BYTES), so no step holds a whole
 * segment in memory or in one statement, and any node can bring any build's files to its disk.
 */
import { createHash } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip as gunzipCb, gzip as gzipCb } from 'node:zlib';
import type pg from 'pg';
import { StoredDocsWriter, hasStoredDocs, readStoredDocLines, storedDocsPath } from '../../core/stored-docs.ts';
import { fsyncDirectory, tempFileName } from '../store-embedded/atomic-write.ts';
import { dirname } from 'node:path';

/** Bytes per row of a chunked file. */
export const PIECE_BYTES = 1 << 20;

const gzipAsync = promisify(gzipCb);
const gunzipAsync = promisify(gunzipCb);

/** What the catalog records of a segment's rows, to fetch and check them. */
export interface SegmentRowsInfo {
  chunks: number;
  bytes: number;
  sha256: string;
}

/** A fetched segment whose bytes are not the ones recorded (a damaged row, a partial upload). */
export class SegmentRowsError extends Error {
  override name = 'SegmentRowsError';
}

/** One statement on some connection (a pooled one, or a transaction's). */
export type Run = <R extends pg.QueryResultRow>(sql: string, params: unknown[]) => Promise<R[]>;

/** Where a file's pieces live: a table with (key column, seq, bytes), and the file's key there. */
export interface FileRows {
  table: 'segment_chunks' | 'vector_chunks' | 'upload_chunks';
  keyColumn: 'build_id' | 'name';
  key: string;
  /** The file in error messages, e.g. "the segment of build X". */
  what: string;
}

/** Writes a segment file to `segment_chunks` in pieces (on the transaction's client); returns what to record. */
export function uploadSegment(client: pg.PoolClient, buildId: string, path: string, pieceBytes = PIECE_BYTES): Promise<SegmentRowsInfo> {
  return uploadPieces(client, 'segment_chunks', buildId, path, pieceBytes);
}

/** The tables of a build's chunked files: its index segment, and its vectors without pgvector (migration 009). */
export type PieceTable = 'segment_chunks' | 'vector_chunks';

const buildRows = (table: PieceTable, buildId: string): FileRows => ({ table, keyColumn: 'build_id', key: buildId, what: `the ${table === 'segment_chunks' ? 'segment' : 'vectors'} of build ${buildId}` });

/** Writes a build's file (a path, read a piece at a time, or bytes) to a table of pieces; returns what to record. */
export function uploadPieces(client: pg.PoolClient, table: PieceTable, buildId: string, source: string | Uint8Array, pieceBytes = PIECE_BYTES): Promise<SegmentRowsInfo> {
  return writeFileRows(client, buildRows(table, buildId), source, pieceBytes);
}

/** Fetches a chunked file of a build (downloadSegment's steps) from its table into `path`. */
export function downloadPieces(run: Run, table: PieceTable, buildId: string, info: SegmentRowsInfo, path: string): Promise<void> {
  return readFileRows(run, buildRows(table, buildId), info, path);
}

/** Writes a local file (read a piece at a time) or bytes to its rows in pieces (on the transaction's client); returns its count, size and SHA-256. */
export async function writeFileRows(client: pg.PoolClient, rows: FileRows, source: string | Uint8Array, pieceBytes = PIECE_BYTES): Promise<SegmentRowsInfo> {
  const fh = typeof source === 'string' ? await open(source, 'r') : null;
  const hash = createHash('sha256');
  let seq = 0;
  let bytes = 0;
  try {
    const buf = Buffer.allocUnsafe(pieceBytes);
    for (;;) {
      let piece: Buffer;
      if (fh) {
        let read = 0;
        while (read < pieceBytes) {
          const { bytesRead } = await fh.read(buf, read, pieceBytes - read, bytes + read);
          if (bytesRead === 0) break;
          read += bytesRead;
        }
        piece = buf.subarray(0, read);
      } else {
        const all = source as Uint8Array;
        piece = Buffer.from(all.buffer, all.byteOffset + bytes, Math.min(pieceBytes, all.byteLength - bytes));
      }
      const got = piece.length;
      if (got === 0 && seq > 0) break;
      hash.update(piece);
      await client.query(`INSERT INTO ${rows.table} (${rows.keyColumn}, seq, bytes) VALUES ($1, $2, $3)`, [rows.key, seq, piece]);
      seq++;
      bytes += got;
      if (got < pieceBytes) break;
    }
  } finally {
    await fh?.close();
  }
  return { chunks: seq, bytes, sha256: hash.digest('hex') };
}

/**
 * Fetches a segment's rows in order, one piece at a time, into `path` (a temporary file, fsynced,
 * renamed: readers never see a partial file), checking the count, size and SHA-256 recorded.
 * Throws SegmentRowsError when the rows are not the recorded bytes (nothing is left at `path`).
 */
export function downloadSegment(run: Run, buildId: string, info: SegmentRowsInfo, path: string): Promise<void> {
  return downloadPieces(run, 'segment_chunks', buildId, info, path);
}

/** Fetches a file's rows into `path` as downloadSegment does (any FileRows). */
export async function readFileRows(run: Run, rows: FileRows, info: SegmentRowsInfo, path: string): Promise<void> {
  const tmp = tempFileName(path);
  const fh = await open(tmp, 'w', 0o644);
  const hash = createHash('sha256');
  let position = 0;
  try {
    for (let seq = 0; seq < info.chunks; seq++) {
      const got = await run<{ bytes: Buffer }>(`SELECT bytes FROM ${rows.table} WHERE ${rows.keyColumn} = $1 AND seq = $2`, [rows.key, seq]);
      if (got.length === 0) throw new SegmentRowsError(`${rows.what} has no piece ${seq} of ${info.chunks}`);
      const piece = got[0].bytes;
      hash.update(piece);
      let off = 0;
      while (off < piece.length) {
        const { bytesWritten } = await fh.write(piece, off, piece.length - off, position);
        off += bytesWritten;
        position += bytesWritten;
      }
    }
    const sha256 = hash.digest('hex');
    if (position !== info.bytes || sha256 !== info.sha256) {
      throw new SegmentRowsError(`${rows.what} fetched from the database is not the one recorded (${position} bytes, ${info.bytes} recorded; checksum ${sha256 === info.sha256 ? 'equal' : 'differs'})`);
    }
    await fh.sync();
    await fh.close();
    await rename(tmp, path);
  } catch (err) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await fsyncDirectory(dirname(path));
}

/** Rows of bytes cut in pieces, for a value that may exceed one piece. */
function pieces(bytes: Buffer, pieceBytes: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length || out.length === 0; at += pieceBytes) out.push(bytes.subarray(at, at + pieceBytes));
  return out;
}

/**
 * Copies a build's stored documents (`<dataDir>/builds/<buildId>.docs.gz`, written by the
 * ingest) to `document_chunks`: each document's line gzipped, in pieces, and its order in
 * `build_documents.ord`. Documents without a record of the build are skipped (the ingest records
 * every document it stores). Returns the number stored; 0 when the build has no stored documents.
 */
export async function uploadStoredDocs(client: pg.PoolClient, dataDir: string, buildId: string, pieceBytes = PIECE_BYTES): Promise<number> {
  if (!(await hasStoredDocs(dataDir, buildId))) return 0;
  let ord = 0;
  for await (const { path, line } of readStoredDocLines(dataDir, buildId)) {
    const { rowCount } = await client.query('UPDATE build_documents SET ord = $3 WHERE build_id = $1 AND path = $2', [buildId, path, ord]);
    if (!rowCount) continue;
    ord++;
    const parts = pieces(await gzipAsync(line), pieceBytes);
    for (let seq = 0; seq < parts.length; seq++) {
      await client.query('INSERT INTO document_chunks (build_id, path, seq, bytes) VALUES ($1, $2, $3, $4)', [buildId, path, seq, parts[seq]]);
    }
  }
  return ord;
}

/** Whether a build has its stored documents in the database. */
export async function hasStoredDocRows(run: Run, buildId: string): Promise<boolean> {
  return (await run('SELECT 1 FROM document_chunks WHERE build_id = $1 LIMIT 1', [buildId])).length > 0;
}

/**
 * Writes a build's stored documents from the database to `<dataDir>/builds/<buildId>.docs.gz`
 * (StoredDocsWriter: partial file, renamed when complete), one document at a time in their
 * order. Returns false (and writes nothing) when the database has none for the build.
 */
export async function downloadStoredDocs(run: Run, dataDir: string, buildId: string): Promise<boolean> {
  const docs = await run<{ path: string; chunks: number }>(
    'SELECT d.path, count(c.seq)::int AS chunks FROM build_documents d JOIN document_chunks c ON c.build_id = d.build_id AND c.path = d.path WHERE d.build_id = $1 GROUP BY d.path, d.ord ORDER BY d.ord',
    [buildId],
  );
  if (docs.length === 0) return false;
  storedDocsPath(dataDir, buildId); // refuses an id that is not a plain name
  const out = await StoredDocsWriter.create(dataDir, buildId);
  try {
    for (const d of docs) {
      const rows = await run<{ bytes: Buffer }>('SELECT bytes FROM document_chunks WHERE build_id = $1 AND path = $2 ORDER BY seq', [buildId, d.path]);
      const line = (await gunzipAsync(Buffer.concat(rows.map((r) => r.bytes)))).toString('utf8');
      await out.addLine(line);
    }
    await out.commit();
  } catch (err) {
    await out.discard();
    throw err;
  }
  return true;
}
