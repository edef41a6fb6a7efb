import { defineLlm, definePlugin } from '../../core/define.ts';
import { providerClientOptionsSchema, type ProviderClientOptions } from '../../core/provider-sdk.ts';
import { GeminiLlm } from './gemini-llm.ts';

export default definePlugin({
  name: '@refdesk/llm-gemini',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineLlm({
      kind: 'gemini',
      description: 'The LLM of Settings when its provider is gemini (generateContent), through the @google/genai SDK; retries honour Retry-After.',
      options: providerClientOptionsSchema,
      deps: {},
      create(options: ProviderClientOptions) {
        return { api: 'gemini' as const, connect: (endpoint) => new GeminiLlm(endpoint, options) };
      },
    }),
  ],
});
