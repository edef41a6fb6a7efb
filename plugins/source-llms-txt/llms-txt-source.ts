import { markdownMeta, plainInline } from '../../core/readme-meta.ts';
import type { Fetch, Logger, SourceContext, SourceDocument, Source } from '../../core/contracts.ts';
import { RefdeskError, isRefdeskError } from '../../core/errors.ts';
import { DEFAULT_NETWORK_POLICY, type NetworkPolicy } from '../../core/net/address-policy.ts';
import { displayUrl, fetchWithRetry, httpFailure, readBodyCapped, type RetryOptions } from '../../core/net/retry.ts';
import { conditionalHeaders, decodeUtf8, fetchPage, sha256, validators, type PageResult } from './fetch-page.ts';
import { codeLanguage, pagePath, slug, uniquePath } from './page-url.ts';
import { allLinks, parseLlmsTxt, type LlmsLink, type LlmsTxt } from './parse-llms-txt.ts';
import { DEFAULT_LLMS_OPTIONS, type LlmsTxtOptions } from './schema.ts';
import { detectFullKind, splitContextFile, splitFullFile, type FullKind, type SplitPart } from './split-full.ts';

export interface LlmsTxtDeps {
  fetch: Fetch;
  logger?: Logger;
  policy?: NetworkPolicy;
}

/** Skipped llms.txt lines logged one by one; the rest are counted in one line. */
const SKIPPED_LINES_LOGGED = 20;

function parseUrl(spec: Record<string, unknown>): URL {
  const raw = spec.url;
  let u: URL | null = null;
  try {
    u = typeof raw === 'string' ? new URL(raw) : null;
  } catch {
    u = null;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
    throw new RefdeskError('invalid_source', 'The llms.txt source needs "url": an absolute http(s) URL of an llms.txt, llms-full.txt or llms-ctx.txt file.');
  }
  if (u.username || u.password) {
    throw new RefdeskError('invalid_source', 'The llms.txt URL must not contain credentials.');
  }
  u.hash = '';
  return u;
}

/**
 * Reads an llms.txt file (https://llmstxt.org) as one library:
 *
 * - An index file (H1, summary, H2 sections of links) yields itself (path = its URL path) and
 *   then every linked page, in the order listed, each URL once. A page is looked for at its `.md`
 *   variant first (`page.md`, `dir/index.html.md`), then at its URL; HTML is turned into
 *   markdown. Path = the page's URL path (prefixed by its host when it is on another host), url =
 *   the page URL, title = the link text. The H2 section is kept in `meta.section`.
 * - The "Optional" section is indexed like the others (unless the operator turns
 *   `includeOptional` off); its pages carry `meta.optional = 'true'` and one log line says how many.
 * - A full file is split back into its pages: `<doc title desc>` wrappers (llms-ctx files) or
 *   one page per H1 (llms-full.txt), detected from the content, not the file name.
 *
 * Malformed lines are skipped with a warning. A linked page that cannot be read is skipped with
 * a warning naming its URL and why (missing, refused by the address policy, timing out, a server
 * that keeps failing after retries with backoff, too large, not text) and the rest is read; on a
 * refresh such a page keeps the copy of the previous build. The read fails only when the
 * llms.txt itself cannot be read, or none of its linked pages could be. On refresh, pages are
 * requested conditionally (ETag / Last-Modified) and a 304 yields the document as `unchanged`.
 */
export class LlmsTxtSource implements Source {
  readonly options: LlmsTxtOptions;
  private readonly fetch: Fetch;
  private readonly policy: NetworkPolicy;

