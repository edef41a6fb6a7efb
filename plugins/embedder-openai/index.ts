/**
 * Embeddings through the OpenAI embeddings API (`POST <baseUrl>/embeddings`) with the `openai`
 * SDK: OpenAI itself, or any OpenAI-compatible embedding server at the base URL the operator set
 * (a local model server, a proxy). Batched, a bounded number of requests in flight, retried with
 * backoff honouring Retry-After (core/embed-batches.ts; the SDK's own retries are off).
 */
import type OpenAIModule from 'openai';
import { lazyModule } from '../../core/lazy-module.ts';
import { Type } from '@sinclair/typebox';
import { definePlugin, defineEmbedder } from '../../core/define.ts';
import { BatchedEmbedder, EMBED_BATCH_DEFAULTS, EMBED_BATCH_SCHEMA, KNOWN_DIMENSIONS, endpointHost, kindOfStatus, type EmbedBatchOptions } from '../../core/embed-batches.ts';
import { retryAfterMs } from '../../core/provider-sdk.ts';
import type { ProviderEndpoint } from '../../core/provider-settings.ts';
import { ProviderError, type EmbedderConnector } from '../../core/providers.ts';

export interface OpenAiEmbedderOptions extends EmbedBatchOptions {
  timeoutMs: number;
}

/** A ProviderError for what the SDK threw; the message names the host and status, never the key. */
/** The SDK, loaded at the first embedding call (not at server start). */
const sdk = lazyModule<typeof OpenAIModule>('openai');

export function openAiError(e: unknown, endpoint: ProviderEndpoint): ProviderError {
  const { OpenAI } = sdk();
  const where = `embeddings at ${endpointHost(endpoint.baseUrl)}`;
  if (e instanceof ProviderError) return e;
  if (e instanceof OpenAI.APIConnectionTimeoutError) return new ProviderError('timeout', `${where}: no answer in time`);
  if (e instanceof OpenAI.APIUserAbortError) return new ProviderError('timeout', `${where}: the request was aborted`);
  if (e instanceof OpenAI.APIConnectionError) return new ProviderError('unavailable', `${where}: cannot connect`);
  if (e instanceof OpenAI.APIError && typeof e.status === 'number') {
    const kind = kindOfStatus(e.status);
    const detail = kind === 'bad_request' ? vendorMessage(e.error, endpoint.apiKey) : '';
    return new ProviderError(kind, `${where} answered HTTP ${e.status}${detail ? `: ${detail}` : ''}`, e.status, kind === 'rate_limited' ? retryAfterMs(e.headers) : undefined);
  }
  // A reply the SDK could not read (truncated or malformed JSON, a body of another shape).
  return new ProviderError('bad_response', `${where}: the reply is not an embeddings answer`);
}

function vendorMessage(body: unknown, key: string | null): string {
  const m = (body as { message?: unknown } | undefined)?.message;
  if (typeof m !== 'string') return '';
  const text = m.slice(0, 200);
  return key ? text.split(key).join('[redacted]') : text;
}

export function openAiEmbedder(endpoint: ProviderEndpoint, options: OpenAiEmbedderOptions): BatchedEmbedder {
  const { OpenAI } = sdk();
  const client = new OpenAI({
    // A local server may need no key: then no Authorization header is sent.
    apiKey: endpoint.apiKey ?? 'unused',
    baseURL: endpoint.baseUrl,
    organization: null,
    project: null,
    maxRetries: 0,
    timeout: options.timeoutMs,
    ...(endpoint.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
  });
  return new BatchedEmbedder(
    endpoint.model,
    KNOWN_DIMENSIONS[endpoint.model],
    options,
    async (texts) => {
      const reply = await client.embeddings.create({ model: endpoint.model, input: texts });
      const data = Array.isArray(reply?.data) ? [...reply.data] : null;
      if (!data) throw new ProviderError('bad_response', `embeddings at ${endpointHost(endpoint.baseUrl)}: the reply has no data list`);
      // Each item carries its input's index: order by it (servers may answer out of order).
      data.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      return data.map((d) => d.embedding as unknown);
    },
    (e) => openAiError(e, endpoint),
  );
}

export default definePlugin({
  name: '@refdesk/embedder-openai',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineEmbedder({
      kind: 'openai',
      description: 'Embeddings through the OpenAI API or any OpenAI-compatible embeddings server (POST <baseUrl>/embeddings), as set in Settings.',
      options: Type.Object({ ...EMBED_BATCH_SCHEMA, batchSize: Type.Integer({ ...EMBED_BATCH_SCHEMA.batchSize, default: 96 }) }, { additionalProperties: false }),
      deps: {},
      create(options): EmbedderConnector {
        const opts = { ...EMBED_BATCH_DEFAULTS, ...options };
        return { api: 'openai', connect: (endpoint) => openAiEmbedder(endpoint, opts) };
      },
    }),
  ],
});
