/**
 * The benchmark's embedder (issue 21): `--embedder-base-url URL --embedder-model NAME
 * [--embedder-key-env VAR]` measures hybrid search against any OpenAI-compatible embeddings
 * endpoint (the key is read from the environment variable named, never given on the command
 * line); `--loopback-embedder` starts an in-process loopback server answering with the
 * deterministic hash embedding of test/helpers/hash-embedding.ts: NOT a model, it only checks
 * the plumbing (CI runs it).
 */
import type { Kernel } from '../../core/kernel.ts';
import { patchSettings } from '../../core/settings.ts';
import { startOpenAiEmbeddings } from '../../test/helpers/embedding-servers.ts';

export const EMBEDDER_OPTIONS = {
  'embedder-base-url': { type: 'string' },
  'embedder-model': { type: 'string' },
  'embedder-key-env': { type: 'string' },
  'loopback-embedder': { type: 'boolean', default: false },
} as const;

export interface BenchEmbedder {
  /** What the summary records: `model @ host` (no key). */
  label: string;
  settings: { provider: 'openai'; baseUrl: string; model: string; apiKey?: string };
  close(): Promise<void>;
}

export async function benchEmbedder(values: { 'embedder-base-url'?: string; 'embedder-model'?: string; 'embedder-key-env'?: string; 'loopback-embedder'?: boolean }): Promise<BenchEmbedder | null> {
  if (values['loopback-embedder']) {
    if (values['embedder-base-url']) throw new Error('Give either --loopback-embedder or --embedder-base-url, not both.');
    const server = await startOpenAiEmbeddings();
    return { label: 'loopback-hash (a hashing embedder, not a model)', settings: { provider: 'openai', baseUrl: `${server.base}/v1`, model: 'loopback-hash' }, close: () => server.close() };
  }
  const baseUrl = values['embedder-base-url'];
  if (!baseUrl) {
    if (values['embedder-model'] || values['embedder-key-env']) throw new Error('--embedder-model and --embedder-key-env need --embedder-base-url.');
    return null;
  }
  const model = values['embedder-model'];
  if (!model) throw new Error('--embedder-base-url needs --embedder-model.');
  const keyEnv = values['embedder-key-env'];
  let apiKey: string | undefined;
  if (keyEnv) {
    apiKey = process.env[keyEnv];
    if (!apiKey) throw new Error(`--embedder-key-env names ${keyEnv}, which is not set in the environment.`);
  }
  return { label: `${model} @ ${new URL(baseUrl).host}`, settings: { provider: 'openai', baseUrl, model, ...(apiKey ? { apiKey } : {}) }, close: async () => {} };
}

/** Sets the embedder in the data directory's settings: the ingest embeds, the server searches hybrid. */
export async function useBenchEmbedder(kernel: Kernel, embedder: BenchEmbedder): Promise<void> {
  await patchSettings(kernel.store, kernel.secrets, { embedding: embedder.settings });
  kernel.providers.invalidate();
}
