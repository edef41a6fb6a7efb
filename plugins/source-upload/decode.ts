const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export type Decoded = { text: string } | { skip: string };

/**
 * Decodes a documentation file: strict UTF-8, one leading BOM stripped. Files with NUL bytes
 * are binary (or UTF-16) even when they happen to be valid UTF-8, and are skipped too.
 */
export function decodeDocument(bytes: Uint8Array): Decoded {
  if (bytes.includes(0)) return { skip: 'it looks binary (contains NUL bytes)' };
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { skip: 'it is not valid UTF-8' };
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { text };
}
