/**
 * Minimal archive writers for tests: they write exactly what they are told, including hostile
 * names, link entries and headers that lie about sizes.
 */
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';

export interface ZipEntryInput {
  /** Stored as given (UTF-8); may contain '..', backslashes, NUL... */
  name: string | Buffer;
  data?: string | Buffer;
  method?: 'store' | 'deflate';
  /** Unix mode (e.g. 0o120777 for a symlink); written in the external attributes' high bits. */
  unixMode?: number;
  /** The uncompressed size written in the headers (default: the real size). */
  declaredSize?: number;
  /** The CRC-32 written in the headers (default: the real one). */
  crc?: number;
}

export function buildZip(entries: ZipEntryInput[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = typeof e.name === 'string' ? Buffer.from(e.name, 'utf8') : e.name;
    const raw = typeof e.data === 'string' ? Buffer.from(e.data, 'utf8') : (e.data ?? Buffer.alloc(0));
    const method = e.method === 'deflate' ? 8 : 0;
    const body = method === 8 ? deflateRawSync(raw) : raw;
    const crc = e.crc ?? crc32(raw);
    const size = e.declaredSize ?? raw.length;
    const flags = 0x800; // names are UTF-8

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, body);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(e.unixMode !== undefined ? (3 << 8) | 20 : 20, 4); // made by: Unix when a mode is set
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(0, 30);
    central.writeUInt16LE(0, 32);
    central.writeUInt16LE(0, 34);
    central.writeUInt16LE(0, 36);
    central.writeUInt32LE(e.unixMode !== undefined ? (e.unixMode << 16) >>> 0 : 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);

    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(0, 4);
  end.writeUInt16LE(0, 6);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(0, 20);
  return Buffer.concat([...locals, cd, end]);
}

export interface TarEntryInput {
  /** Written in the 100-byte name field (longer names go to a PAX header). */
  name: string;
  data?: string | Buffer;
  /** '0' file (default), '1' hard link, '2' symlink, '3' char device, '5' directory, '6' FIFO, 'g' global PAX. */
  type?: string;
  linkname?: string;
  /** PAX records written in an 'x' header before this entry. */
  pax?: Record<string, string>;
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, type: string, linkname = ''): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(type === '5' ? 0o755 : 0o644, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(1_700_000_000, 12), 136, 'latin1');
  h.write('        ', 148, 'latin1');
  h.write(type, 156, 'latin1');
  h.write(linkname, 157, 100, 'utf8');
  h.write('ustar\u000000', 257, 'latin1');
  h.write('root', 265, 'latin1');
  h.write('root', 297, 'latin1');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'latin1');
  return h;
}

function pad(data: Buffer): Buffer {
  const rest = data.length % 512;
  return rest === 0 ? data : Buffer.concat([data, Buffer.alloc(512 - rest)]);
}

export function paxBody(records: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(records)) {
    const kv = ` ${k}=${v}\n`;
    let len = Buffer.byteLength(kv) + 1;
    while (String(len).length + Buffer.byteLength(kv) !== len) len = String(len).length + Buffer.byteLength(kv);
    parts.push(Buffer.from(`${len}${kv}`, 'utf8'));
  }
  return Buffer.concat(parts);
}

export function buildTar(entries: TarEntryInput[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const records = { ...(e.pax ?? {}) };
    if (Buffer.byteLength(e.name) > 100 && records.path === undefined) records.path = e.name;
    if (Object.keys(records).length > 0) {
      const body = paxBody(records);
      blocks.push(header(`PaxHeader/${e.name.slice(0, 80)}`, body.length, 'x'), pad(body));
    }
    const type = e.type ?? '0';
    const data = typeof e.data === 'string' ? Buffer.from(e.data, 'utf8') : (e.data ?? Buffer.alloc(0));
    blocks.push(header(e.name, data.length, type, e.linkname ?? ''));
    if (data.length > 0) blocks.push(pad(data));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

export function buildTarGz(entries: TarEntryInput[]): Buffer {
  return gzipSync(buildTar(entries));
}
