/**
 * Embeddings through the Gemini API with the `@google/genai` SDK (`models.embedContent`, which
 * posts `<baseUrl>/models/<model>:batchEmbedContents`), at the vendor's address or the base URL
 * the operator set. Batched (at most 100 texts per request, the API's limit), a bounded number of
 * requests in flight, retried with backoff honouring Retry-After (core/embed-batches.ts).
 */
import type * as GenAiModule from '@google/genai';
import { lazyModule } from '../../core/lazy-module.ts';

/** The SDK, loaded at the first embedding call (not at server start). */
const sdk = lazyModule<typeof GenAiModule>('@google/genai');
import { Type } from '@sinclair/typebox';
import { definePlugin, defineEmbedder } from '../../core/define.ts';
import { BatchedEmbedder, EMBED_BATCH_DEFAULTS, EMBED_BATCH_SCHEMA, KNOWN_DIMENSIONS, endpointHost, kindOfStatus, type EmbedBatchOptions } from '../../core/embed-batches.ts';
import { retryAfterMs } from '../../core/provider-sdk.ts';
import type { ProviderEndpoint } from '../../core/provider-settings.ts';
import { ProviderError, type EmbedderConnector } from '../../core/providers.ts';

export interface GeminiEmbedderOptions extends EmbedBatchOptions {
  timeoutMs: number;
}

/** `https://host/v1beta` -> base `https://host`, version `v1beta` (the SDK joins them again). */
export function splitGeminiBase(baseUrl: string): { baseUrl: string; apiVersion: string } {
  const m = /^(.*?)\/(v\d+(?:alpha|beta)?\d*)\/?$/.exec(baseUrl);
  return m ? { baseUrl: m[1], apiVersion: m[2] } : { baseUrl, apiVersion: 'v1beta' };
}

/** Gemini's RetryInfo (`"retryDelay": "30s"` in the error body), in ms. */
function retryDelayOf(message: string): number | undefined {
  const m = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(message);
  return m ? Number(m[1]) * 1000 : undefined;
}

/** A ProviderError for what the SDK threw; never the key. */
export function geminiError(e: unknown, endpoint: ProviderEndpoint): ProviderError {
  const where = `Gemini embeddings at ${endpointHost(endpoint.baseUrl)}`;
  if (e instanceof ProviderError) return e;
  if (e instanceof sdk().ApiError && typeof e.status === 'number') {
    // Gemini answers an invalid key with 400 INVALID_ARGUMENT (reason API_KEY_INVALID), not 401.
    const kind = e.status === 400 && /API[_ ]KEY[_ ]INVALID|API key not valid/i.test(e.message) ? 'auth' : kindOfStatus(e.status);
    return new ProviderError(kind, `${where} answered HTTP ${e.status}${kind === 'auth' ? ' (the API key was refused)' : ''}`, e.status);
  }
  const name = (e as Error)?.name ?? '';
  const message = String((e as Error)?.message ?? '');
  if (name === 'AbortError' || name === 'TimeoutError' || /timed? ?out|aborted/i.test(message)) return new ProviderError('timeout', `${where}: no answer in time`);
  if (name === 'TypeError' && /fetch failed|ECONNREFUSED|network/i.test(message + String((e as { cause?: unknown }).cause ?? ''))) {
    return new ProviderError('unavailable', `${where}: cannot connect`);
  }
  return new ProviderError('bad_response', `${where}: the reply is not an embeddings answer`);
}

export function geminiEmbedder(endpoint: ProviderEndpoint, options: GeminiEmbedderOptions): BatchedEmbedder {
  const { baseUrl, apiVersion } = splitGeminiBase(endpoint.baseUrl);
  const client = new (sdk().GoogleGenAI)({ apiKey: endpoint.apiKey ?? 'unused', apiVersion, httpOptions: { baseUrl, timeout: options.timeoutMs } });
  return new BatchedEmbedder(
    endpoint.model,
    KNOWN_DIMENSIONS[endpoint.model],
    { ...options, batchSize: Math.min(options.batchSize, 100) },
    async (texts, purpose) => {
      // The SDK's errors carry no headers: this request's fetch keeps a 429's Retry-After.
      let retryAfter: number | undefined;
      const keepRetryAfter = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
        const res = await fetch(input, init);
        if (res.status === 429) retryAfter = retryAfterMs(res.headers);
        return res;
      };
      let reply;
      try {
        reply = await client.models.embedContent({
          model: endpoint.model,
          contents: texts,
          config: { taskType: purpose === 'query' ? 'RETRIEVAL_QUERY' : 'RETRIEVAL_DOCUMENT', httpOptions: { baseUrl, timeout: options.timeoutMs, fetch: keepRetryAfter } },
        });
      } catch (e) {
        const err = geminiError(e, endpoint);
        if (err.kind !== 'rate_limited') throw err;
        throw new ProviderError('rate_limited', err.message, err.status, retryAfter ?? retryDelayOf((e as Error).message));
      }
      if (!Array.isArray(reply?.embeddings)) throw new ProviderError('bad_response', `Gemini embeddings at ${endpointHost(endpoint.baseUrl)}: the reply has no embeddings list`);
      return reply.embeddings.map((e) => e?.values as unknown);
    },
    (e) => geminiError(e, endpoint),
  );
}

export default definePlugin({
  name: '@refdesk/embedder-gemini',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineEmbedder({
      kind: 'gemini',
      description: 'Embeddings through the Gemini API (models/<model>:batchEmbedContents), as set in Settings.',
      options: Type.Object({ ...EMBED_BATCH_SCHEMA, batchSize: Type.Integer({ ...EMBED_BATCH_SCHEMA.batchSize, maximum: 100, default: 100 }) }, { additionalProperties: false }),
      deps: {},
      create(options): EmbedderConnector {
        const opts = { ...EMBED_BATCH_DEFAULTS, ...options };
        return { api: 'gemini', connect: (endpoint) => geminiEmbedder(endpoint, opts) };
      },
    }),
  ],
});
