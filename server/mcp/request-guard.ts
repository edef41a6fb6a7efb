/**
 * Checks on an HTTP request to /mcp before any MCP message is read: the API key it carries, and
 * (with server/allowed-hosts.ts) Host and Origin against DNS rebinding.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isLoopbackHostname, type HostAllowList } from '../allowed-hosts.ts';

/** True for the addresses that only this machine can reach (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  return isLoopbackHostname(host);
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Why a request to a loopback-bound server must be refused for its Host (a message), or null:
 * its Host must name this machine (localhost, 127.0.0.1 or [::1], any port) or an allowed host.
 */
export function rebindingRefusal(headers: IncomingHttpHeaders, allowed: HostAllowList): string | null {
  if (allowed.allowsHostHeader(header(headers, 'host'))) return null;
  return 'This Refdesk MCP endpoint listens on a local address and answers only requests whose Host is localhost, 127.0.0.1 or [::1] (protection against DNS rebinding), or a host the operator allowed (ALLOWED_HOSTS). Connect to http://127.0.0.1:<port>/mcp or http://localhost:<port>/mcp.';
}

/**
 * The API key a request carries: the `REFDESK_API_KEY` header (also spelled `Refdesk-Api-Key`,
 * for proxies that drop underscores), else `Authorization: Bearer <key>`. Empty values count as none.
 */
export function apiKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const direct = (header(headers, 'refdesk_api_key') ?? header(headers, 'refdesk-api-key'))?.trim();
  if (direct) return direct;
  const auth = header(headers, 'authorization')?.trim();
  const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  return m ? m[1] : undefined;
}