  constructor(options: Partial<LlmsTxtOptions> | undefined, deps: LlmsTxtDeps) {
    this.options = { ...DEFAULT_LLMS_OPTIONS, ...Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined)) };
    this.fetch = deps.fetch;
    this.policy = deps.policy ?? DEFAULT_NETWORK_POLICY;
  }

  /** Retries of one fetch; `path` (the page's document path) goes on its job log lines. */
  private retry(ctx: SourceContext, path?: string): RetryOptions {
    return {
      policy: { attempts: this.options.retryAttempts, baseDelayMs: this.options.retryBaseDelayMs },
      signal: ctx.signal,
      onRetry: ({ attempt, delayMs, reason }) => ctx.log('warn', `retrying (attempt ${attempt + 1} of ${this.options.retryAttempts}) in ${delayMs} ms: ${reason}`, path ? { path } : undefined),
    };
  }

  async *read(ctx: SourceContext): AsyncGenerator<SourceDocument> {
    const root = parseUrl(ctx.spec);
    ctx.signal.throwIfAborted();
    const rootUrl = root.href;
    const rootPath = pagePath(rootUrl, rootUrl);
    const prevRoot = ctx.previous.get(rootPath);
    // Only a split full file can be skipped whole: an index must be read to know its links.
    const conditional = prevRoot && (prevRoot.meta.kind === 'ctx' || prevRoot.meta.kind === 'full') ? conditionalHeaders(prevRoot.meta) : {};

    ctx.progress({ message: `reading ${displayUrl(rootUrl)}` });
    const { response: res, attempts } = await fetchWithRetry(
      this.fetch,
      rootUrl,
      { headers: { accept: 'text/markdown, text/plain;q=0.9, */*;q=0.1', ...conditional } },
      this.retry(ctx, rootPath),
    );
    if (res.status === 304 && Object.keys(conditional).length > 0) {
      ctx.log('info', `${displayUrl(rootUrl)} is unchanged (HTTP 304): reusing its ${ctx.previous.size} documents`, { path: rootPath });
      for (const [path, prev] of ctx.previous) {
        ctx.signal.throwIfAborted();
        yield { path, format: 'markdown', content: '', unchanged: true, hash: prev.hash, meta: { ...prev.meta } };
      }
      return;
    }
    if (!res.ok) {
      throw httpFailure(rootUrl, res, 'The llms.txt file', { attempts, hint: 'Check the URL (e.g. https://example.com/llms.txt).' });
    }
    const maxRoot = this.policy.maxResponseBytes;
    const text = decodeUtf8(await readBodyCapped(res, maxRoot, rootUrl, ctx.signal));
    if (!text.trim()) throw new RefdeskError('no_documentation', `The llms.txt file at ${displayUrl(rootUrl)} is empty.`);
    const rootMeta = validators(res);

    const parsed = parseLlmsTxt(text, rootUrl);
    const links = allLinks(parsed);
    const kind = detectFullKind(text);
    if (kind !== null) {
      yield* this.readFull(ctx, kind, text, rootUrl, rootPath, rootMeta);
      return;
    }
    yield* this.readIndex(ctx, parsed, links, text, rootUrl, rootPath, rootMeta);
  }

  private logSkippedLines(ctx: SourceContext, parsed: LlmsTxt, rootUrl: string, rootPath: string): void {
    const { skipped } = parsed;
    for (const s of skipped.slice(0, SKIPPED_LINES_LOGGED)) {
      ctx.log('warn', `skipped line ${s.line} of ${displayUrl(rootUrl)}: ${s.reason}: ${JSON.stringify(s.text)}`, { path: rootPath });
    }
    if (skipped.length > SKIPPED_LINES_LOGGED) {
      ctx.log('warn', `skipped ${skipped.length - SKIPPED_LINES_LOGGED} more lines of ${displayUrl(rootUrl)}`, { path: rootPath });
    }
  }

  private async *readIndex(
    ctx: SourceContext,
    parsed: LlmsTxt,
    allListed: LlmsLink[],
    text: string,
    rootUrl: string,
    rootPath: string,
    rootMeta: Record<string, string>,
  ): AsyncGenerator<SourceDocument> {
    this.logSkippedLines(ctx, parsed, rootUrl, rootPath);
    if (!parsed.title) ctx.log('warn', `${displayUrl(rootUrl)} has no H1 title; the format requires one (reading its links anyway)`, { path: rootPath });
    // The project's own name (the H1) and its blockquote summary; a site's llms.txt is its own.
    ctx.setLibraryMeta?.({ title: parsed.title || undefined, description: plainInline(parsed.summary) || undefined, official: true });
    const sections = parsed.sections.map((s) => `${s.name || '(before the first section)'} (${s.links.length})`).join(', ');
    ctx.log('info', `llms.txt "${parsed.title}": ${allListed.length} links in ${parsed.sections.length} sections: ${sections}`);

    const optional = allListed.filter((l) => l.optional);
    let links = allListed.filter((l) => l.url !== rootUrl);
    if (optional.length > 0) {
      if (this.options.includeOptional) {
        ctx.log('info', `Optional section: its ${optional.length} links are indexed and marked optional (meta optional=true)`);
      } else {
        links = links.filter((l) => !l.optional);
        ctx.log('info', `Optional section: its ${optional.length} links are not read (includeOptional is off)`);
      }
    }
    if (links.length > this.options.maxPages) {
      ctx.log('warn', `${links.length} links listed; only the first ${this.options.maxPages} are read (maxPages)`);
      links = links.slice(0, this.options.maxPages);
    }

    const taken = new Set<string>([rootPath]);
    yield {
      path: rootPath,
      url: rootUrl,
      format: 'markdown',
      content: text,
      title: parsed.title || undefined,
      hash: sha256(text),
      meta: { ...rootMeta, kind: 'index' },
    };

    const planned = links.map((link) => ({ link, path: uniquePath(pagePath(link.url, rootUrl), taken) }));
    const env = { fetch: this.fetch, maxPageBytes: Math.min(this.options.maxPageBytes, this.policy.maxResponseBytes), retry: this.retry(ctx), signal: ctx.signal };
    let files = 1;
    let bytes = Buffer.byteLength(text);
    let skipped = 0;
    let unchanged = 0;
    const failures: string[] = [];
    const window = Math.max(1, this.options.concurrency);
    for (let i = 0; i < planned.length; i += window) {
      ctx.signal.throwIfAborted();
      const batch = planned.slice(i, i + window);
      const results = await Promise.all(
        batch.map(({ link, path }) =>
          fetchPage({ url: link.url, title: link.title, description: link.description, previous: ctx.previous.get(path) }, { ...env, retry: this.retry(ctx, path) }).catch((e: unknown): PageResult | { kind: 'failed'; reason: string } => {
            // One link that cannot be read (refused by the address policy, timing out, a server
            // that keeps failing) does not fail the build: it is logged and the rest is read.
            if (ctx.signal.aborted || !isRefdeskError(e)) throw e;
            return { kind: 'failed', reason: e.message };
          }),
        ),
      );
      for (let k = 0; k < batch.length; k++) {
        ctx.signal.throwIfAborted();
        const { link, path } = batch[k];
        const r = results[k];
        if (r.kind === 'failed') {
          const prev = ctx.previous.get(path);
          if (prev) {
            // A refresh keeps the copy of the previous build rather than losing the page.
            unchanged++;
            files++;
            ctx.log('warn', `could not read "${link.title}" (${displayUrl(link.url)}, line ${link.line}); kept the copy of the previous build: ${r.reason}`, { path });
            yield { path, url: link.url, format: 'markdown', content: '', title: link.title, unchanged: true, hash: prev.hash, meta: { ...prev.meta } };
            continue;
          }
          skipped++;
          failures.push(`${displayUrl(link.url)}: ${r.reason}`);
          ctx.log('warn', `skipped "${link.title}" (${displayUrl(link.url)}, line ${link.line}): ${r.reason}`, { path });
          continue;
        }
        if (r.kind === 'skip') {
          skipped++;
          failures.push(`${displayUrl(link.url)}: ${r.reason}`);
          ctx.log('warn', `skipped "${link.title}" (${displayUrl(link.url)}, line ${link.line}): ${r.reason}`, { path });
          continue;
        }
        const sectionMeta: Record<string, string> = { section: link.section, ...(link.optional ? { optional: 'true' } : {}) };
        if (r.kind === 'unchanged') {
          const prev = ctx.previous.get(path)!;
          unchanged++;
          files++;
          yield { path, url: link.url, format: 'markdown', content: '', title: link.title, unchanged: true, hash: prev.hash, meta: { ...prev.meta } };
          continue;
        }
        bytes += r.bytes;
        if (bytes > this.options.maxBytes) {
          throw new RefdeskError('too_large', `The pages of ${displayUrl(rootUrl)} exceed ${this.options.maxBytes} bytes in total (maxBytes).`);
        }
        files++;
        yield { path, url: link.url, format: r.format, content: r.content, title: r.title, hash: sha256(r.content), meta: { ...r.meta, ...sectionMeta } };
      }
      ctx.progress({ files, bytes, message: `read ${Math.min(i + window, planned.length)} of ${planned.length} pages` });
    }
    ctx.log('info', `read ${files - 1} of ${planned.length} pages (${unchanged} unchanged, ${skipped} skipped), ${bytes} bytes`);
    if (planned.length > 0 && files === 1) {
      const shown = failures.slice(0, 3).join('; ');
      throw new RefdeskError(
        'invalid_source',
        `None of the ${planned.length} pages linked from ${displayUrl(rootUrl)} could be read: ${shown}${failures.length > 3 ? `; and ${failures.length - 3} more (see the job log)` : ''}.`,
      );
    }
  }

  private async *readFull(
    ctx: SourceContext,
    kind: FullKind,
    text: string,
    rootUrl: string,
    rootPath: string,
    rootMeta: Record<string, string>,
  ): AsyncGenerator<SourceDocument> {
    let rootDoc: string;
    let parts: SplitPart[];
    let title = '';
    if (kind === 'ctx') {
      const split = splitContextFile(text);
      parts = split.parts;
      title = split.project?.title ?? '';
      const p = split.project;
      rootDoc = p ? [`# ${p.title || 'Project'}`, p.summary ? `> ${p.summary}` : '', p.content].filter(Boolean).join('\n\n') : '';
    } else {
      parts = splitFullFile(text);
      rootDoc = parts[0]?.title === '' ? parts.shift()!.content : '';
    }
    ctx.log('info', `${displayUrl(rootUrl)} is a ${kind === 'ctx' ? 'context file (<doc> wrappers)' : 'full file (one page per H1)'}: ${parts.length} documents`);
    if (parts.length > this.options.maxPages) {
      ctx.log('warn', `${parts.length} documents in the file; only the first ${this.options.maxPages} are indexed (maxPages)`);
      parts = parts.slice(0, this.options.maxPages);
    }
    if (!this.options.includeOptional) {
      const before = parts.length;
      parts = parts.filter((p) => p.section.toLowerCase() !== 'optional');
      if (before !== parts.length) ctx.log('info', `Optional section: ${before - parts.length} documents not indexed (includeOptional is off)`);
    } else {
      const n = parts.filter((p) => p.section.toLowerCase() === 'optional').length;
      if (n > 0) ctx.log('info', `Optional section: its ${n} documents are indexed and marked optional (meta optional=true)`);
    }
    const head = markdownMeta(rootDoc);
    const summary = /^>\s?(.+)$/m.exec(rootDoc)?.[1];
    ctx.setLibraryMeta?.({ title: title || head.title, description: (summary && plainInline(summary)) || head.description, official: true });
    if (!rootDoc.trim()) rootDoc = `# ${title || rootPath}\n\n${parts.map((p) => `- ${p.title}${p.description ? `: ${p.description}` : ''}`).join('\n')}\n`;

    const taken = new Set<string>([rootPath]);
    yield { path: rootPath, url: rootUrl, format: 'markdown', content: rootDoc, title: title || undefined, hash: sha256(text), meta: { ...rootMeta, kind } };
    let files = 1;
    for (const part of parts) {
      ctx.signal.throwIfAborted();
      let url = '';
      try {
        url = part.url ? new URL(part.url, rootUrl).href : '';
      } catch {
        url = '';
      }
      const wanted = url ? pagePath(url, rootUrl) : `${rootPath}/${slug(part.title)}`;
      if (!part.content.trim()) {
        // The path it would have had (not taken: an empty document holds no path).
        ctx.log('warn', `skipped the empty document "${part.title}"`, { path: wanted });
        continue;
      }
      const path = uniquePath(wanted, taken);
      const lang = url ? codeLanguage(new URL(url).pathname) : null;
      const content = lang && !part.content.trimStart().startsWith('```')
        ? `# ${part.title}\n\n${part.description ? part.description + '\n\n' : ''}\`\`\`${lang}\n${part.content}\n\`\`\`\n`
        : part.content;
      const meta: Record<string, string> = { kind: 'part', ...(part.section ? { section: part.section } : {}), ...(part.section.toLowerCase() === 'optional' ? { optional: 'true' } : {}) };
      files++;
      yield { path, url: url || rootUrl, format: 'markdown', content, title: part.title || undefined, hash: sha256(content), meta };
    }
    ctx.progress({ files, bytes: Buffer.byteLength(text) });
  }
}
