/**
 * Shared by the provider plugins built on vendor SDKs: their options (timeout, retries) and how
 * a plugin turns what its vendor SDK threw into a ProviderError (core/providers.ts):
 * the kind callers act on, a message that names the vendor and the HTTP status and never a key.
 *
 * SDK errors carry the request's headers and the vendor's body (which may echo the key back), so
 * nothing of them is passed on as is: the message is built here from the facts a plugin reads
 * off its SDK's error (status, Retry-After, the vendor's own error text, redacted and cut).
 */
import { createRedactor, excerpt, type Redactor } from './redact.ts';
import { Type, type Static } from '@sinclair/typebox';
import { ProviderError, type Llm } from './providers.ts';
import type { ProviderEndpoint } from './provider-settings.ts';

/**
 * A provider plugin's options (config/default.yaml), the same for every vendor: `timeoutMs`, the
 * milliseconds one attempt may take before it is abandoned; `maxRetries`, the retries after the
 * first attempt (429 honouring Retry-After, 5xx, connection errors, timeouts).
 */
export const providerClientOptionsSchema = Type.Object(
  {
    timeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000 }),
    maxRetries: Type.Integer({ minimum: 0, maximum: 10, default: 2 }),
  },
  { additionalProperties: false },
);
export type ProviderClientOptions = Static<typeof providerClientOptionsSchema>;

/** What a plugin learned from a failed call. */
export interface FailureFacts {
  status?: number;
  /** The reply's headers, when the SDK kept them (for Retry-After). */
  headers?: Headers | Record<string, string | string[] | null | undefined> | null;
  /** The vendor's error text (redacted and cut before it reaches a message). */
  detail?: string;
  /** The call ran past its timeout (or was aborted by the caller's deadline). */
  timeout?: boolean;
  /** No reply at all: refused connection, DNS, reset. */
  connection?: boolean;
  /** A reply that could not be read as the API promises. */
  malformed?: boolean;
  /** The vendor said the key is not valid whatever the status (Gemini answers 400 API_KEY_INVALID). */
  keyRefused?: boolean;
  /** How many attempts the SDK made (shown in rate-limit messages). */
  attempts?: number;
}

/** A redactor for one endpoint's key (and the generic credential shapes). */
export function keyRedactor(apiKey: string | null): Redactor {
  return createRedactor(apiKey ? [apiKey] : []);
}

function header(h: FailureFacts['headers'], name: string): string | null {
  if (!h) return null;
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name);
  const v = (h as Record<string, unknown>)[name] ?? (h as Record<string, unknown>)[name.toLowerCase()];
  return Array.isArray(v) ? String(v[0]) : typeof v === 'string' ? v : null;
}

