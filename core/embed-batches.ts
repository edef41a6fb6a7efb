/**
 * What every embedder plugin does the same way (issue 21): texts split into batches, a bounded
 * number of batches in flight, each batch retried on a rate limit, a timeout or an unavailable
 * endpoint with exponential backoff that honours the vendor's Retry-After, and every reply
 * checked (one vector per text, one dimension throughout). The plugins turn their SDK's errors
 * into ProviderErrors (`classify`) and leave the SDK's own retries off, so both behave alike.
 */
import { Type } from '@sinclair/typebox';
import type { Embedder } from './contracts.ts';
import { ProviderError } from './providers.ts';
import { sleepAbortable } from './net/retry.ts';

export interface EmbedBatchOptions {
  /** Texts per request. */
  batchSize: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Retries of one batch after a retryable failure (rate limit, timeout, unavailable). */
  maxRetries: number;
  /** First backoff without a Retry-After; doubled per retry (with jitter). */
  retryBaseMs: number;
  /** Longest wait the client accepts (a longer Retry-After fails the batch as rate_limited). */
  maxRetryDelayMs: number;
}

export const EMBED_BATCH_DEFAULTS: EmbedBatchOptions = { batchSize: 64, concurrency: 2, maxRetries: 4, retryBaseMs: 500, maxRetryDelayMs: 60_000 };

/** JSON Schema (TypeBox) of the batch options, for the plugins' option schemas; each plugin gives `batchSize` its default. */
export const EMBED_BATCH_SCHEMA = {
  batchSize: Type.Integer({ minimum: 1, maximum: 2048, description: 'Texts per embedding request.' }),
  concurrency: Type.Integer({ minimum: 1, maximum: 16, default: EMBED_BATCH_DEFAULTS.concurrency, description: 'Embedding requests in flight at once.' }),
  maxRetries: Type.Integer({ minimum: 0, maximum: 10, default: EMBED_BATCH_DEFAULTS.maxRetries, description: 'Retries of a request after a rate limit, timeout or 5xx.' }),
  retryBaseMs: Type.Integer({ minimum: 0, maximum: 60_000, default: EMBED_BATCH_DEFAULTS.retryBaseMs, description: 'First backoff in ms (doubled per retry) when the vendor sends no Retry-After.' }),
  maxRetryDelayMs: Type.Integer({ minimum: 0, maximum: 600_000, default: EMBED_BATCH_DEFAULTS.maxRetryDelayMs, description: 'Longest wait accepted between retries (a longer Retry-After fails the request).' }),
  timeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000, description: 'Time limit of one embedding request.' }),
};

const RETRYABLE = new Set(['rate_limited', 'timeout', 'unavailable']);

/** The host of an endpoint's base URL, for messages (never its path or credentials). */
export function endpointHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured endpoint';
  }
}

/** The ProviderError kind for an HTTP status. */
export function kindOfStatus(status: number): ProviderError['kind'] {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status >= 500) return 'unavailable';
  return 'bad_request';
}

export interface BatchStats {
  requests: number;
  retries: number;
}

/**
 * An Embedder over a vendor's batch call. `call` embeds one batch (rejecting with whatever its
 * SDK throws); `classify` turns that into a ProviderError. The dimension is the one the model
 * is known to have, else learnt from the first reply; a later reply of another dimension is a
 * bad_response.
 */
export class BatchedEmbedder implements Embedder {
  readonly stats: BatchStats = { requests: 0, retries: 0 };
  private dims: number;

  constructor(
    readonly model: string,
    knownDimensions: number | undefined,
    private readonly options: EmbedBatchOptions,
    private readonly call: (texts: string[], purpose: 'document' | 'query') => Promise<unknown[]>,
    private readonly classify: (e: unknown) => ProviderError,
  ) {
    this.dims = knownDimensions ?? 0;
  }

  /** 0 until the first reply when the model's dimension is not known in advance. */
  get dimensions(): number {
    return this.dims;
  }

  async embed(texts: string[], purpose: 'document' | 'query'): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += this.options.batchSize) batches.push(texts.slice(i, i + this.options.batchSize));
    const results: Float32Array[][] = new Array(batches.length);
    let next = 0;
    let failed: unknown = null;
    const worker = async () => {
      while (next < batches.length && failed === null) {
        const i = next++;
        try {
          results[i] = await this.batchWithRetries(batches[i], purpose);
        } catch (e) {
          failed ??= e;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, batches.length) }, worker));
    if (failed !== null) throw failed;
    return results.flat();
  }

  private async batchWithRetries(texts: string[], purpose: 'document' | 'query'): Promise<Float32Array[]> {
    for (let attempt = 0; ; attempt++) {
      let err: ProviderError;
      try {
        this.stats.requests++;
        return this.check(await this.call(texts, purpose), texts.length);
      } catch (e) {
        err = e instanceof ProviderError ? e : this.classify(e);
      }
      if (!RETRYABLE.has(err.kind) || attempt >= this.options.maxRetries) throw err;
      const backoff = this.options.retryBaseMs * 2 ** attempt * (0.75 + Math.random() * 0.5);
      const wait = err.retryAfterMs ?? backoff;
      if (wait > this.options.maxRetryDelayMs) throw err;
      this.stats.retries++;
      await sleepAbortable(wait);
    }
  }

  /** One finite vector per text, of the model's dimension. */
  private check(vectors: unknown[], count: number): Float32Array[] {
    if (!Array.isArray(vectors) || vectors.length !== count) {
      throw new ProviderError('bad_response', `${this.model}: the reply holds ${Array.isArray(vectors) ? vectors.length : 'no'} embeddings for ${count} texts`);
    }
    const out = vectors.map((v) => {
      if (!(v instanceof Float32Array) && !(Array.isArray(v) && v.every((x) => typeof x === 'number'))) {
        throw new ProviderError('bad_response', `${this.model}: an embedding in the reply is not a list of numbers`);
      }
      const f = v instanceof Float32Array ? v : Float32Array.from(v as number[]);
      if (f.length === 0 || f.some((x) => !Number.isFinite(x))) throw new ProviderError('bad_response', `${this.model}: an embedding in the reply is empty or not finite`);
      return f;
    });
    const dim = this.dims || out[0].length;
    if (out.some((v) => v.length !== dim)) {
      throw new ProviderError('bad_response', `${this.model}: the reply holds an embedding of ${out.find((v) => v.length !== dim)!.length} dimensions where ${dim} were expected`);
    }
    this.dims = dim;
    return out;
  }
}

/** Known output dimensions of common embedding models (others are learnt from the first reply). */
export const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'text-embedding-004': 768,
  'gemini-embedding-001': 3072,
};
