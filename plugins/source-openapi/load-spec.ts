import { open, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Fetch } from '../../core/contracts.ts';
import { RefdeskError, isRefdeskError } from '../../core/errors.ts';

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
  opts: { maxBytes: number; attempts: number; signal: AbortSignal; validators?: Validators; log?(m: string): void },
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

  let lastProblem = '';
  for (let attempt = 1; attempt <= opts.attempts; attempt++) {
    opts.signal.throwIfAborted();
    if (attempt > 1) {
      await sleep(250 * 4 ** (attempt - 2), opts.signal);
      opts.log?.(`retrying ${shown} (attempt ${attempt} of ${opts.attempts}): ${lastProblem}`);
    }
    let res: Response;
    try {
      res = await fetch.fetch(url, { headers, signal: opts.signal, redirect: 'follow' });
    } catch (e) {
      if (isRefdeskError(e)) throw e; // the network policy refused it: retrying will not help
      opts.signal.throwIfAborted();
      lastProblem = (e as Error).name === 'TimeoutError' ? 'the request timed out' : `network error (${(e as Error).message})`;
      continue;
    }
    if (res.status === 304) {
      await res.body?.cancel().catch(() => {});
      return { notModified: true, location: shown };
    }
    if (res.status >= 500 || res.status === 429) {
      await res.body?.cancel().catch(() => {});
      lastProblem = `the server answered ${res.status}`;
      continue;
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new RefdeskError(
        'invalid_source',
        `The OpenAPI spec URL ${shown} answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}: check the URL${res.status === 401 || res.status === 403 ? ' (the spec must be readable without credentials)' : ''}.`,
      );
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > opts.maxBytes) {
      await res.body?.cancel().catch(() => {});
      throw tooLarge(`at ${shown}`, opts.maxBytes);
    }
    const bytes = await readCapped(res, opts.maxBytes, () => tooLarge(`at ${shown}`, opts.maxBytes));
    return {
      notModified: false,
      bytes,
      contentType: res.headers.get('content-type') ?? '',
      ...(res.headers.get('etag') ? { etag: res.headers.get('etag')! } : {}),
      ...(res.headers.get('last-modified') ? { lastModified: res.headers.get('last-modified')! } : {}),
      location: shown,
    };
  }
  throw new RefdeskError('invalid_source', `Could not download the OpenAPI spec from ${shown} after ${opts.attempts} attempts: ${lastProblem}.`);
}

async function readCapped(res: Response, max: number, fail: () => RefdeskError): Promise<Buffer> {
  if (!res.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw fail();
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks, total);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolveSleep, reject) => {
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolveSleep();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
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
