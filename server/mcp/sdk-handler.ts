/**
 * The MCP SDK's Streamable HTTP handler for Refdesk's MCP server, as a Node (req, res) handler.
 * Kept apart from http-endpoint.ts so that the SDK (and zod, which the tools' schemas use) is
 * imported at the first /mcp request rather than when the server starts: a server that is never
 * asked over MCP does not pay for it (about 0.15 s of CPU on the 2-core machine).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { DocsBackend } from './backend.ts';
import { createRefdeskMcpServer } from './tools.ts';

export type NodeMcpHandler = (req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse, parsedBody?: unknown) => Promise<void>;

export function createNodeMcpHandler(backend: DocsBackend, options: { defaultApiKey?: string; onError?: (error: Error) => void }): NodeMcpHandler {
  const handler = createMcpHandler(
    (ctx) => createRefdeskMcpServer(backend, { apiKey: ctx.authInfo?.token || options.defaultApiKey, client: typeof ctx.authInfo?.extra?.client === 'string' ? ctx.authInfo.extra.client : undefined }),
    { onerror: options.onError },
  );
  return toNodeHandler(handler, { onerror: options.onError });
}
