/**
 * Registry requests: JSON documents and archive downloads, retried with backoff, byte-capped,
 * and checked against the digest the registry published.
 */
import { createHash } from 'node:crypto';
import type { Fetch, SourceContext } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { displayUrl, fetchWithRetry, httpFailure, readBodyCapped, type RetryOptions } from '../../core/net/retry.ts';

export interface RegistryEnv {
  fetch: Fetch;
  maxDownloadBytes: number;
  retry: RetryOptions;
  signal: AbortSignal;
}

export function registryEnv(fetch: Fetch, maxDownloadBytes: number, attempts: number, baseDelayMs: number, ctx: SourceContext): RegistryEnv {
  return {
    fetch,
    maxDownloadBytes,
    signal: ctx.signal,
    retry: {
      policy: { attempts, baseDelayMs },
      signal: ctx.signal,
      onRetry: ({ attempt, delayMs, reason }) => ctx.log('warn', `retrying (attempt ${attempt + 1} of ${attempts}) in ${delayMs} ms: ${reason}`),
    },
  };
}

/** A JSON document, or null on 404/410. Other failures throw with the URL and status. */
export async function getJson(env: RegistryEnv, url: string, what: string, accept = 'application/json'): Promise<unknown | null> {
  const { response: res, attempts } = await fetchWithRetry(env.fetch, url, { headers: { accept } }, env.retry);
  if (res.status === 404 || res.status === 410) {
    await res.body?.cancel().catch(() => {});
    return null;
  }
  if (!res.ok) throw httpFailure(url, res, what, { attempts });
  const body = await readBodyCapped(res, env.maxDownloadBytes, url, env.signal);
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new RefdeskError('invalid_source', `${what} at ${displayUrl(url)} is not valid JSON; is this the right registry URL?`);
  }
}

export interface Digest {
  /** Node hash algorithm: sha512, sha256, sha1. */
  algorithm: string;
  /** Expected digest, hex. */
  hex: string;
}

/** An npm `integrity` string (`sha512-<base64>`) or a hex shasum, as a Digest. */
export function npmDigest(integrity: unknown, shasum: unknown): Digest | null {
  if (typeof integrity === 'string') {
    for (const part of integrity.trim().split(/\s+/)) {
      const m = /^(sha512|sha384|sha256)-([A-Za-z0-9+/=]+)$/.exec(part);
      if (m) return { algorithm: m[1], hex: Buffer.from(m[2], 'base64').toString('hex') };
    }
  }
  if (typeof shasum === 'string' && /^[0-9a-f]{40}$/i.test(shasum)) return { algorithm: 'sha1', hex: shasum.toLowerCase() };
  return null;
}

/** Downloads an archive (capped) and checks its digest when one is known. */
export async function download(env: RegistryEnv, url: string, what: string, digest: Digest | null): Promise<Buffer> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RefdeskError('invalid_source', `The registry gave an invalid download URL for ${what}.`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new RefdeskError('invalid_source', `The registry gave a non-http(s) download URL for ${what}.`);
  }
  const { response: res, attempts } = await fetchWithRetry(env.fetch, url, {}, env.retry);
  if (!res.ok) throw httpFailure(url, res, what, { attempts });
  const data = await readBodyCapped(res, env.maxDownloadBytes, url, env.signal);
  if (digest) {
    const actual = createHash(digest.algorithm).update(data).digest('hex');
    if (actual !== digest.hex) {
      throw new RefdeskError('invalid_source', `${what} downloaded from ${displayUrl(url)} does not match the ${digest.algorithm} digest the registry published; the download was refused.`);
    }
  }
  return data;
}
