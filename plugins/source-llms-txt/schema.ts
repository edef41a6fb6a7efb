import type { JsonSchema } from '../../core/define.ts';

/** Operator options of the `llmstxt` source (config), after ajv applied the defaults. */
export interface LlmsTxtOptions {
  /** Index the links of the "Optional" section too (marked optional in their meta and the log). */
  includeOptional: boolean;
  /** Most linked pages read for one library; further links are logged and not read. */
  maxPages: number;
  /** Most bytes of pages read for one library, in total. */
  maxBytes: number;
  /** Largest single page, in bytes (never more than the network policy's maxResponseBytes). */
  maxPageBytes: number;
  /** Pages fetched at the same time. */
  concurrency: number;
  /** Requests per URL on transient failures (5xx, 429, network errors), the first included. */
  retryAttempts: number;
  /** Delay before the first retry, in milliseconds; doubled on each further retry. */
  retryBaseDelayMs: number;
}

export const DEFAULT_LLMS_OPTIONS: Readonly<LlmsTxtOptions> = Object.freeze({
  includeOptional: true,
  maxPages: 1000,
  maxBytes: 200 * 1024 * 1024,
  maxPageBytes: 10 * 1024 * 1024,
  concurrency: 4,
  retryAttempts: 4,
  retryBaseDelayMs: 500,
});

export const llmsTxtOptionsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    includeOptional: { type: 'boolean', default: DEFAULT_LLMS_OPTIONS.includeOptional, description: 'Index the links of the Optional section too.' },
    maxPages: { type: 'integer', minimum: 1, default: DEFAULT_LLMS_OPTIONS.maxPages, description: 'Most linked pages read for one library.' },
    maxBytes: { type: 'integer', minimum: 1, default: DEFAULT_LLMS_OPTIONS.maxBytes, description: 'Most bytes of pages read for one library.' },
    maxPageBytes: { type: 'integer', minimum: 1, default: DEFAULT_LLMS_OPTIONS.maxPageBytes, description: 'Largest page read; bigger pages are skipped with a log line.' },
    concurrency: { type: 'integer', minimum: 1, maximum: 16, default: DEFAULT_LLMS_OPTIONS.concurrency, description: 'Pages fetched at the same time.' },
    retryAttempts: { type: 'integer', minimum: 1, maximum: 10, default: DEFAULT_LLMS_OPTIONS.retryAttempts, description: 'Requests per URL on transient failures, the first included.' },
    retryBaseDelayMs: { type: 'integer', minimum: 0, maximum: 60000, default: DEFAULT_LLMS_OPTIONS.retryBaseDelayMs, description: 'Delay before the first retry (doubled on each further retry).' },
  },
};

/** A library's source parameters. */
export const llmsTxtSpecSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: {
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
      description: 'URL of an llms.txt, llms-full.txt or llms-ctx(-full).txt file.',
    },
  },
};
