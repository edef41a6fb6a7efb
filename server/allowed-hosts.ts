/**
 * Allowed hosts: the host names this server answers to, for the checks that stop a web page on
 * another site from driving it (the MCP specification's DNS-rebinding guard on /mcp; later the
 * cookie-authenticated admin routes). Loopback names are always allowed; the operator adds names
 * with `ALLOWED_HOSTS` (env, comma-separated) or `server.allowedHosts` (config).
 *
 * An entry is a host name or IP address (`docs.example.com`, `10.0.0.5`, `[::1]`), optionally
 * with a port (`docs.example.com:8443`): without a port it allows every port. Matching ignores
 * case and a trailing dot.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { RefdeskError } from '../core/errors.ts';

export interface AllowedHost {
  /** Lower case, IPv6 in brackets. */
  hostname: string;
  /** null: any port. */
  port: number | null;
}

/** Hosts allowed with no configuration: this machine's loopback names. */
export const LOOPBACK_HOSTS: readonly AllowedHost[] = Object.freeze([
  { hostname: 'localhost', port: null },
  { hostname: '127.0.0.1', port: null },
  { hostname: '[::1]', port: null },
]);

const ENTRY = /^(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9](?:[a-z0-9-]{0,62}))*)\.?(?::(\d{1,5}))?$/i;

/** True for the addresses that only this machine can reach (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.trim().toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * Parses allowed-host entries (an array, or a comma-separated string as in ALLOWED_HOSTS).
 * A bad entry throws a config_error naming `source` and the entry's position, never guessing.
 */
export function parseAllowedHosts(entries: readonly string[] | string, source: string): AllowedHost[] {
  const list = typeof entries === 'string' ? entries.split(',') : [...entries];
  const out: AllowedHost[] = [];
  list.forEach((raw, i) => {
    const entry = raw.trim();
    if (entry === '' && typeof entries === 'string') return;
    const m = ENTRY.exec(entry);
    const port = m?.[2] === undefined ? null : Number(m[2]);
    if (!m || (port !== null && (port < 1 || port > 65535))) {
      throw new RefdeskError(
        'config_error',
        `${source}: entry ${i + 1} is not a host name or address with an optional port (e.g. docs.example.com, docs.example.com:8443, 10.0.0.5, [::1]:3000); no scheme, path or wildcard.`,
      );
    }
    out.push({ hostname: m[1].toLowerCase(), port });
  });
  return out;
}

/** A Host header value (or an origin's host) as hostname and port; null when it is not one. */
export function splitHost(hostHeader: string, defaultPort: number | null = null): { hostname: string; port: number | null } | null {
  try {
    const u = new URL(`http://${hostHeader.trim()}`);
    if (u.username || u.password || u.pathname !== '/' || u.search || u.hash) return null;
    return { hostname: u.hostname.toLowerCase().replace(/\.$/, ''), port: u.port ? Number(u.port) : defaultPort };
  } catch {
    return null;
  }
}

/** Decides whether hosts are allowed: loopback names plus `extra`. */
export class HostAllowList {
  readonly entries: readonly AllowedHost[];
  /** The operator's entries (ALLOWED_HOSTS, server.allowedHosts), without the loopback names. */
  readonly extra: readonly AllowedHost[];

  constructor(extra: readonly AllowedHost[] = []) {
    this.extra = [...extra];
    this.entries = [...LOOPBACK_HOSTS, ...extra];
  }

  /** Whether `hostname` (with `port`, null when unknown) is allowed. Any 127.x.y.z is loopback. */
  allows(hostname: string, port: number | null): boolean {
    const h = hostname.toLowerCase().replace(/\.$/, '');
    if (isLoopbackHostname(h)) return true;
    return this.entries.some((e) => e.hostname === h && (e.port === null || e.port === port));
  }

  /** Whether a Host header value names an allowed host. */
  allowsHostHeader(hostHeader: string | undefined): boolean {
    const h = hostHeader ? splitHost(hostHeader) : null;
    return h !== null && this.allows(h.hostname, h.port);
  }

  /**
   * Why a request's Origin must be refused (a message), or null when it may pass: no Origin (a
   * client that is not a browser), an Origin on an allowed host, or an Origin naming the same
   * host and port as the request's Host when that Host is allowed. `null`, non-http(s) and
   * unparsable origins are refused.
   */
  originRefusal(headers: IncomingHttpHeaders): string | null {
    const origin = first(headers.origin);
    if (origin === undefined) return null;
    let u: URL | null = null;
    try {
      u = new URL(origin);
    } catch {
      u = null;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
      return `Requests from web pages are accepted only from allowed hosts; this request's Origin (${origin === 'null' ? 'null' : 'not an http(s) origin'}) is not one.`;
    }
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    const hostname = u.hostname.toLowerCase();
    if (this.allows(hostname, port)) return null;
    const host = first(headers.host);
    const own = host ? splitHost(host, port) : null;
    if (own && own.hostname === hostname.replace(/\.$/, '') && own.port === port && this.allows(own.hostname, own.port)) return null;
    return `Requests from web pages are accepted only from allowed hosts, and the Origin host "${u.host}" is not one. The operator can allow it with ALLOWED_HOSTS (comma-separated host names, optionally with a port) or server.allowedHosts in the config.`;
  }
}

/**
 * Why a cookie-authenticated state change must be refused as cross-origin (a message), or null:
 * the browser's Origin (or, without one, the Referer's origin) must name the same host and port
 * as the request's Host, or a host the operator listed (ALLOWED_HOSTS / server.allowedHosts, for
 * a reverse proxy that rewrites Host). Without either header (not a browser) it passes: the CSRF
 * token is still required.
 */
export function crossOriginRefusal(hosts: HostAllowList, headers: IncomingHttpHeaders): string | null {
  const origin = first(headers.origin);
  const referer = first(headers.referer);
  const claimed = origin ?? referer;
  if (claimed === undefined) return null;
  let u: URL | null = null;
  try {
    u = new URL(claimed);
  } catch {
    u = null;
  }
  const what = origin !== undefined ? 'Origin' : 'Referer';
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) return `This change was sent from a page that is not on this server (${what} is not an http(s) origin); send it from the server's own pages.`;
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  const hostname = u.hostname.toLowerCase().replace(/\.$/, '');
  const host = first(headers.host);
  const own = host ? splitHost(host, port) : null;
  if (own && own.hostname === hostname && own.port === port) return null;
  if (hosts.extra.some((e) => e.hostname === hostname && (e.port === null || e.port === port))) return null;
  return `This change was sent from another site (${what} host "${u.host}" is not this server's host); send it from the server's own pages.`;
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
