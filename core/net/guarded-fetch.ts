/**
 * The kernel's default Fetch: every URL a user gives goes through the operator's network policy.
 *
 * - Each URL (the first one and every redirect hop) is checked with `assertUrlAllowed`, after DNS
 *   resolution; the connection is then made only to the addresses that were checked (the undici
 *   Agent's `connect.lookup` answers from the checked addresses and never asks DNS again), so a
 *   name that re-binds to a private address between the check and the connect cannot get in.
 * - Redirects are followed here (at most 10 hops by default), never by the HTTP client. The
 *   returned Response's `url` is the final URL and `redirected` says whether a redirect was
 *   followed, as with the WHATWG fetch. `redirect: 'manual'` returns the 3xx response itself
 *   (its target is not fetched, so it is not checked); `redirect: 'error'` rejects on a redirect.
 *   On a redirect to another origin, Authorization, Cookie and Proxy-Authorization are dropped.
 * - Response bodies are capped at `maxResponseBytes` (decoded bytes): a Content-Length above the
 *   cap fails before the body is read, and a longer streamed body errors with `too_large`.
 * - The whole request, body included, must finish within `timeoutMs` (a per-call `timeoutMs`
 *   may only shorten it); a time-out rejects with an `invalid_source` RefdeskError that says so.
 *   When the caller's own signal aborts, the signal's reason is thrown unchanged.
 */
import type { Agent } from 'undici';
import { lazyModule } from '../lazy-module.ts';

/** undici, loaded at the first fetch rather than when the kernel is built (a server that fetches nothing never needs it). */
const undici = lazyModule<typeof import('undici')>('undici');
import type { Fetch } from '../contracts.ts';
import { RefdeskError } from '../errors.ts';
import { assertUrlAllowed, type Lookup, type NetworkPolicy } from './address-policy.ts';

export interface GuardedFetchOptions {
  /** DNS resolution used by the address checks (tests inject names here); the system's by default. */
  lookup?: Lookup;
  /** Most redirects followed for one request (10 by default). */
  maxRedirects?: number;
}

/** A Fetch that applies a NetworkPolicy; `close()` releases its pooled connections. */
export interface GuardedFetch extends Fetch {
  close(): Promise<void>;
}

type Address = { address: string; family: number };
type LookupCallback = (err: Error | null, address: string | Address[], family?: number) => void;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

