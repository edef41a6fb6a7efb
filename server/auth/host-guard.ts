/**
 * The DNS-rebinding guard of the cookie-authenticated side: the Host header must be an allowed
 * host (loopback names, ALLOWED_HOSTS, server.allowedHosts) on /api/auth/*, /api/admin/*,
 * /api/settings*, /api/audit and on any request that carries the session cookie, whatever the
 * method; otherwise 403 `forbidden_host`. The public API with Bearer keys accepts any Host.
 */
import type { Context, Next } from 'koa';
import { RefdeskError } from '../../core/errors.ts';
import type { HostAllowList } from '../allowed-hosts.ts';
import { SESSION_COOKIE } from './sessions.ts';

const GUARDED = /^\/api\/(auth|admin|audit)(\/|$)|^\/api\/settings/i;

export function hostGuard(hosts: HostAllowList) {
  const cookie = new RegExp(`(^|;)\\s*${SESSION_COOKIE}=`);
  return async (ctx: Context, next: Next) => {
    if (GUARDED.test(ctx.path) || cookie.test(ctx.get('cookie'))) {
      if (!hosts.allowsHostHeader(ctx.get('host') || undefined)) {
        throw new RefdeskError(
          'forbidden_host',
          'This server does not answer to the host name in this request (DNS rebinding guard). The operator lists the names clients use with ALLOWED_HOSTS (comma-separated, e.g. docs.example.com) or server.allowedHosts in the config; localhost and 127.0.0.1 are always allowed.',
        );
      }
    }
    await next();
  };
}
