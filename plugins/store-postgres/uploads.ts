/**
 * Raw uploads on PostgreSQL (core/contracts.ts UploadStore; migration 008): the archive or spec
 * file a node received for an upload or OpenAPI-upload library, in `uploads` (name, size, SHA-256)
 * and `upload_chunks` (pieces of PIECE_BYTES, as segments are stored: segment-rows.ts), so that
 * whichever node claims the upload's job fetches it to its own uploads folder and runs it.
 */
import type { UploadStore } from '../../core/contracts.ts';
import { invalid } from '../../core/store-rules.ts';
import { PgRole } from './database.ts';
import { readFileRows, writeFileRows, type FileRows } from './segment-rows.ts';
import { num, str } from './rows.ts';

/** A raw upload's name: one plain file name (core/uploads.ts makes them: a UUID and an extension). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

function rowsOf(name: string): FileRows {
  if (!NAME.test(name) || name.includes('..')) throw invalid(`"${name.slice(0, 80)}" is not the name of a raw upload.`);
  return { table: 'upload_chunks', keyColumn: 'name', key: name, what: `the raw upload ${name}` };
}

export class PgUploads extends PgRole implements UploadStore {
  async putUpload(name: string, path: string): Promise<void> {
    const rows = rowsOf(name);
    await this.tx(async (c) => {
      await c.query('DELETE FROM uploads WHERE name = $1', [name]);
      // The record first (the pieces reference it), completed once every piece is written.
      await c.query('INSERT INTO uploads (name, bytes, chunks, sha256) VALUES ($1, 0, 0, $2)', [name, '']);
      const info = await writeFileRows(c, rows, path);
      await c.query('UPDATE uploads SET bytes = $2, chunks = $3, sha256 = $4 WHERE name = $1', [name, info.bytes, info.chunks, info.sha256]);
    });
  }

  async fetchUpload(name: string, path: string): Promise<boolean> {
    const rows = rowsOf(name);
    const [row] = await this.query('SELECT bytes, chunks, sha256 FROM uploads WHERE name = $1', [name]);
    if (!row) return false;
    await readFileRows((sql, params) => this.query(sql, params), rows, { bytes: num(row.bytes), chunks: num(row.chunks), sha256: str(row.sha256) }, path);
    return true;
  }

  async removeUpload(name: string): Promise<void> {
    rowsOf(name);
    await this.query('DELETE FROM uploads WHERE name = $1', [name]);
  }

  async listUploads(before: Date): Promise<string[]> {
    const rows = await this.query('SELECT name FROM uploads WHERE created_at < $1 ORDER BY created_at', [before.toISOString()]);
    return rows.map((r) => str(r.name));
  }
}
