/**
 * The DocsBackend of the `refdesk mcp` command: a Refdesk server's REST API
 * (GET /api/v2/libs/search and GET /api/v2/context?type=txt), the key sent as
 * `Authorization: Bearer` (never in the URL).
 */
import { RefdeskError, type ErrorCode } from '../../core/errors.ts';
import type { ContextTextRequest, DocsBackend, LibrarySearchRequest, LibrarySearchResult, LibrarySummary } from './backend.ts';

/** The codes a Refdesk server may answer that the tools know how to explain. */
const KNOWN_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'invalid_request',
  'invalid_library_id',
  'library_not_found',
  'version_not_found',
  'library_not_finalized',
  'build_failed',
  'no_documentation',
  'too_large',
  'unauthorized',
  'invalid_api_key',
  'forbidden',
  'rate_limit_exceeded',
]);

export interface HttpBackendOptions {
  /** The server's base URL (e.g. http://127.0.0.1:3000), looked up on every call. */
  baseUrl: () => Promise<string>;
  /** The key to send when the caller gave none. */
  defaultApiKey?: string;
  /** Per-request timeout; 30 s unless given. */
  timeoutMs?: number;
}

export class HttpBackend implements DocsBackend {
  constructor(private readonly opts: HttpBackendOptions) {}

  async searchLibraries(req: LibrarySearchRequest): Promise<LibrarySearchResult> {
    const { json } = await this.get('/api/v2/libs/search', { libraryName: req.libraryName, query: req.query }, req.apiKey);
    const body = (json ?? {}) as { results?: unknown; searchFilterApplied?: unknown };
    if (!Array.isArray(body.results)) throw new RefdeskError('internal_error', 'The Refdesk server answered libs/search without a results list; is the URL a Refdesk server?');
    return { results: body.results.map(summaryOf), searchFilterApplied: body.searchFilterApplied === true };
  }

  async getContext(req: ContextTextRequest): Promise<string> {
    const params: Record<string, string> = { libraryId: req.libraryId, query: req.query, type: 'txt' };
    if (req.tokens !== undefined) params.tokens = String(req.tokens);
    return (await this.get('/api/v2/context', params, req.apiKey)).text;
  }

  /** A GET answered with success; an error answer (any status, JSON {error, message}) throws RefdeskError. */
  private async get(path: string, params: Record<string, string>, apiKey: string | undefined): Promise<{ text: string; json?: unknown }> {
    const base = await this.opts.baseUrl();
    const url = `${base}${path}?${new URLSearchParams(params)}`;
    const key = apiKey ?? this.opts.defaultApiKey;
    const headers: Record<string, string> = { accept: 'application/json, text/plain' };
    if (key) headers.authorization = `Bearer ${key}`;
    let status: number;
    let type: string;
    let text: string;
    try {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000) });
      status = res.status;
      type = res.headers.get('content-type') ?? '';
      text = await res.text();
    } catch (e) {
      const why = (e as Error).name === 'TimeoutError' ? 'it did not answer in time' : describeNetworkError(e);
      throw new RefdeskError(
        'internal_error',
        `Cannot reach the Refdesk server at ${base} (${why}). Check that it is running (refdesk serve), or give its address with --server URL or REFDESK_URL.`,
      );
    }
    let json: unknown;
    if (type.includes('application/json')) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    // Errors come as JSON {error, message}; library_not_finalized is one answered with 202.
    const isError = status >= 300 || (json !== null && typeof json === 'object' && typeof (json as { error?: unknown }).error === 'string');
    if (isError) throw errorOf(status, (json ?? {}) as { error?: unknown; message?: unknown }, base);
    return { text, json };
  }
}

function errorOf(status: number, body: { error?: unknown; message?: unknown }, base: string): RefdeskError {
  const message = typeof body.message === 'string' && body.message ? body.message : `The Refdesk server at ${base} answered HTTP ${status}.`;
  if (typeof body.error === 'string' && KNOWN_CODES.has(body.error)) return new RefdeskError(body.error as ErrorCode, message);
  if (status === 401) return new RefdeskError('invalid_api_key', message);
  if (status === 429) return new RefdeskError('rate_limit_exceeded', message);
  if (status === 403) return new RefdeskError('forbidden', message);
  if (status === 404 && typeof body.error !== 'string') {
    return new RefdeskError('internal_error', `${base} does not look like a Refdesk server (HTTP 404 on its REST API). Check --server or REFDESK_URL.`);
  }
  return new RefdeskError('internal_error', message);
}

function describeNetworkError(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ENOTFOUND') return 'host not found';
  return cause?.code ?? cause?.message ?? (e as Error).message;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

function summaryOf(v: unknown): LibrarySummary {
  const o = (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
  return {
    id: str(o.id),
    title: str(o.title),
    description: str(o.description),
    state: str(o.state) || 'finalized',
    totalSnippets: num(o.totalSnippets),
    totalTokens: num(o.totalTokens),
    trustScore: num(o.trustScore),
    benchmarkScore: num(o.benchmarkScore),
    versions: Array.isArray(o.versions) ? o.versions.filter((x): x is string => typeof x === 'string') : [],
  };
}
