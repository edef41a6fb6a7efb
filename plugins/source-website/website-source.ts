import type { Fetch, Source, SourceContext, SourceDocument } from '../../core/contracts.ts';
import { Crawler } from './crawler.ts';
import { resolveWebsiteOptions, type WebsiteOptions } from './options.ts';
import { crawlSettings } from './spec.ts';

export interface WebsiteDeps {
  /** Every request goes through it (the kernel's guarded Fetch applies the network policy). */
  fetch: Fetch;
}

/**
 * Reads a documentation website: crawls from the start URL within its scope and yields each
 * page's main content as markdown, at the path of its canonical URL.
 */
export class WebsiteSource implements Source {
  readonly options: WebsiteOptions;
  private readonly fetch: Fetch;

  constructor(options: Partial<WebsiteOptions> | undefined, deps: WebsiteDeps) {
    this.options = resolveWebsiteOptions(options);
    this.fetch = deps.fetch;
  }

  async *read(ctx: SourceContext): AsyncGenerator<SourceDocument> {
    ctx.signal.throwIfAborted();
    const settings = crawlSettings(ctx.spec, this.options);
    yield* new Crawler(ctx, settings, this.options, this.fetch).run();
  }
}