/** Milliseconds a reply asks the client to wait (`retry-after-ms`, or Retry-After in seconds or as a date). */
export function retryAfterMs(headers: FailureFacts['headers'], now = Date.now()): number | undefined {
  const ms = Number(header(headers, 'retry-after-ms'));
  if (header(headers, 'retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0) return ms;
  const raw = header(headers, 'retry-after');
  if (raw === null || raw.trim() === '') return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** The ProviderError for a failed call to `vendor` (e.g. "OpenAI at http://127.0.0.1:8080/v1"). */
export function providerFailure(vendor: string, facts: FailureFacts, redact: Redactor): ProviderError {
  const detail = facts.detail ? excerpt(facts.detail, redact, 200) : '';
  const tail = detail ? `: ${detail}` : '';
  const status = facts.status;
  if (facts.timeout) return new ProviderError('timeout', `${vendor} did not answer in time (the request timed out).`);
  if (facts.keyRefused || status === 401 || status === 403) {
    return new ProviderError('auth', `${vendor} refused the API key (HTTP ${status}): set a valid key for it in Settings${tail}`, status);
  }
  if (status === 429) {
    const wait = retryAfterMs(facts.headers);
    const after = wait !== undefined ? ` Retry after ${Math.ceil(wait / 1000)} s.` : '';
    const tries = facts.attempts && facts.attempts > 1 ? ` after ${facts.attempts} attempts` : '';
    return new ProviderError('rate_limited', `${vendor} is rate-limiting this key (HTTP 429)${tries}.${after}`, status, wait);
  }
  if (status !== undefined && status >= 500) return new ProviderError('unavailable', `${vendor} is not serving (HTTP ${status})${tail}`, status, retryAfterMs(facts.headers));
  if (status !== undefined && status >= 400) return new ProviderError('bad_request', `${vendor} refused the request (HTTP ${status})${tail}`, status);
  if (facts.malformed) return new ProviderError('bad_response', `${vendor} sent a reply that is not what its API promises${tail}`, status);
  if (facts.connection) return new ProviderError('unavailable', `${vendor} could not be reached${tail}`);
  return new ProviderError('unavailable', `${vendor} call failed${tail}`, status);
}

/** Facts common to every SDK: aborts, timeouts, unparseable JSON, fetch's connection errors. */
export function genericFacts(e: unknown): FailureFacts {
  const err = e as { name?: string; message?: string; code?: string; cause?: { code?: string; name?: string } };
  const name = err?.name ?? '';
  const message = String(err?.message ?? e);
  if (name === 'AbortError' || name === 'TimeoutError' || /timed? ?out/i.test(message)) return { timeout: true };
  if (e instanceof SyntaxError || /JSON|Unexpected end|Unexpected token/i.test(message)) return { malformed: true, detail: 'the body is not valid JSON' };
  if (/terminated|other side closed|ECONNRESET|socket hang up|premature close/i.test(message) || err?.cause?.code === 'UND_ERR_SOCKET') return { malformed: true, detail: 'the reply was cut off' };
  return { connection: true, detail: message };
}

/** The vendor's name and endpoint for messages and logs (never the key). */
export function vendorLabel(name: string, baseUrl: string): string {
  return `${name} at ${baseUrl}`;
}

/** The error classes of a Stainless-generated SDK (`openai`, `@anthropic-ai/sdk`). */
export interface StainlessErrors {
  APIError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIUserAbortError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
}

/** Facts from an error of a Stainless-generated SDK (its APIError keeps status, headers and the body's error). */
export function stainlessFacts(e: unknown, sdk: StainlessErrors, attempts: number): FailureFacts {
  if (e instanceof sdk.APIConnectionTimeoutError || e instanceof sdk.APIUserAbortError) return { timeout: true };
  if (e instanceof sdk.APIConnectionError) {
    const cause = (e as { cause?: unknown }).cause;
    return cause ? genericFacts(cause) : { connection: true };
  }
  if (e instanceof sdk.APIError) {
    const err = e as Error & { status?: number; headers?: Headers; error?: { message?: unknown; error?: { message?: unknown } } };
    const msg = err.error?.message ?? err.error?.error?.message;
    return { status: err.status, headers: err.headers, detail: typeof msg === 'string' ? msg : undefined, attempts };
  }
  return genericFacts(e);
}

/** The longest a Retry-After is waited for inside one call; a longer ask ends the call as rate_limited. */
export const MAX_RETRY_WAIT_MS = 60_000;

/**
 * Runs `attempt` up to 1 + maxRetries times for SDKs whose own retries ignore Retry-After:
 * rate_limited, unavailable and timeout failures are retried after the wait the vendor asked for
 * (Retry-After) or an exponential backoff; auth, bad_request and bad_response are final.
 */
export async function withRetries<T>(attempt: (n: number) => Promise<T>, maxRetries: number, signal?: AbortSignal, baseDelayMs = 500): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (e) {
      const retryable = e instanceof ProviderError && (e.kind === 'rate_limited' || e.kind === 'unavailable' || e.kind === 'timeout');
      if (!retryable || n >= maxRetries || signal?.aborted) throw e;
      const wait = e.retryAfterMs ?? baseDelayMs * 2 ** n * (0.75 + Math.random() / 2);
      if (wait > MAX_RETRY_WAIT_MS) throw e;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/**
 * An Llm whose client (and vendor SDK: about a second of CPU each to import) is loaded at its
 * first call, so that starting the server or a CLI command does not pay for SDKs it may never use.
 */
export function lazyLlm(endpoint: ProviderEndpoint, load: () => Promise<Llm>): Llm {
  let client: Promise<Llm> | null = null;
  const loaded = () => {
    if (!client) {
      client = load();
      client.catch(() => (client = null));
    }
    return client;
  };
  return {
    provider: endpoint.provider,
    model: endpoint.model,
    complete: (req) => loaded().then((c) => c.complete(req)),
    ready: () => loaded().then(() => undefined),
  };
}

/** The client options of a Stainless-generated SDK (`openai`, `@anthropic-ai/sdk`) for an endpoint. */
export function stainlessClientOptions(endpoint: ProviderEndpoint, options: ProviderClientOptions) {
  return {
    // A local server may need no key; the SDKs insist on one (sent as a Bearer token).
    apiKey: endpoint.apiKey ?? 'none',
    baseURL: endpoint.baseUrl,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
    logLevel: 'off' as const,
  };
}
