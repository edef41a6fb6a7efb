import { definePlugin, defineSource } from '../../core/define.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { llmsTxtAddRoutes, matchLlmsTxtUrl } from './add-route.ts';
import { deriveLlmsTxtId } from './derive-id.ts';
import { LlmsTxtSource } from './llms-txt-source.ts';
import { llmsTxtOptionsSchema, llmsTxtSpecSchema } from './schema.ts';

export default definePlugin({
  name: '@refdesk/source-llms-txt',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineSource({
      kind: 'llmstxt',
      title: 'llms.txt',
      idPrefix: 'llmstxt',
      description: 'An llms.txt file and the pages it links (or an llms-full / llms-ctx file split into its pages) becomes a /llmstxt/<source> library.',
      options: llmsTxtOptionsSchema,
      specSchema: llmsTxtSpecSchema,
      deps: { fetch: Tokens.Fetch, logger: Tokens.Logger, policy: Tokens.NetworkPolicy },
      deriveId: deriveLlmsTxtId,
      addRoutes: llmsTxtAddRoutes,
      matchUrl: matchLlmsTxtUrl,
      policyCategory: 'llmstxt',
      create(options, deps) {
        return new LlmsTxtSource(options, deps);
      },
    }),
  ],
});
