import { defineLlm, definePlugin } from '../../core/define.ts';
import { lazyLlm, providerClientOptionsSchema } from '../../core/provider-sdk.ts';

export default definePlugin({
  name: '@refdesk/llm-anthropic',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineLlm({
      kind: 'anthropic',
      description: 'The LLM of Settings when its provider is anthropic (the Messages API), through the @anthropic-ai/sdk SDK.',
      options: providerClientOptionsSchema,
      deps: {},
      create(options) {
        return { api: 'anthropic' as const, connect: (endpoint) => lazyLlm(endpoint, async () => new (await import('./anthropic-llm.ts')).AnthropicLlm(endpoint, options)) };
      },
    }),
  ],
});
