/** A website library's spec, checked and combined with the operator's ceilings. */
import { RefdeskError } from '../../core/errors.ts';
import type { WebsiteOptions } from './options.ts';
import { compilePattern } from './scope.ts';

export interface CrawlSettings {
  start: URL;
  include: string[];
  exclude: string[];
  maxPages: number;
  maxDepth: number;
  concurrency: number;
  delayMs: number;
  timeoutMs: number;
  sitemap: boolean;
  /** Notes for the job log (a requested value lowered to the operator's ceiling). */
  notes: string[];
}

function list(v: unknown, key: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')) {
    throw new RefdeskError('invalid_source', `Website "${key}" must be a list of URL patterns (globs such as "/docs/**" or "re:<regular expression>").`);
  }
  for (const p of v as string[]) compilePattern(p, key);
  return v as string[];
}

function int(v: unknown, key: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new RefdeskError('invalid_source', `Website "${key}" must be an integer of at least ${min}.`);
  return v;
}

export function crawlSettings(spec: Record<string, unknown>, options: WebsiteOptions): CrawlSettings {
  if (typeof spec.url !== 'string' || spec.url.trim() === '') {
    throw new RefdeskError('invalid_source', 'Website spec needs "url": the start page of the documentation, e.g. https://docs.example.com/guide/.');
  }
  let start: URL;
  try {
    start = new URL(spec.url.trim());
  } catch {
    throw new RefdeskError('invalid_source', 'The website "url" is not a valid absolute URL; give one such as https://docs.example.com/guide/.');
  }
  if (start.protocol !== 'http:' && start.protocol !== 'https:') {
    throw new RefdeskError('invalid_source', `The website "url" must be http or https (got ${start.protocol.replace(':', '')}).`);
  }
  if (start.username || start.password) {
    throw new RefdeskError('invalid_source', 'The website "url" must not contain credentials.');
  }
  start.hash = '';
  const notes: string[] = [];
  const capped = (key: string, asked: number | undefined, ceiling: number): number => {
    if (asked === undefined) return ceiling;
    if (asked > ceiling) {
      notes.push(`${key} ${asked} lowered to the operator's limit of ${ceiling}`);
      return ceiling;
    }
    return asked;
  };
  if (spec.sitemap !== undefined && typeof spec.sitemap !== 'boolean') throw new RefdeskError('invalid_source', 'Website "sitemap" must be true or false.');
  return {
    start,
    include: list(spec.include, 'include'),
    exclude: list(spec.exclude, 'exclude'),
    maxPages: capped('maxPages', int(spec.maxPages, 'maxPages', 1), options.maxPages),
    maxDepth: capped('maxDepth', int(spec.maxDepth, 'maxDepth', 0), options.maxDepth),
    concurrency: capped('concurrency', int(spec.concurrency, 'concurrency', 1), options.concurrency),
    delayMs: Math.max(options.delayMs, int(spec.delayMs, 'delayMs', 0) ?? 0),
    timeoutMs: capped('timeoutMs', int(spec.timeoutMs, 'timeoutMs', 100), options.timeoutMs),
    sitemap: spec.sitemap !== false && options.maxSitemaps > 0,
    notes,
  };
}
