import { Type } from '@sinclair/typebox';
import { definePlugin, defineReranker } from '../../core/define.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { LlmReranker } from './llm-reranker.ts';

export default definePlugin({
  name: '@refdesk/reranker-llm',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineReranker({
      kind: 'llm',
      description: 'Reranks a question\'s best snippets, and library search\'s best candidates, with one call to the LLM set in Settings; changes nothing while none is set.',
      options: Type.Object(
        {
          candidates: Type.Integer({ minimum: 2, maximum: 30, default: 20 }),
          libraryCandidates: Type.Integer({ minimum: 2, maximum: 30, default: 10 }),
          promptTokens: Type.Integer({ minimum: 200, maximum: 20000, default: 2500 }),
          excerptChars: Type.Integer({ minimum: 0, maximum: 4000, default: 400 }),
          answerTokens: Type.Integer({ minimum: 50, maximum: 4000, default: 300 }),
          timeoutMs: Type.Integer({ minimum: 100, maximum: 120000, default: 10000 }),
          cooldownMs: Type.Integer({ minimum: 0, maximum: 3600000, default: 30000 }),
          cacheEntries: Type.Integer({ minimum: 0, maximum: 100000, default: 1000 }),
        },
        { additionalProperties: false },
      ),
      deps: { providers: Tokens.Providers, logger: Tokens.Logger, clock: Tokens.Clock },
      create(options, deps) {
        return new LlmReranker(options, deps.providers, deps.logger, () => deps.clock.now().getTime());
      },
    }),
  ],
});
