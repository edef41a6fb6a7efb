/**
 * An LLM reached through the OpenAI Chat Completions API with the `openai` SDK: OpenAI itself,
 * or any OpenAI-compatible server (provider `custom`: a local model server, a proxy) at its base
 * URL. The SDK retries 429 (honouring Retry-After), 5xx, connection errors and timeouts.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ProviderEndpoint } from '../../core/provider-settings.ts';
import type { Llm, LlmAnswer, LlmRequest } from '../../core/providers.ts';
import { keyRedactor, providerFailure, stainlessClientOptions, stainlessFacts, vendorLabel, type ProviderClientOptions } from '../../core/provider-sdk.ts';

const SDK_ERRORS = { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError };

export class OpenAiLlm implements Llm {
  readonly provider: string;
  readonly model: string;
  private readonly client: OpenAI;
  private readonly label: string;
  private readonly redact;

  constructor(endpoint: ProviderEndpoint, private readonly options: ProviderClientOptions) {
    this.provider = endpoint.provider;
    this.model = endpoint.model;
    this.label = vendorLabel(endpoint.provider === 'custom' ? 'The OpenAI-compatible server' : 'OpenAI', endpoint.baseUrl);
    this.redact = keyRedactor(endpoint.apiKey);
    this.client = new OpenAI(stainlessClientOptions(endpoint, options));
  }

  async complete(req: LlmRequest): Promise<LlmAnswer> {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [];
    if (req.system) messages.push({ role: 'system', content: req.system });
    messages.push({ role: 'user', content: req.prompt });
    let reply: OpenAI.Chat.Completions.ChatCompletion;
    try {
      reply = await this.client.chat.completions.create(
        {
          model: this.model,
          messages,
          ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
          ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
          ...(req.json ? { response_format: { type: 'json_object' as const } } : {}),
        },
        { signal: req.signal },
      );
    } catch (e) {
      throw providerFailure(this.label, stainlessFacts(e, SDK_ERRORS, this.options.maxRetries + 1), this.redact);
    }
    const choice = Array.isArray(reply?.choices) ? reply.choices[0] : undefined;
    const message = choice?.message;
    if (message && typeof message.refusal === 'string' && message.refusal) {
      throw providerFailure(this.label, { malformed: true, detail: `the model refused: ${message.refusal}` }, this.redact);
    }
    if (!message || typeof message.content !== 'string') {
      throw providerFailure(this.label, { malformed: true, detail: 'no choices[0].message.content in the reply' }, this.redact);
    }
    return {
      text: message.content,
      model: typeof reply.model === 'string' ? reply.model : this.model,
      ...(typeof reply.usage?.prompt_tokens === 'number' ? { inputTokens: reply.usage.prompt_tokens } : {}),
      ...(typeof reply.usage?.completion_tokens === 'number' ? { outputTokens: reply.usage.completion_tokens } : {}),
    };
  }
}
