/**
 * An LLM reached through the Gemini API's generateContent with the `@google/genai` SDK. The
 * SDK's own retries ignore Retry-After and its errors drop the reply's headers, so retries run
 * here (core/provider-sdk.ts withRetries) with the headers read by a fetch that notes them.
 */
import { ApiError, GoogleGenAI, type GenerateContentResponse } from '@google/genai';
import type { ProviderEndpoint } from '../../core/provider-settings.ts';
import type { Llm, LlmAnswer, LlmRequest } from '../../core/providers.ts';
import { genericFacts, keyRedactor, providerFailure, vendorLabel, withRetries, type FailureFacts, type ProviderClientOptions } from '../../core/provider-sdk.ts';

/** The vendor's error text out of an ApiError (whose message is the JSON body). */
function apiErrorFacts(e: ApiError, headers: Headers | null): FailureFacts {
  let detail: string | undefined;
  let keyRefused = false;
  try {
    const body = JSON.parse(e.message) as { error?: { message?: unknown; details?: Array<{ reason?: unknown }> } };
    if (typeof body?.error?.message === 'string') detail = body.error.message;
    keyRefused = Array.isArray(body?.error?.details) && body.error.details.some((d) => d?.reason === 'API_KEY_INVALID');
  } catch {
    // Not JSON: no detail.
  }
  return { status: e.status, headers, detail, keyRefused };
}

export class GeminiLlm implements Llm {
  readonly provider = 'gemini';
  readonly model: string;
  private readonly label: string;
  private readonly redact;

  constructor(private readonly endpoint: ProviderEndpoint, private readonly options: ProviderClientOptions, private readonly retryBaseDelayMs = 500) {
    this.model = endpoint.model;
    this.label = vendorLabel('Gemini', endpoint.baseUrl);
    this.redact = keyRedactor(endpoint.apiKey);
  }

  complete(req: LlmRequest): Promise<LlmAnswer> {
    return withRetries(() => this.once(req), this.options.maxRetries, req.signal, this.retryBaseDelayMs);
  }

  private async once(req: LlmRequest): Promise<LlmAnswer> {
    let headers: Headers | null = null;
    // A client per call: cheap, and its fetch notes this call's reply headers (Retry-After).
    const client = new GoogleGenAI({
      apiKey: this.endpoint.apiKey ?? 'none',
      httpOptions: {
        // The settings' base URL includes the API version (…/v1beta).
        baseUrl: this.endpoint.baseUrl,
        apiVersion: '',
        timeout: this.options.timeoutMs,
        fetch: async (input, init) => {
          const res = await fetch(input, init);
          headers = res.headers;
          return res;
        },
      },
    });
    let reply: GenerateContentResponse;
    try {
      reply = await client.models.generateContent({
        model: this.model,
        contents: [{ role: 'user', parts: [{ text: req.prompt }] }],
        config: {
          ...(req.system ? { systemInstruction: req.system } : {}),
          ...(req.maxTokens !== undefined ? { maxOutputTokens: req.maxTokens } : {}),
          ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
          ...(req.json ? { responseMimeType: 'application/json' } : {}),
          ...(req.signal ? { abortSignal: req.signal } : {}),
        },
      });
    } catch (e) {
      const facts: FailureFacts = e instanceof ApiError ? apiErrorFacts(e, headers) : genericFacts(e);
      throw providerFailure(this.label, facts, this.redact);
    }
    const blocked = reply?.promptFeedback?.blockReason;
    if (blocked) throw providerFailure(this.label, { malformed: true, detail: `the prompt was blocked (${blocked})` }, this.redact);
    const candidate = Array.isArray(reply?.candidates) ? reply.candidates[0] : undefined;
    const parts = candidate?.content?.parts;
    const text = Array.isArray(parts) ? parts.filter((p) => typeof p?.text === 'string' && !p.thought).map((p) => p.text).join('') : '';
    if (!candidate || !text) {
      const why = candidate?.finishReason ? `no text (finish reason ${candidate.finishReason})` : 'no candidates[0].content.parts text in the reply';
      throw providerFailure(this.label, { malformed: true, detail: why }, this.redact);
    }
    const usage = reply.usageMetadata;
    return {
      text,
      model: typeof reply.modelVersion === 'string' ? reply.modelVersion : this.model,
      ...(typeof usage?.promptTokenCount === 'number' ? { inputTokens: usage.promptTokenCount } : {}),
      ...(typeof usage?.candidatesTokenCount === 'number' ? { outputTokens: usage.candidatesTokenCount } : {}),
    };
  }
}
