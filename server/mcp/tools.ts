/**
 * The MCP server of Refdesk: resolve-library-id, query-docs and get-library-docs (query-docs'
 * older name), over a DocsBackend. Arguments under the names clients send are accepted
 * (userQuery/question for query; context7CompatibleLibraryID/libraryID/libraryName for a library
 * ID) and every failure comes back as a tool error with what to do next, never as a crash.
 */
import * as z from 'zod';
import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { isRefdeskError } from '../../core/errors.ts';
import type { DocsBackend } from './backend.ts';
import { formatLibraryListing } from './library-listing.ts';
import { ARG, GET_LIBRARY_DOCS_DESCRIPTION, QUERY_DOCS_DESCRIPTION, RESOLVE_DESCRIPTION, SERVER_INSTRUCTIONS } from './tool-text.ts';

/** The version Refdesk reports as the MCP server's implementation version. */
export const MCP_SERVER_VERSION = '0.1.0';

export const TOOL_NAMES = ['resolve-library-id', 'query-docs', 'get-library-docs'] as const;

/** Who is calling: the API key it presented and its network address, passed on to the backend. */
export interface ToolCaller {
  apiKey?: string;
  /** The client's address (rate limits of callers without a key). */
  client?: string;
}

/** Copies the first present alias into each canonical argument that is missing. */
function withAliases(aliases: Record<string, readonly string[]>) {
  return (input: unknown): unknown => {
    if (!input || typeof input !== 'object' || Array.isArray(input)) return input;
    const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
    for (const [canonical, names] of Object.entries(aliases)) {
      if (out[canonical] !== undefined && out[canonical] !== null) continue;
      const found = names.find((n) => out[n] !== undefined && out[n] !== null);
      if (found) out[canonical] = out[found];
    }
    // Some clients send numbers as strings.
    if (typeof out.tokens === 'string' && /^\d{1,9}$/.test(out.tokens.trim())) out.tokens = Number(out.tokens.trim());
    if (out.tokens === null) delete out.tokens;
    return out;
  };
}

const requiredString = (name: string, what: string) =>
  z.string({ error: (iss) => (iss.input === undefined ? `"${name}" is required: ${what}` : `"${name}" must be a string: ${what}`) });

const tokensSchema = z
  .number({ error: '"tokens" must be a positive whole number of tokens; leave it out for the default.' })
  .int({ error: '"tokens" must be a positive whole number of tokens; leave it out for the default.' })
  .min(1, { error: '"tokens" must be a positive whole number of tokens; leave it out for the default.' })
  .max(1_000_000, { error: '"tokens" must be at most 1000000.' })
  .optional()
  .describe(ARG.tokens);

const QUERY_ALIASES = ['userQuery', 'question'] as const;
const LIBRARY_ID_ALIASES = ['libraryID', 'context7CompatibleLibraryID', 'libraryName'] as const;

function text(t: string): CallToolResult {
  return { content: [{ type: 'text', text: t }] };
}

function toolError(t: string): CallToolResult {
  return { content: [{ type: 'text', text: t }], isError: true };
}

/** A caught failure as the tool error a model can act on. */
export function explainError(e: unknown): string {
  if (!isRefdeskError(e)) {
    return 'Refdesk could not answer because of an internal error. Try again; if it keeps failing, the operator can find details in the Refdesk server log.';
  }
  switch (e.code) {
    case 'library_not_found':
      return `${e.message}\nCall resolve-library-id with the library's name to get its exact library ID, then call this tool again with that ID.`;
    case 'invalid_library_id':
      return `${e.message}\nA library ID is a path such as /owner/repo or /docs/name. Call resolve-library-id with the library name to get it, unless the user gave you an ID.`;
    case 'version_not_found':
      return `${e.message}\nCall resolve-library-id to see the versions this server has, or leave the version out to use the default one.`;
    case 'library_not_finalized':
      return `${e.message} Until it is ready, answer without it or ask the user to try again shortly.`;
    case 'unauthorized':
    case 'invalid_api_key':
      return `${e.message}\nRefdesk needs a valid API key: configure it in the MCP client (the REFDESK_API_KEY header, Authorization: Bearer, or --api-key / REFDESK_API_KEY for the stdio server).`;
    case 'forbidden':
      return `${e.message}\nThe API key in use is not allowed to read this library; ask the Refdesk operator for access.`;
    case 'internal_error':
    case 'config_error':
      return e.message.startsWith('Cannot reach') || e.message.includes('Refdesk server') ? e.message : `Refdesk could not answer: ${e.message}`;
    default:
      return e.message;
  }
}

