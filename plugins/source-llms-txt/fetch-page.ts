/**
 * Fetching one linked page: the markdown variant first, then the page; conditional requests on
 * refresh; content type to document format.
 */
import { createHash } from 'node:crypto';
import type { DocumentFormat, Fetch, PreviousDocument } from '../../core/contracts.ts';
import { isRefdeskError } from '../../core/errors.ts';
import { RETRYABLE_STATUSES, displayUrl, fetchWithRetry, httpFailure, mediaTypeLabel, readBodyCapped, type RetryOptions } from '../../core/net/retry.ts';
import { htmlToMarkdown } from './html-to-markdown.ts';
import { codeLanguage, pageCandidates } from './page-url.ts';

export interface PageRequest {
  url: string;
  title: string;
  description: string;
  previous: PreviousDocument | undefined;
}

export type PageResult =
  | { kind: 'page'; fetched: string; format: DocumentFormat; content: string; title: string; bytes: number; meta: Record<string, string> }
  | { kind: 'unchanged' }
  | { kind: 'skip'; reason: string };

export interface PageEnv {
  fetch: Fetch;
  maxPageBytes: number;
  retry: RetryOptions;
  signal: AbortSignal;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function decodeUtf8(data: Buffer): string {
  return new TextDecoder('utf-8').decode(data).replace(/^\uFEFF/, '');
}

const MARKDOWN_EXT = /\.(md|mdx|markdown)$/i;

function mediaType(res: Response): string {
  return (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
}

function looksLikeHtml(text: string): boolean {
  return /^\s*(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/i.test(text);
}

/** Conditional request headers from what the previous build stored. */
export function conditionalHeaders(meta: Record<string, string> | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  if (meta?.etag) h['if-none-match'] = meta.etag;
  if (meta?.lastModified) h['if-modified-since'] = meta.lastModified;
  return h;
}

/** ETag and Last-Modified of a response, as document meta. */
export function validators(res: Response): Record<string, string> {
  const meta: Record<string, string> = {};
  const etag = res.headers.get('etag');
  const lm = res.headers.get('last-modified');
  if (etag) meta.etag = etag;
  if (lm) meta.lastModified = lm;
  return meta;
}

/**
 * Reads one page. 4xx answers move on to the next candidate and, for the last one, skip the
 * page with a reason; a server that keeps failing (5xx, 429, network errors after the retries)
 * or a refused address throws a RefdeskError naming the URL, which the source logs (keeping the
 * previous build's copy on a refresh) before it reads the next link.
 */
export async function fetchPage(req: PageRequest, env: PageEnv): Promise<PageResult> {
  const variants = pageCandidates(req.url);
  let candidates = variants;
  const prevFetched = req.previous?.meta.fetched;
  // On refresh, ask the URL that answered last time first, conditionally.
  if (prevFetched && candidates.includes(prevFetched)) candidates = [prevFetched, ...candidates.filter((c) => c !== prevFetched)];
  const reasons: string[] = [];
  for (const candidate of candidates) {
    const conditional = candidate === prevFetched ? conditionalHeaders(req.previous?.meta) : {};
    const { response: res, attempts } = await fetchWithRetry(
      env.fetch,
      candidate,
      { headers: { accept: 'text/markdown, text/plain;q=0.9, text/html;q=0.8, */*;q=0.1', ...conditional } },
      { ...env.retry, signal: env.signal },
    );
    if (res.status === 304 && Object.keys(conditional).length > 0) return { kind: 'unchanged' };
    if (RETRYABLE_STATUSES.has(res.status)) throw httpFailure(candidate, res, `The page "${req.title}"`, { attempts });
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      reasons.push(`${displayUrl(candidate)}: HTTP ${res.status}`);
      continue;
    }
    const type = mediaType(res);
    const isMdVariant = variants.length > 1 && candidate === variants[0];
    if (isMdVariant && type === 'text/html') {
      // A site answering every path with its HTML shell: not a markdown copy.
      await res.body?.cancel().catch(() => {});
      reasons.push(`${displayUrl(candidate)}: HTML, not markdown`);
      continue;
    }
    if (type && !type.startsWith('text/') && !/(json|xml|yaml|markdown|javascript|x-python|x-sh)/.test(type)) {
      await res.body?.cancel().catch(() => {});
      reasons.push(`${displayUrl(candidate)}: not a text document (${mediaTypeLabel(type)})`);
      continue;
    }
    let data: Buffer;
    try {
      data = await readBodyCapped(res, env.maxPageBytes, candidate, env.signal);
    } catch (e) {
      if (isRefdeskError(e) && e.code === 'too_large') return { kind: 'skip', reason: `larger than ${env.maxPageBytes} bytes (maxPageBytes)` };
      throw e;
    }
    const text = decodeUtf8(data);
    const meta = { ...validators(res), fetched: candidate };
    const path = new URL(candidate).pathname;
    if (type === 'text/html' || (!MARKDOWN_EXT.test(path) && looksLikeHtml(text))) {
      const { title, markdown } = htmlToMarkdown(text, candidate);
      if (!markdown.trim()) return { kind: 'skip', reason: 'the HTML page has no text content' };
      return { kind: 'page', fetched: candidate, format: 'markdown', content: markdown, title: req.title || title, bytes: data.length, meta };
    }
    const lang = codeLanguage(path);
    if (lang && !/markdown/.test(type)) {
      // A source file (an example app): one markdown page with the link's notes and the code.
      const fence = text.includes('```') ? '~~~~' : '```';
      const content = `# ${req.title}\n\n${req.description ? req.description + '\n\n' : ''}${fence}${lang}\n${text.replace(/\n$/, '')}\n${fence}\n`;
      return { kind: 'page', fetched: candidate, format: 'markdown', content, title: req.title, bytes: data.length, meta };
    }
    const format: DocumentFormat = MARKDOWN_EXT.test(path) || type.includes('markdown') || isMdVariant ? 'markdown' : 'text';
    return { kind: 'page', fetched: candidate, format, content: text, title: req.title, bytes: data.length, meta };
  }
  return { kind: 'skip', reason: reasons.join('; ') || 'no readable variant' };
}
