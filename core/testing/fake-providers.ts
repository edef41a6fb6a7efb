/**
 * Plugin test kit: a fake `Providers` (token `Tokens.Providers`), the LLM and embedder a plugin
 * would otherwise get from the operator's settings.
 */
import type { Embedder } from '../contracts.ts';
import { Providers, providersFingerprint, type Llm } from '../providers.ts';
import type { ProviderEndpoint, ResolvedProviders } from '../provider-settings.ts';
import { createTestLogger } from './run-source.ts';

export interface FakeProvidersOptions {
  /** The LLM the settings would give; null (the default) is "no LLM set". */
  llm?: Llm | null;
  /** The embedder the settings would give; null (the default) is "search stays lexical". */
  embedder?: Embedder | null;
}

function endpoint(provider: 'custom', model: string): ProviderEndpoint {
  return { provider, api: 'openai', baseUrl: 'http://fake-provider.invalid/v1', model, apiKey: null, keyFrom: null };
}

/** `Providers` answering with the given LLM and embedder; `set()` changes them as a settings change would. */
export class FakeProviders extends Providers {
  private current: { llm: Llm | null; embedder: Embedder | null };

  constructor(options: FakeProvidersOptions = {}) {
    // The real class reads the settings from a store; this one never does.
    super(undefined as never, undefined as never, { llm: [], embedder: [] }, createTestLogger());
    this.current = { llm: options.llm ?? null, embedder: options.embedder ?? null };
  }

  /** Replaces the LLM and/or the embedder (what a settings change does). */
  set(options: FakeProvidersOptions): void {
    this.current = { llm: options.llm === undefined ? this.current.llm : options.llm, embedder: options.embedder === undefined ? this.current.embedder : options.embedder };
  }

  override invalidate(): void {}

  override async resolved(): Promise<ResolvedProviders> {
    const { llm, embedder } = this.current;
    return {
      llm: llm ? endpoint('custom', llm.model) : null,
      embedding: embedder ? endpoint('custom', embedder.model) : null,
      embeddingNote: embedder ? 'fake embedder' : 'no embedder (fake providers)',
    };
  }

  override async llm(): Promise<Llm | null> {
    return this.current.llm;
  }

  override async embedder(): Promise<Embedder | null> {
    return this.current.embedder;
  }

  override async fingerprint(): Promise<string> {
    return providersFingerprint(await this.resolved());
  }
}
