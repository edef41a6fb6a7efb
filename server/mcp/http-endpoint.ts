/**
 * POST/GET /mcp: MCP over Streamable HTTP, mounted in a Koa app. One handler serves both
 * protocol eras of the MCP SDK v2: the 2026-07-28 revision (per-request envelope) and, for
 * 2025-era clients (initialize handshake, protocol 2024-11-05 to 2025-11-25), stateless serving
 * with a fresh server per request. Nothing is kept between requests.
 */
import type { Context, Middleware, Next } from 'koa';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { DocsBackend } from './backend.ts';
import type { NodeMcpHandler } from './sdk-handler.ts';
import { apiKeyOf, isLoopbackHost, rebindingRefusal } from './request-guard.ts';
import { isRefdeskError, RefdeskError } from '../../core/errors.ts';
import { parseJsonText, readBody } from '../body.ts';
import { ApiError } from '../api/api-error.ts';
import { clientAddressOf } from '../public-api.ts';
import { HostAllowList, type AllowedHost } from '../allowed-hosts.ts';

/** Who may call /mcp. By default the endpoint is public (no key needed). */
export interface McpAuthOptions {
  /** Whether a key is required now (read on every request, so a settings change applies at once). */
  requireKey?: () => boolean | Promise<boolean>;
  /** Whether a presented key is valid. A key that fails this is refused even when none is required. */
  verifyKey?: (key: string) => Promise<boolean>;
}

export interface McpEndpointOptions {
  /** The URL path; '/mcp' unless given. */
  path?: string;
  auth?: McpAuthOptions;
  /**
   * The host the HTTP server is bound to (HOST). When it is a loopback address, requests whose
   * Host is neither local nor allowed are refused with 403 `forbidden` (DNS rebinding protection).
   */
  bindHost?: string;
  /**
   * Hosts allowed besides the loopback names (ALLOWED_HOSTS, server.allowedHosts). Whatever the
   * bind address, a request with an Origin whose host is not allowed (and is not the request's
   * own allowed Host) is refused with 403 `forbidden_origin`; requests without Origin pass.
   */
  allowedHosts?: readonly AllowedHost[];
  /** The key passed to the backend when a request carries none (the `refdesk mcp` command's own key). */
  defaultApiKey?: string;
  /** Told about out-of-band failures of the MCP handler (for the log). */
  onError?: (error: Error) => void;
  /**
   * Counts one tool call against the caller's rate limit: the REST API's bucket (the key, or the
   * client's address), so REST and MCP share one limit. Resolves with the RateLimit-* headers to
   * send; rejects with a 429 ApiError (with Retry-After) when the caller is over its limit, which
   * /mcp answers as REST does: HTTP 429 `{error: "rate_limit_exceeded", message, retryAfterSeconds}`.
   * Without it, /mcp counts nothing (the `refdesk mcp` command: its backend's REST calls count).
   */
  rateLimit?: (apiKey: string | undefined, client: string) => Promise<Record<string, string>>;
}

/** The methods the MCP SDK's HTTP handler answers (others are a 405 here). */
const MCP_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'DELETE', 'HEAD', 'OPTIONS']);

/** The largest JSON-RPC body /mcp reads (the MCP SDK's own default bound). */
const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

async function readMcpBody(ctx: Context): Promise<unknown> {
  const type = ctx.request.type;
  if (type && type !== 'application/json') {
    throw new RefdeskError('invalid_request', `MCP messages are JSON: send "Content-Type: application/json" (got "${type.slice(0, 60)}").`);
  }
  return parseJsonText((await readBody(ctx, MAX_MCP_BODY_BYTES, 'The MCP message')).toString('utf8'));
}

function refuse(ctx: Context, status: 401 | 403, error: 'invalid_api_key' | 'forbidden' | 'forbidden_origin', message: string): void {
  ctx.status = status;
  ctx.body = { error, message };
  if (status === 401) ctx.set('WWW-Authenticate', 'Bearer realm="refdesk"');
}

