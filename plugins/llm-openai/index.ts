import { defineLlm, definePlugin } from '../../core/define.ts';
import { lazyLlm, providerClientOptionsSchema } from '../../core/provider-sdk.ts';

export default definePlugin({
  name: '@refdesk/llm-openai',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineLlm({
      kind: 'openai',
      description: 'The LLM of Settings when its provider is openai, or custom (any OpenAI-compatible server at its base URL), through the openai SDK.',
      options: providerClientOptionsSchema,
      deps: {},
      create(options) {
        return { api: 'openai' as const, connect: (endpoint) => lazyLlm(endpoint, async () => new (await import('./openai-llm.ts')).OpenAiLlm(endpoint, options)) };
      },
    }),
  ],
});
