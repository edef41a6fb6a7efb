import { defineLlm, definePlugin } from '../../core/define.ts';
import { lazyLlm, providerClientOptionsSchema } from '../../core/provider-sdk.ts';

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
      create(options) {
        return { api: 'gemini' as const, connect: (endpoint) => lazyLlm(endpoint, async () => new (await import('./gemini-llm.ts')).GeminiLlm(endpoint, options)) };
      },
    }),
  ],
});