/** Builds the guarded Fetch for one policy. */
export function createGuardedFetch(policy: NetworkPolicy, options: GuardedFetchOptions = {}): GuardedFetch {
  const maxRedirects = options.maxRedirects ?? 10;
  // Host name -> the addresses its last check allowed. Only these are ever connected to.
  const checked = new Map<string, Address[]>();
  const connectLookup = (hostname: string, opts: { all?: boolean; family?: number }, cb: LookupCallback): void => {
    const all = checked.get(hostname.toLowerCase());
    const addrs = all?.filter((a) => !opts.family || a.family === opts.family);
    if (!addrs || addrs.length === 0) {
      const err = Object.assign(new Error(`No checked address for "${hostname}".`), { code: 'ENOTFOUND' });
      cb(err, opts.all ? [] : '', 0);
      return;
    }
    if (opts.all) cb(null, addrs);
    else cb(null, addrs[0].address, addrs[0].family);
  };
  let agent: Agent | undefined;

  return {
    async fetch(input, init = {}) {
      const { timeoutMs, signal: callerSignal, redirect = 'follow', ...rest } = init;
      const limitMs = Math.min(timeoutMs ?? policy.timeoutMs, policy.timeoutMs);
      const timeout = AbortSignal.timeout(limitMs);
      const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
      const startHost = hostOf(String(input));
      const onAbort = (e: unknown): unknown => {
        if (callerSignal?.aborted) return callerSignal.reason;
        if (timeout.aborted) {
          return new RefdeskError('invalid_source', `The request to "${startHost}" did not finish within ${limitMs} ms (network.timeoutMs). Try again later, or raise the limit if the server is just slow.`, { cause: e });
        }
        return e;
      };

      let url: URL | string = String(input);
      let method = (rest.method ?? 'GET').toUpperCase();
      let body = rest.body;
      const headers = new Headers(rest.headers);
      for (let hop = 0; ; hop++) {
        const addrs = await assertUrlAllowed(url, policy, { lookup: options.lookup });
        const current = new URL(String(url));
        checked.set(current.hostname.toLowerCase(), addrs);
        if (signal.aborted) throw onAbort(signal.reason);
        let res: Response;
        try {
          agent ??= new (undici().Agent)({ connect: { lookup: connectLookup as never } });
          res = (await undici().fetch(current, { ...(rest as object), method, body, headers, redirect: 'manual', signal, dispatcher: agent } as never)) as unknown as Response;
        } catch (e) {
          throw onAbort(e);
        }
        const location = res.headers.get('location');
        if (REDIRECTS.has(res.status) && location !== null && redirect !== 'manual') {
          await res.body?.cancel().catch(() => undefined);
          if (redirect === 'error') {
            throw new RefdeskError('invalid_source', `"${current.host}" answered with a redirect (${res.status}) where none was expected.`);
          }
          if (hop >= maxRedirects) {
            throw new RefdeskError('invalid_source', `Gave up after ${maxRedirects} redirects starting at "${startHost}": the server redirects in a loop or too often. Give the final URL instead.`);
          }
          let next: URL;
          try {
            next = new URL(location, current);
          } catch {
            throw new RefdeskError('invalid_source', `"${current.host}" redirected to an invalid URL.`);
          }
          if (res.status === 303 ? method !== 'GET' && method !== 'HEAD' : (res.status === 301 || res.status === 302) && method === 'POST') {
            method = 'GET';
            body = undefined;
            for (const h of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) headers.delete(h);
          } else if (body instanceof ReadableStream) {
            throw new RefdeskError('invalid_request', `"${current.host}" redirected a request whose body was a stream and cannot be sent again; send a string or bytes.`);
          }
          if (next.origin !== current.origin) for (const h of CREDENTIAL_HEADERS) headers.delete(h);
          url = next;
          continue;
        }
        return capResponse(res, current.href, hop > 0, policy.maxResponseBytes, method === 'HEAD', onAbort);
      }
    },
    close: async () => {
      await agent?.close();
    },
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the server';
  }
}

function tooLarge(url: string, detail: string, max: number): RefdeskError {
  return new RefdeskError('too_large', `The response from "${new URL(url).host}" ${detail}, more than the limit of ${max} bytes (network.maxResponseBytes). Point at a smaller document, or ask the operator to raise the limit.`);
}

/** Re-wraps the response so its body stops at `max` bytes and reports its final URL. */
async function capResponse(res: Response, finalUrl: string, redirected: boolean, max: number, head: boolean, onAbort: (e: unknown) => unknown): Promise<Response> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge(finalUrl, `is ${declared} bytes`, max);
  }
  let body: ReadableStream<Uint8Array> | null = null;
  if (res.body && !head && !NULL_BODY.has(res.status)) {
    const reader = res.body.getReader();
    let total = 0;
    body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (e) {
          controller.error(onAbort(e));
          return;
        }
        if (chunk.done) {
          controller.close();
          return;
        }
        total += chunk.value.byteLength;
        if (total > max) {
          await reader.cancel().catch(() => undefined);
          controller.error(tooLarge(finalUrl, 'is larger than that', max));
          return;
        }
        controller.enqueue(chunk.value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
  } else {
    await res.body?.cancel().catch(() => undefined);
  }
  const out = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  Object.defineProperty(out, 'url', { value: finalUrl, enumerable: true });
  Object.defineProperty(out, 'redirected', { value: redirected, enumerable: true });
  return out;
}
