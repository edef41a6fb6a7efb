/**
 * Checks on an HTTP request to /mcp before any MCP message is read: the API key it carries, and,
 * when the server is bound to a loopback address, Host and Origin against DNS rebinding.
 */
import type { IncomingHttpHeaders } from 'node:http';

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** True for the addresses that only this machine can reach (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127(\.\d{1,3}){3}$/.test(h);
}

function hostnameOf(hostHeader: string): string | null {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Why a request to a loopback-bound server must be refused (a message), or null when it may pass:
 * its Host must name this machine (localhost, 127.0.0.1 or [::1], any port) and its Origin, when
 * a browser sent one, must be such a local origin too.
 */
export function rebindingRefusal(headers: IncomingHttpHeaders): string | null {
  const host = header(headers, 'host');
  const hostname = host ? hostnameOf(host) : null;
  if (!hostname || !LOOPBACK_NAMES.has(hostname)) {
    return 'This Refdesk MCP endpoint listens on a local address and answers only requests whose Host is localhost, 127.0.0.1 or [::1] (protection against DNS rebinding). Connect to http://127.0.0.1:<port>/mcp or http://localhost:<port>/mcp.';
  }
  const origin = header(headers, 'origin');
  if (origin !== undefined) {
    let originHost: string | null = null;
    try {
      const u = new URL(origin);
      if (u.protocol === 'http:' || u.protocol === 'https:') originHost = u.hostname.toLowerCase();
    } catch {
      originHost = null;
    }
    if (!originHost || !LOOPBACK_NAMES.has(originHost)) {
      return 'This Refdesk MCP endpoint listens on a local address and refuses requests from web pages of other sites (their Origin is not localhost, 127.0.0.1 or [::1]).';
    }
  }
  return null;
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
