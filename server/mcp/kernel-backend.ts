/**
 * The in-process DocsBackend of the Refdesk server's /mcp endpoint: the kernel's query functions.
 * API keys and access policies are not applied here yet (the REST service layer will take over).
 */
import type { Kernel } from '../../core/kernel.ts';
import { getContext, searchLibraries, toContextText } from '../../core/query.ts';
import type { ContextTextRequest, DocsBackend, LibrarySearchRequest, LibrarySearchResult } from './backend.ts';

export class KernelBackend implements DocsBackend {
  constructor(private readonly kernel: Kernel) {}

  async searchLibraries(req: LibrarySearchRequest): Promise<LibrarySearchResult> {
    const libs = await searchLibraries(this.kernel, req.libraryName, req.query);
    return {
      results: libs.map((l) => ({
        id: l.id,
        title: l.title,
        description: l.description,
        state: l.state,
        totalSnippets: l.totalSnippets,
        totalTokens: l.totalTokens,
        trustScore: l.trustScore,
        benchmarkScore: l.benchmarkScore,
        versions: l.versions,
      })),
      searchFilterApplied: false,
    };
  }

  async getContext(req: ContextTextRequest): Promise<string> {
    return toContextText(await getContext(this.kernel, { libraryId: req.libraryId, query: req.query, tokens: req.tokens }));
  }
}
