/**
 * Forwarded headers behind a reverse proxy. X-Forwarded-For, X-Forwarded-Proto and
 * X-Forwarded-Host are believed only when the connection comes from a trusted proxy (config
 * `server.trustedProxies`, env TRUSTED_PROXIES: addresses or CIDRs; none by default). From
 * any other peer they are removed before anything reads them, so a client cannot choose the
 * address its rate limit is counted on. From a trusted peer the client address is the
 * right-most X-Forwarded-For entry that is not itself a trusted proxy.
 */
import { BlockList, isIP } from 'node:net';
import type { Context, Next } from 'koa';
import { RefdeskError } from '../core/errors.ts';

const FORWARDED = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'forwarded'];

/** `::ffff:10.0.0.1` -> `10.0.0.1`; other addresses as they are. */
function plain(address: string): string {
  const a = address.trim();
  return a.toLowerCase().startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

export interface TrustedProxies {
  readonly entries: readonly string[];
  trusts(address: string | undefined): boolean;
}

/**
 * Parses addresses and CIDR ranges (`10.0.0.0/8`, `::1`, `fd00::/8`); `what` names the setting
 * in the error (TRUSTED_PROXIES or server.trustedProxies).
 */
export function parseTrustedProxies(input: string | readonly string[], what: string): TrustedProxies {
  const list = (typeof input === 'string' ? input.split(',') : [...input]).map((s) => s.trim()).filter(Boolean);
  const block = new BlockList();
  for (const entry of list) {
    const [addr, bits, extra] = entry.split('/');
    const family = isIP(addr ?? '');
    const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
    if (extra !== undefined || family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128) || (bits !== undefined && !/^\d{1,3}$/.test(bits))) {
      throw new RefdeskError('config_error', `${what}: "${entry.slice(0, 64)}" is not an IP address or CIDR range (e.g. 10.0.0.0/8, 172.17.0.1, ::1).`);
    }
    block.addSubnet(addr!, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  return {
    entries: list,
    trusts(address) {
      if (!address || list.length === 0) return false;
      const a = plain(address);
      const family = isIP(a);
      if (family === 0) return false;
      return block.check(a, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/**
 * Koa middleware (first in the chain): removes forwarded headers from untrusted peers and, from a
 * trusted one, sets `ctx.request.ip` to the client the proxies name. The app's `proxy` flag
 * (X-Forwarded-Proto/Host read by Koa) is set by createApp when the list is not empty.
 */
export function trustedProxyMiddleware(proxies: TrustedProxies) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const peer = ctx.req.socket.remoteAddress;
    // Whether the request came through a proxy at all, trusted or not: the factory sign-in
    // (server/auth/sessions.ts) is only for direct loopback requests, even once the headers are gone.
    if (FORWARDED.some((h) => ctx.req.headers[h] !== undefined)) {
      ctx.state.forwarded = true;
      // A proxy that says the client used https: the session cookie is marked Secure (never less safe).
      const proto = String(ctx.req.headers['x-forwarded-proto'] ?? '').split(',')[0]?.trim().toLowerCase();
      if (proto === 'https' || /(^|[;,\s])proto=https\b/i.test(String(ctx.req.headers.forwarded ?? ''))) ctx.state.forwardedHttps = true;
    }
    if (!proxies.trusts(peer)) {
      for (const h of FORWARDED) delete ctx.req.headers[h];
      ctx.request.ip = peer ?? '';
      return next();
    }
    const chain = String(ctx.get('x-forwarded-for') || '')
      .split(',')
      .map((s) => plain(s))
      .filter((s) => s !== '');
    let client = plain(peer ?? '');
    for (let i = chain.length - 1; i >= 0; i--) {
      const hop = chain[i]!;
      if (isIP(hop) === 0) break; // garbage: stop believing the chain here
      client = hop;
      if (!proxies.trusts(hop)) break;
    }
    ctx.request.ip = client;
    return next();
  };
}