/** Koa middleware answering `path` (/mcp) with Refdesk's MCP server over `backend`. */
export function mcpEndpoint(backend: DocsBackend, options: McpEndpointOptions = {}): Middleware {
  const path = options.path ?? '/mcp';
  const guardHosts = options.bindHost !== undefined && isLoopbackHost(options.bindHost);
  const allowed = new HostAllowList(options.allowedHosts ?? []);
  // The SDK is loaded at the first /mcp request (server/mcp/sdk-handler.ts), not at start.
  let toNode: Promise<NodeMcpHandler> | undefined;
  const sdkHandler = () =>
    (toNode ??= import('./sdk-handler.ts').then(
      (m) => m.createNodeMcpHandler(backend, { defaultApiKey: options.defaultApiKey, onError: options.onError }),
      (e: unknown) => {
        toNode = undefined; // try again at the next request
        throw e;
      },
    ));

  return async (ctx: Context, next: Next) => {
    if (ctx.path !== path) return next();
    if (!MCP_METHODS.has(ctx.method)) {
      // Never handed to the SDK: a web Request cannot even be built for TRACE or CONNECT (500).
      ctx.status = 405;
      ctx.set('Allow', 'GET, POST, DELETE');
      ctx.body = { error: 'method_not_allowed', message: `${ctx.method} is not allowed on ${path}; MCP over HTTP uses POST (and GET, DELETE).` };
      return;
    }
    if (guardHosts) {
      const why = rebindingRefusal(ctx.req.headers, allowed);
      if (why) return refuse(ctx, 403, 'forbidden', why);
    }
    const badOrigin = allowed.originRefusal(ctx.req.headers);
    if (badOrigin) return refuse(ctx, 403, 'forbidden_origin', badOrigin);
    const key = apiKeyOf(ctx.req.headers);
    const { requireKey, verifyKey } = options.auth ?? {};
    if (key && verifyKey && !(await verifyKey(key))) {
      return refuse(ctx, 401, 'invalid_api_key', 'The API key is not valid. Check the key in your MCP client configuration (REFDESK_API_KEY header or Authorization: Bearer).');
    }
    if (!key && requireKey && (await requireKey())) {
      return refuse(
        ctx,
        401,
        'invalid_api_key',
        'This Refdesk server requires an API key for MCP. Send it in the REFDESK_API_KEY header or as Authorization: Bearer <key> (keys start with rdk_).',
      );
    }
    const client = clientAddressOf(ctx);
    // The JSON-RPC body is read here, by the same reader as the REST routes (size limit, depth
    // bound, a 4xx {error, message} for a truncated or malformed body), before the SDK sees it.
    const parsedBody = ctx.method === 'POST' ? await readMcpBody(ctx) : undefined;
    // Tool calls count against the caller's rate limit before the MCP handler runs them.
    if (options.rateLimit && parsedBody !== undefined) {
      let headers: Record<string, string> = {};
      try {
        for (let i = toolCalls(parsedBody); i > 0; i--) headers = await options.rateLimit(key, client);
      } catch (e) {
        if (!isRefdeskError(e) || e.code !== 'rate_limit_exceeded') throw e;
        ctx.status = e.status;
        ctx.body = { error: e.code, message: e.message, ...(e instanceof ApiError ? e.details : {}) };
        if (e instanceof ApiError) ctx.set(e.headers);
        return;
      }
      for (const [k, v] of Object.entries(headers)) ctx.res.setHeader(k, v);
    }
    // The key (when given) and the client's address travel to the tools with the request.
    const auth: AuthInfo = { token: key ?? '', clientId: key ? 'refdesk-api-key' : 'anonymous', scopes: [], extra: { client } };
    const handle = await sdkHandler();
    ctx.respond = false;
    await handle(Object.assign(ctx.req, { auth }), ctx.res, parsedBody);
  };
}

/** How many `tools/call` messages a parsed JSON-RPC body holds. */
function toolCalls(parsed: unknown): number {
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.filter((m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'tools/call').length;
}
