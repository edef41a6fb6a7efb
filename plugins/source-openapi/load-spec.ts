import { open, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Fetch } from '../../core/contracts.ts';
import { RefdeskError, isRefdeskError } from '../../core/errors.ts';
import { fetchWithRetry, readBodyCapped, statusLine } from '../../core/net/retry.ts';

/** The raw spec document as read, or the news that it did not change (HTTP 304). */
export type LoadedSpec =
  | { notModified: false; bytes: Buffer; contentType: string; etag?: string; lastModified?: string; location: string }
  | { notModified: true; location: string };

/** Conditional-request facts from the previous build (meta of its documents). */
export interface Validators {
  etag?: string;
  lastModified?: string;
}

/** What the user gave, for messages: scheme, host and path only (a query string may hold a token). */
export function describeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function tooLarge(what: string, max: number): RefdeskError {
  return new RefdeskError(
    'too_large',
    `The OpenAPI spec ${what} is larger than ${max} bytes (option maxSpecBytes). Split it, or ask the operator to raise maxSpecBytes.`,
  );
}

/**
 * Downloads a spec through the injected Fetch (so the operator's network policy applies), with a
 * conditional request when the previous build left an ETag or Last-Modified, a byte cap, and a
 * few attempts with backoff for network failures and 5xx/429 answers.
 */
export async function fetchSpec(
  fetch: Fetch,
  rawUrl: string,
  opts: { maxBytes: number; attempts: number; signal: AbortSignal; validators?: Validators; /** A job log line; `path` is the spec's address as shown. */ log?(m: string, path?: string): void },
): Promise<LoadedSpec> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new RefdeskError('invalid_request', 'The OpenAPI spec "url" is not a valid absolute URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RefdeskError('invalid_request', `The OpenAPI spec "url" must be http or https (got ${url.protocol.replace(':', '')}).`);
  }
  if (url.username || url.password) {
    throw new RefdeskError('invalid_request', 'Credentials in the OpenAPI spec URL are refused: remove user:password@ from it.');
  }
  const shown = describeUrl(url);
  const headers: Record<string, string> = { accept: 'application/json, application/yaml, text/yaml, */*;q=0.5' };
  if (opts.validators?.etag) headers['if-none-match'] = opts.validators.etag;
  if (opts.validators?.lastModified) headers['if-modified-since'] = opts.validators.lastModified;

  const { response: res, attempts } = await fetchWithRetry(
    fetch,
    url.href,
    { headers, redirect: 'follow' },
    {
      policy: { attempts: opts.attempts, baseDelayMs: 250 },
      signal: opts.signal,
      onRetry: ({ attempt, reason }) => opts.log?.(`retrying ${shown} (attempt ${attempt + 1} of ${opts.attempts}): ${reason}`, shown),
    },
  );
  if (res.status === 304) {
    await res.body?.cancel().catch(() => {});
    return { notModified: true, location: shown };
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    if (res.status >= 500 || res.status === 429) {
      throw new RefdeskError('invalid_source', `Could not download the OpenAPI spec from ${shown} after ${attempts} attempts: the server answered ${res.status}.`);
    }
    throw new RefdeskError(
      'invalid_source',
      `The OpenAPI spec URL ${shown} answered ${statusLine(res.status).replace(/^HTTP /, '')}: check the URL${res.status === 401 || res.status === 403 ? ' (the spec must be readable without credentials)' : ''}.`,
    );
  }
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > opts.maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge(`at ${shown}`, opts.maxBytes);
  }
  const bytes = await readBodyCapped(res, opts.maxBytes, shown, opts.signal).catch((e: unknown) => {
    throw isRefdeskError(e) && e.code === 'too_large' ? tooLarge(`at ${shown}`, opts.maxBytes) : e;
  });
  return {
    notModified: false,
    bytes,
    contentType: res.headers.get('content-type') ?? '',
    ...(res.headers.get('etag') ? { etag: res.headers.get('etag')! } : {}),
    ...(res.headers.get('last-modified') ? { lastModified: res.headers.get('last-modified')! } : {}),
    location: shown,
  };
}

/**
 * Reads an uploaded spec file. Only files inside `<dataDir>/uploads` are read: the path (absolute,
 * or relative to that folder) is resolved with realpath, so neither `..` nor a symbolic link can
 * lead outside it.
 */
export async function readUploadedSpec(uploadsDir: string, given: string, maxBytes: number): Promise<LoadedSpec> {
  if (given.includes('\0')) throw new RefdeskError('invalid_request', 'The OpenAPI spec "path" contains a NUL character.');
  const candidate = isAbsolute(given) ? given : join(uploadsDir, given);
  let root: string;
  try {
    root = await realpath(uploadsDir);
  } catch {
    throw new RefdeskError('invalid_source', `No uploads folder yet: upload the spec file first (it is saved under the data directory's uploads folder).`);
  }
  let file: string;
  try {
    file = await realpath(candidate);
  } catch {
    // Say "not found" only for paths that would be inside; anything else is refused as outside.
    if (!isInside(resolve(root), resolve(candidate))) throw outside();
    throw new RefdeskError('invalid_source', `The uploaded spec "${given}" was not found in the uploads folder: upload it again.`);
  }
  if (!isInside(root, file)) throw outside();
  const handle = await open(file, 'r').catch(() => {
    throw new RefdeskError('invalid_source', `The uploaded spec "${given}" cannot be read.`);
  });
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new RefdeskError('invalid_source', `The uploaded spec "${given}" is not a regular file.`);
    if (st.size > maxBytes) throw tooLarge(`file "${given}"`, maxBytes);
    const bytes = await handle.readFile();
    if (bytes.length > maxBytes) throw tooLarge(`file "${given}"`, maxBytes);
    return { notModified: false, bytes, contentType: '', location: relative(root, file).split(sep).join('/') };
  } finally {
    await handle.close();
  }
}

function isInside(root: string, file: string): boolean {
  const rel = relative(root, file);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function outside(): RefdeskError {
  return new RefdeskError(
    'forbidden',
    'The OpenAPI spec "path" must name a file inside the uploads folder of the data directory; other files on the server are not read. Upload the spec, or give its URL.',
  );
}
