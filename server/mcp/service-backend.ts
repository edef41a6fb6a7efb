/**
 * The in-process DocsBackend of the Refdesk server's /mcp endpoint: the same service layer as the
 * REST API (server/api/service.ts), so API keys, access policies, renamed libraries (301) and the
 * request time limit apply to MCP tool calls exactly as to GET /api/v2/libs/search and /context.
 */
import type { ApiService } from '../api/service.ts';
import type { ContextTextRequest, DocsBackend, LibrarySearchRequest, LibrarySearchResult } from './backend.ts';

export class ServiceBackend implements DocsBackend {
  constructor(private readonly service: ApiService) {}

  /**
   * The caller as the REST API would see it (anonymous when no key was given, identified by its
   * address). Rate limits are counted by the /mcp endpoint before the call reaches here
   * (`rateLimit` in server/app.ts), in the same bucket as the caller's REST requests.
   */
  private async principal(apiKey?: string, client?: string) {
    return this.service.authenticate(apiKey ? { authorization: `Bearer ${apiKey}` } : {}, client ?? 'unknown');
  }

  async searchLibraries(req: LibrarySearchRequest): Promise<LibrarySearchResult> {
    const principal = await this.principal(req.apiKey, req.client);
    const found = await this.service.searchLibrariesFor(principal, { libraryName: req.libraryName, query: req.query });
    return { results: found.results, searchFilterApplied: found.searchFilterApplied };
  }

  async getContext(req: ContextTextRequest): Promise<string> {
    const principal = await this.principal(req.apiKey, req.client);
    const params: Record<string, unknown> = { libraryId: req.libraryId, query: req.query, type: 'txt' };
    if (req.tokens !== undefined) params.tokens = String(req.tokens);
    const answer = await this.service.getContextFor(principal, params);
    return answer.type === 'txt' ? answer.text : JSON.stringify(answer.body);
  }
}