/** Checks a question: trimmed and not empty. Returns the error text, or null. */
function emptyQueryError(query: string, name: string): string | null {
  if (query.trim() !== '') return null;
  return `"${name}" must not be empty: ask one concrete question about the library, e.g. "how do I handle errors in middleware".`;
}

/** A new McpServer with Refdesk's tools over `backend`, for one caller. */
export function createRefdeskMcpServer(backend: DocsBackend, caller: ToolCaller = {}): McpServer {
  const server = new McpServer(
    { name: 'refdesk', title: 'Refdesk', version: MCP_SERVER_VERSION },
    { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
  );
  const { apiKey, client } = caller;

  server.registerTool(
    'resolve-library-id',
    {
      title: 'Resolve a library name to a Refdesk library ID',
      description: RESOLVE_DESCRIPTION,
      inputSchema: z.preprocess(
        (input: unknown) => {
          const out = withAliases({ query: QUERY_ALIASES })(input) as Record<string, unknown>;
          // Older prompts send only the name: rank by the name then.
          if (out && typeof out === 'object' && out.query === undefined && typeof out.libraryName === 'string') out.query = out.libraryName;
          return out;
        },
        z.object({
          libraryName: requiredString('libraryName', 'the name of the library to look up, e.g. "react".').describe(ARG.libraryName),
          query: requiredString('query', "the user's question, used to rank the libraries.").describe(ARG.resolveQuery),
        }),
      ),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ libraryName, query }) => {
      const name = libraryName.trim();
      if (!name) return toolError('"libraryName" must not be empty: give the name of the library to look up, e.g. "react" or "koa".');
      try {
        const result = await backend.searchLibraries({ libraryName: name.slice(0, 500), query: (query.trim() || name).slice(0, 500), apiKey, client });
        return text(formatLibraryListing(name, result));
      } catch (e) {
        return toolError(explainError(e));
      }
    },
  );

  const answer = async (libraryId: string, query: string, tokens: number | undefined, queryName: string): Promise<CallToolResult> => {
    const id = libraryId.trim();
    if (!id) return toolError('The library ID must not be empty. Call resolve-library-id with the library name to get it.');
    const empty = emptyQueryError(query, queryName);
    if (empty) return toolError(empty);
    try {
      return text(await backend.getContext({ libraryId: id, query: query.trim(), tokens, apiKey, client }));
    } catch (e) {
      return toolError(explainError(e));
    }
  };

  server.registerTool(
    'query-docs',
    {
      title: "Query a library's documentation",
      description: QUERY_DOCS_DESCRIPTION,
      inputSchema: z.preprocess(
        withAliases({ query: QUERY_ALIASES, libraryId: LIBRARY_ID_ALIASES }),
        z.object({
          libraryId: requiredString('libraryId', 'the library ID from resolve-library-id, e.g. /docs/koa.').describe(ARG.libraryId),
          query: requiredString('query', 'one focused question about the library.').describe(ARG.query),
          tokens: tokensSchema,
        }),
      ),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ libraryId, query, tokens }) => answer(libraryId, query, tokens, 'query'),
  );

  server.registerTool(
    'get-library-docs',
    {
      title: "Get a library's documentation (older name of query-docs)",
      description: GET_LIBRARY_DOCS_DESCRIPTION,
      inputSchema: z.preprocess(
        withAliases({ context7CompatibleLibraryID: ['libraryId', 'libraryID', 'libraryName'], topic: ['query', ...QUERY_ALIASES] }),
        z.object({
          context7CompatibleLibraryID: requiredString('context7CompatibleLibraryID', 'the library ID from resolve-library-id, e.g. /docs/koa.').describe(ARG.libraryId),
          topic: z.string({ error: '"topic" must be a string.' }).optional().describe(ARG.topic),
          tokens: tokensSchema,
        }),
      ),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    // Without a topic the model asked for the library in general: answer with its overview.
    async ({ context7CompatibleLibraryID, topic, tokens }) =>
      answer(context7CompatibleLibraryID, topic?.trim() ? topic : 'overview getting started installation usage', tokens, 'topic'),
  );

  return server;
}
