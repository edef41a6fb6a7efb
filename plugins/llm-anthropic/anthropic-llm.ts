/**
 * An LLM reached through Anthropic's Messages API with the `@anthropic-ai/sdk` SDK (retries on
 * 429 honouring Retry-After, 5xx and connection errors; its base URL for proxies). The API has
 * no JSON mode: a JSON request adds the instruction to the system prompt.
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { ProviderEndpoint } from '../../core/provider-settings.ts';
import type { Llm, LlmAnswer, LlmRequest } from '../../core/providers.ts';
import { keyRedactor, providerFailure, stainlessClientOptions, stainlessFacts, vendorLabel, type ProviderClientOptions } from '../../core/provider-sdk.ts';

const SDK_ERRORS = { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError };
/** The Messages API requires max_tokens. */
const DEFAULT_MAX_TOKENS = 1024;
export const JSON_INSTRUCTION = 'Answer with one JSON object and nothing else: no prose, no code fence.';

export class AnthropicLlm implements Llm {
  readonly provider = 'anthropic';
  readonly model: string;
  private readonly client: Anthropic;
  private readonly label: string;
  private readonly redact;

  constructor(endpoint: ProviderEndpoint, private readonly options: ProviderClientOptions) {
    this.model = endpoint.model;
    this.label = vendorLabel('Anthropic', endpoint.baseUrl);
    this.redact = keyRedactor(endpoint.apiKey);
    this.client = new Anthropic(stainlessClientOptions(endpoint, options));
  }

  async complete(req: LlmRequest): Promise<LlmAnswer> {
    const system = [req.system, req.json ? JSON_INSTRUCTION : ''].filter(Boolean).join('\n\n');
    let reply: Anthropic.Messages.Message;
    try {
      reply = await this.client.messages.create(
        {
          model: this.model,
          max_tokens: req.maxTokens ?? DEFAULT_MAX_TOKENS,
          ...(system ? { system } : {}),
          ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
          messages: [{ role: 'user', content: req.prompt }],
        },
        { signal: req.signal },
      );
    } catch (e) {
      throw providerFailure(this.label, stainlessFacts(e, SDK_ERRORS, this.options.maxRetries + 1), this.redact);
    }
    if ((reply?.stop_reason as string) === 'refusal') throw providerFailure(this.label, { malformed: true, detail: 'the model refused to answer' }, this.redact);
    if (!Array.isArray(reply?.content)) throw providerFailure(this.label, { malformed: true, detail: 'no content blocks in the reply' }, this.redact);
    const texts = reply.content.filter((b): b is Anthropic.Messages.TextBlock => b?.type === 'text' && typeof (b as { text?: unknown }).text === 'string');
    if (texts.length === 0) throw providerFailure(this.label, { malformed: true, detail: 'no text block in the reply' }, this.redact);
    return {
      text: texts.map((b) => b.text).join(''),
      model: typeof reply.model === 'string' ? reply.model : this.model,
      ...(typeof reply.usage?.input_tokens === 'number' ? { inputTokens: reply.usage.input_tokens } : {}),
      ...(typeof reply.usage?.output_tokens === 'number' ? { outputTokens: reply.usage.output_tokens } : {}),
    };
  }
}
