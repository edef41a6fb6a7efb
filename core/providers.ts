/**
 * Model providers (issue 21): the LLM and the embedder the operator set in Settings, reached
 * through provider plugins. A plugin of role `llm` or `embedder` makes a connector at kernel
 * start (its config options: timeouts, retries); the connector turns the effective endpoint of
 * the settings (core/provider-settings.ts resolveProviders: API, base URL, model, key) into a
 * client. `Providers` picks the connector whose `api` matches the endpoint, keeps the client
 * until the settings change (invalidate()), and never exposes a key.
 *
 * Every provider failure is a ProviderError with a kind the callers act on: ingest turns `auth`
 * into a job error saying the key was refused; queries degrade to lexical search on any kind.
 */
import { createHash } from 'node:crypto';
import type { Embedder, Logger, Store } from './contracts.ts';
import type { ProviderApi, ProviderEndpoint, ResolvedProviders } from './provider-settings.ts';
import type { SecretBox } from './secrets.ts';
import { getResolvedProviders } from './settings.ts';

export interface LlmRequest {
  /** System instructions (vendors that lack a system role get them prepended). */
  system?: string;
  prompt: string;
  /** Upper bound of the answer's tokens. */
  maxTokens?: number;
  /** Ask for a JSON object answer (response_format / responseMimeType where the API has one). */
  json?: boolean;
  temperature?: number;
  signal?: AbortSignal;
}

export interface LlmAnswer {
  text: string;
  model: string;
  inputTokens?: number;
  outputTokens?: number;
}

/** A chat/completion client for one configured endpoint. */
export interface Llm {
  readonly provider: string;
  readonly model: string;
  complete(req: LlmRequest): Promise<LlmAnswer>;
  /** Resolves once the client is loaded (its SDK imported), so a caller's deadline can cover the call alone. */
  ready?(): Promise<void>;
}

export type ProviderErrorKind =
  /** 401/403: the key was refused (or is missing). */
  | 'auth'
  /** 429 after the retries (retryAfterMs from Retry-After when the vendor sent one). */
  | 'rate_limited'
  | 'timeout'
  /** A reply that is not what the API promises (malformed, truncated, wrong shape or size). */
  | 'bad_response'
  /** 5xx, refused connection, DNS: the endpoint is not serving. */
  | 'unavailable'
  /** 400/404/422: the request (model name, input size) was refused. */
  | 'bad_request';

/** A provider call that failed. The message names the vendor and status, never a key. */
export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** What a provider plugin's definition creates: one per wire API (`openai`, `anthropic`, `gemini`). */
export interface ProviderConnector<T> {
  readonly api: ProviderApi;
  /** A client for this endpoint (cheap; no network until it is used). */
  connect(endpoint: ProviderEndpoint): T;
}
export type LlmConnector = ProviderConnector<Llm>;
export type EmbedderConnector = ProviderConnector<Embedder>;

/** The endpoints without keys: what shaped an answer (ETags, caches, vector compatibility). */
export function providersFingerprint(r: ResolvedProviders): string {
  const part = (e: ProviderEndpoint | null) => (e ? `${e.api}|${e.baseUrl}|${e.model}` : '-');
  return createHash('sha256').update(`${part(r.llm)}\n${part(r.embedding)}`).digest('hex').slice(0, 16);
}

export class Providers {
  private cached: Promise<{ resolved: ResolvedProviders; llm: Llm | null; embedder: Embedder | null }> | null = null;

  constructor(
    private readonly store: Store,
    private readonly box: SecretBox,
    private readonly connectors: { llm: LlmConnector[]; embedder: EmbedderConnector[] },
    private readonly logger: Logger,
  ) {}

  /** Forget the clients: the next call reads the settings again (call after a settings change). */
  invalidate(): void {
    this.cached = null;
  }

  private state() {
    if (!this.cached) {
      this.cached = (async () => {
        const resolved = await getResolvedProviders(this.store, this.box);
        const pick = <T>(list: ProviderConnector<T>[], e: ProviderEndpoint | null, role: string): T | null => {
          if (!e) return null;
          const c = list.find((x) => x.api === e.api);
          if (!c) {
            this.logger.warn(`no ${role} plugin speaks the ${e.api} API: ${role} is off`, { provider: e.provider });
            return null;
          }
          return c.connect(e);
        };
        return { resolved, llm: pick(this.connectors.llm, resolved.llm, 'llm'), embedder: pick(this.connectors.embedder, resolved.embedding, 'embedder') };
      })();
      this.cached.catch(() => {
        this.cached = null;
      });
    }
    return this.cached;
  }

  /** The effective endpoints (with keys: never log or return them). */
  async resolved(): Promise<ResolvedProviders> {
    return (await this.state()).resolved;
  }

  /** The configured LLM, or null when none is set (or no plugin speaks its API). */
  async llm(): Promise<Llm | null> {
    return (await this.state()).llm;
  }

  /** The configured embedder, or null: search stays lexical. */
  async embedder(): Promise<Embedder | null> {
    return (await this.state()).embedder;
  }

  /** Changes whenever a setting that shapes answers changes (no keys in it). */
  async fingerprint(): Promise<string> {
    return providersFingerprint((await this.state()).resolved);
  }
}
