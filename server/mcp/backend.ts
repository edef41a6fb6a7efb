/**
 * What the MCP tools need from Refdesk: find libraries, and get the context text for a question.
 * Two implementations: ServiceBackend (in the Refdesk server's process, over the REST API's service layer) and
 * HttpBackend (the `refdesk mcp` command, over a Refdesk server's REST API).
 */

/** One library as the libs/search API answers it (the fields the tools show). */
export interface LibrarySummary {
  id: string;
  title: string;
  description: string;
  /** 'finalized' when it can be queried; other states mean it is still being indexed. */
  state: string;
  totalSnippets: number;
  totalTokens: number;
  /** 0..10; 0 means not rated. */
  trustScore: number;
  /** 0..100; 0 means not measured. */
  benchmarkScore: number;
  /** Pinned versions, newest first. */
  versions: string[];
}

export interface LibrarySearchRequest {
  libraryName: string;
  /** The user's question, used to rank libraries of similar names. */
  query: string;
  /** The caller's API key, when it gave one. */
  apiKey?: string;
  /** The caller's network address, when known (rate limits of callers without a key). */
  client?: string;
}

export interface LibrarySearchResult {
  /** Best match first. */
  results: LibrarySummary[];
  /** True when an access policy hid some libraries from this caller. */
  searchFilterApplied: boolean;
}

export interface ContextTextRequest {
  libraryId: string;
  query: string;
  tokens?: number;
  apiKey?: string;
  client?: string;
}

/**
 * The data source of the MCP tools. Methods throw RefdeskError (core/errors.ts) for anything the
 * caller can act on (unknown library, bad ID, empty query, missing key...); the tools turn those
 * into tool errors.
 */
export interface DocsBackend {
  searchLibraries(req: LibrarySearchRequest): Promise<LibrarySearchResult>;
  /** The readable context text (the REST API's `type=txt` answer). */
  getContext(req: ContextTextRequest): Promise<string>;
}
