import { Type, type Static } from '@sinclair/typebox';
import { OptionalStrings } from '../../core/schema-types.ts';
import { RefdeskError } from '../../core/errors.ts';

/** Defaults of the `website` source's operator options (config); the schema below describes each. */
export const DEFAULT_WEBSITE_OPTIONS = Object.freeze({
  userAgent: 'Refdesk/1.0 (documentation indexer)',
  maxPages: 1000,
  maxDepth: 12,
  concurrency: 4,
  delayMs: 200,
  timeoutMs: 20_000,
  retries: 2,
  retryDelayMs: 1000,
  maxCrawlDelayMs: 30_000,
  maxSitemaps: 20,
});

const int = (min: number, def: number, description: string) => Type.Integer({ minimum: min, default: def, description });

export const websiteOptionsSchema = Type.Object(
  {
    userAgent: Type.String({ minLength: 1, maxLength: 200, default: DEFAULT_WEBSITE_OPTIONS.userAgent, description: 'User-Agent of the crawler; its first word is the robots.txt agent name.' }),
    maxPages: int(1, DEFAULT_WEBSITE_OPTIONS.maxPages, 'Default and most pages read for one library.'),
    maxDepth: int(0, DEFAULT_WEBSITE_OPTIONS.maxDepth, 'Default and deepest link depth from the start page.'),
    concurrency: int(1, DEFAULT_WEBSITE_OPTIONS.concurrency, 'Most requests in flight for one crawl.'),
    delayMs: int(0, DEFAULT_WEBSITE_OPTIONS.delayMs, 'Least time between two requests to one host (robots.txt Crawl-delay may raise it).'),
    timeoutMs: int(100, DEFAULT_WEBSITE_OPTIONS.timeoutMs, 'Time limit of one page request, in ms.'),
    retries: int(0, DEFAULT_WEBSITE_OPTIONS.retries, 'Extra attempts after a network error, time-out, 429 or 5xx.'),
    retryDelayMs: int(0, DEFAULT_WEBSITE_OPTIONS.retryDelayMs, 'Wait before the first retry (doubled each time), in ms.'),
    maxCrawlDelayMs: int(0, DEFAULT_WEBSITE_OPTIONS.maxCrawlDelayMs, 'Longest robots.txt Crawl-delay honoured, in ms.'),
    maxSitemaps: int(0, DEFAULT_WEBSITE_OPTIONS.maxSitemaps, 'Most sitemap files read per crawl (0 turns sitemaps off).'),
  },
  { additionalProperties: false },
);
/** Operator options of the `website` source (config), after ajv applied the defaults. */
export type WebsiteOptions = Static<typeof websiteOptionsSchema>;

/** A library's source parameters. */
export const websiteSpecSchema = Type.Object(
  {
    url: Type.String({ minLength: 1, description: 'Start URL of the documentation, e.g. https://react.dev/learn. By default only pages under its path (same origin) are read.' }),
    include: OptionalStrings('URL patterns to read instead of the start path: globs on the path ("/docs/**", "/api/*") or /regular expressions/ on the whole URL.'),
    exclude: OptionalStrings('URL patterns never read (globs on the path or /regular expressions/ on the whole URL); exclude wins over include.'),
    maxPages: Type.Optional(Type.Integer({ minimum: 1, description: 'Most pages to read (the operator sets the ceiling).' })),
    maxDepth: Type.Optional(Type.Integer({ minimum: 0, description: 'Deepest link depth from the start page (0: the start page only).' })),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, description: 'Requests in flight at once (the operator sets the ceiling).' })),
    delayMs: Type.Optional(Type.Integer({ minimum: 0, description: 'Least time between two requests, in ms (never below the operator\'s delay).' })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 100, description: 'Time limit of one page request, in ms (never above the operator\'s).' })),
    sitemap: Type.Optional(Type.Boolean({ description: 'Seed the crawl from sitemap.xml (default true).' })),
  },
  { additionalProperties: false },
);
export type WebsiteSpec = Static<typeof websiteSpecSchema>;

/** Fills missing options with the defaults (ajv does it for config; tests may not) and checks them. */
export function resolveWebsiteOptions(options: Partial<WebsiteOptions> | undefined): WebsiteOptions {
  const o: WebsiteOptions = { ...DEFAULT_WEBSITE_OPTIONS };
  for (const [k, v] of Object.entries(options ?? {})) if (v !== undefined) (o as unknown as Record<string, unknown>)[k] = v;
  for (const key of ['maxPages', 'maxDepth', 'concurrency', 'delayMs', 'timeoutMs', 'retries', 'retryDelayMs', 'maxCrawlDelayMs', 'maxSitemaps'] as const) {
    if (!Number.isSafeInteger(o[key]) || o[key] < 0) throw new RefdeskError('config_error', `source-website: option ${key} must be a non-negative integer.`);
  }
  if (o.maxPages < 1 || o.concurrency < 1) throw new RefdeskError('config_error', 'source-website: options maxPages and concurrency must be at least 1.');
  if (typeof o.userAgent !== 'string' || o.userAgent.trim() === '') throw new RefdeskError('config_error', 'source-website: option userAgent must be a non-empty string.');
  return o;
}
