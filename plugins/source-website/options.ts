import type { JsonSchema } from '../../core/define.ts';
import { RefdeskError } from '../../core/errors.ts';

/** Operator options of the `website` source (config), after ajv applied the defaults. */
export interface WebsiteOptions {
  /** The User-Agent sent with every request; its first word is matched against robots.txt groups. */
  userAgent: string;
  /** Pages read when a library gives no maxPages, and the most any library may ask for. */
  maxPages: number;
  /** Link depth from the start page when a library gives none, and the most it may ask for. */
  maxDepth: number;
  /** Requests in flight at once for one crawl (a library may ask for fewer). */
  concurrency: number;
  /** Least time between two requests to the same host, in ms (robots.txt Crawl-delay may raise it). */
  delayMs: number;
  /** Time limit of one page request, in ms (the network policy's timeoutMs still caps it). */
  timeoutMs: number;
  /** Extra attempts after a network error, a time-out, a 429 or a 5xx. */
  retries: number;
  /** Wait before the first retry, in ms; doubled on each further attempt. */
  retryDelayMs: number;
  /** Longest robots.txt Crawl-delay honoured, in ms (longer ones are cut to this, with a warning). */
  maxCrawlDelayMs: number;
  /** Most sitemap files read (a sitemap index counts its children). */
  maxSitemaps: number;
}

export const DEFAULT_WEBSITE_OPTIONS: Readonly<WebsiteOptions> = Object.freeze({
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

const int = (min: number, def: number, description: string): JsonSchema => ({ type: 'integer', minimum: min, default: def, description });

export const websiteOptionsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    userAgent: { type: 'string', minLength: 1, maxLength: 200, default: DEFAULT_WEBSITE_OPTIONS.userAgent, description: 'User-Agent of the crawler; its first word is the robots.txt agent name.' },
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
};

/** A library's source parameters. */
export const websiteSpecSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, description: 'Start URL of the documentation, e.g. https://react.dev/learn. By default only pages under its path (same origin) are read.' },
    include: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: 'URL patterns to read instead of the start path: globs on the path ("/docs/**", "/api/*") or /regular expressions/ on the whole URL.',
    },
    exclude: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: 'URL patterns never read (globs on the path or /regular expressions/ on the whole URL); exclude wins over include.',
    },
    maxPages: { type: 'integer', minimum: 1, description: 'Most pages to read (the operator sets the ceiling).' },
    maxDepth: { type: 'integer', minimum: 0, description: 'Deepest link depth from the start page (0: the start page only).' },
    concurrency: { type: 'integer', minimum: 1, description: 'Requests in flight at once (the operator sets the ceiling).' },
    delayMs: { type: 'integer', minimum: 0, description: 'Least time between two requests, in ms (never below the operator\'s delay).' },
    timeoutMs: { type: 'integer', minimum: 100, description: 'Time limit of one page request, in ms (never above the operator\'s).' },
    sitemap: { type: 'boolean', description: 'Seed the crawl from sitemap.xml (default true).' },
  },
};

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
