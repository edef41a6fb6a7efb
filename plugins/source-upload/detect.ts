import { open } from 'node:fs/promises';

export type ArchiveKind = 'zip' | 'tar.gz' | 'tar';

/** Reads the first bytes of a file and recognizes an archive by its magic bytes. */
export async function sniffArchive(file: string): Promise<ArchiveKind | null> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    return archiveKindOf(head.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
}

export function archiveKindOf(head: Uint8Array): ArchiveKind | null {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && ((b[2] === 3 && b[3] === 4) || (b[2] === 5 && b[3] === 6))) {
    return 'zip';
  }
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) return 'tar.gz';
  if (b.length >= 262 && b.toString('latin1', 257, 262) === 'ustar') return 'tar';
  return null;
}

/** What the file name claims, used only when the magic bytes are not recognized. */
export function archiveKindOfName(name: string): ArchiveKind | null {
  const lower = name.toLowerCase();
  if (lower.endsWith('.zip')) return 'zip';
  if (lower.endsWith('.tar.gz') || lower.endsWith('.tgz')) return 'tar.gz';
  if (lower.endsWith('.tar')) return 'tar';
  return null;
}
