import { Type, type Static } from '@sinclair/typebox';

/** Defaults of the `llmstxt` source's operator options (config); the schema below describes each. */
export const DEFAULT_LLMS_OPTIONS = Object.freeze({
  includeOptional: true,
  maxPages: 1000,
  maxBytes: 200 * 1024 * 1024,
  maxPageBytes: 10 * 1024 * 1024,
  concurrency: 4,
  retryAttempts: 4,
  retryBaseDelayMs: 500,
});

export const llmsTxtOptionsSchema = Type.Object(
  {
    includeOptional: Type.Boolean({ default: DEFAULT_LLMS_OPTIONS.includeOptional, description: 'Index the links of the Optional section too.' }),
    maxPages: Type.Integer({ minimum: 1, default: DEFAULT_LLMS_OPTIONS.maxPages, description: 'Most linked pages read for one library.' }),
    maxBytes: Type.Integer({ minimum: 1, default: DEFAULT_LLMS_OPTIONS.maxBytes, description: 'Most bytes of pages read for one library.' }),
    maxPageBytes: Type.Integer({ minimum: 1, default: DEFAULT_LLMS_OPTIONS.maxPageBytes, description: 'Largest page read; bigger pages are skipped with a log line.' }),
    concurrency: Type.Integer({ minimum: 1, maximum: 16, default: DEFAULT_LLMS_OPTIONS.concurrency, description: 'Pages fetched at the same time.' }),
    retryAttempts: Type.Integer({ minimum: 1, maximum: 10, default: DEFAULT_LLMS_OPTIONS.retryAttempts, description: 'Requests per URL on transient failures, the first included.' }),
    retryBaseDelayMs: Type.Integer({ minimum: 0, maximum: 60000, default: DEFAULT_LLMS_OPTIONS.retryBaseDelayMs, description: 'Delay before the first retry (doubled on each further retry).' }),
  },
  { additionalProperties: false },
);
/** Operator options of the `llmstxt` source (config), after ajv applied the defaults. */
export type LlmsTxtOptions = Static<typeof llmsTxtOptionsSchema>;

/** A library's source parameters. */
export const llmsTxtSpecSchema = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2000,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
      description: 'URL of an llms.txt, llms-full.txt or llms-ctx(-full).txt file.',
    }),
  },
  { additionalProperties: false },
);
