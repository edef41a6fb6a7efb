/**
 * Who may do what on the operator's side: the one place routes ask. Every route that changes or
 * reveals operator state calls one of these, never its own check:
 *
 *   await access.requireAdmin(ctx, 'Deleting a library');          // 401 / 403 unless an admin
 *   await access.requirePermission(ctx, 'parse', 'Parsing');        // admin, or anonymous parse On
 *   access.requireLicence('Adding a library');                      // 403 license_expired
 *
 * A caller is an admin through an admin API key (`Authorization: Bearer rdk_...`, for
 * automation: no cookie, no CSRF) or an admin session (cookie, see server/auth/). Sessions,
 * anonymous permissions and the licence are supplied by their own modules through
 * `AccessOptions`; this file only combines them.
 */
import type { Context } from 'koa';
import type { ApiKeyRecord, Store } from '../core/contracts.ts';
import { RefdeskError } from '../core/errors.ts';
import { getAnonymousPermissions, type AnonymousPermission } from '../core/settings.ts';
import type { ApiService } from './api/service.ts';
import { clientAddressOf } from './public-api.ts';
import { safeEqual } from './auth/passwords.ts';

export type Permission = AnonymousPermission;

/** A signed-in admin session, as the session module describes it to routes. */
export interface SessionInfo {
  id: string;
  username: string;
  /** Sent back as header X-CSRF-Token or form field _csrf on cookie-authenticated state changes. */
  csrfToken: string;
  /** Signed in with the factory credentials: everything but changing them answers 403. */
  mustChangeCredentials: boolean;
}

export type Caller =
  | { kind: 'anonymous'; client: string }
  | { kind: 'key'; key: ApiKeyRecord; client: string }
  | { kind: 'session'; session: SessionInfo; client: string };

/** The session module's side: the session a request's cookie names (and CSRF-checked), if any. */
export interface SessionResolver {
  /**
   * The session of this request's cookie, or null without one. Throws 401 for an unknown or
   * expired session cookie and 403 `csrf_failed` for a state-changing request that fails the
   * CSRF checks.
   */
  sessionOf(ctx: Context): Promise<SessionInfo | null>;
}

/** The licence module's side: whether the licence still allows writes. */
export interface LicenceView {
  /** True once the licence's expiry has passed (reads and deletes keep working). */
  expired(): boolean;
  /** When it expired or expires (ISO date), for messages. */
  expiresAt(): string | undefined;
}

export interface AccessOptions {
  sessions?: SessionResolver;
  licence?: LicenceView;
  /**
   * The local admin token the server wrote to DATA_DIR/cli-token (server/auth/local-files.ts):
   * `Authorization: Bearer rdcli_...` with it is an admin (the `refdesk` CLI). Not an API key.
   */
  cliToken?: string;
}

/** The caller's key record for the local CLI token (not in the key list). */
export const CLI_KEY: ApiKeyRecord = Object.freeze({ id: 'cli', name: 'local CLI (DATA_DIR/cli-token)', plan: '', role: 'admin', prefix: 'rdcli_', createdAt: '', revokedAt: null });

export class Access {
  constructor(
    private readonly store: Store,
    private readonly service: ApiService,
    private readonly options: AccessOptions = {},
  ) {}

  /**
   * The caller of a request, worked out once per request (kept in ctx.state.caller): a Bearer key
   * when one is sent (a bad one is a 401, never anonymous), else the session of the cookie, else
   * anonymous.
   */
  async caller(ctx: Context): Promise<Caller> {
    const known = ctx.state.caller as Caller | undefined;
    if (known) return known;
    const client = clientAddressOf(ctx);
    let caller: Caller;
    const cli = this.options.cliToken;
    const bearer = /^Bearer[ \t]+(rdcli_\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
    const principal = bearer && cli && safeEqual(bearer, cli) ? ({ kind: 'key', key: CLI_KEY, client } as const) : await this.service.authenticate(ctx.headers, client);
    if (principal.kind === 'key') caller = principal;
    else {
      const session = this.options.sessions ? await this.options.sessions.sessionOf(ctx) : null;
      caller = session ? { kind: 'session', session, client } : { kind: 'anonymous', client };
    }
    ctx.state.caller = caller;
    return caller;
  }

  isAdmin(caller: Caller): boolean {
    if (caller.kind === 'key') return caller.key.role === 'admin';
    if (caller.kind === 'session') return !caller.session.mustChangeCredentials;
    return false;
  }

  /** 401 for an anonymous caller, 403 for a member key or a session that must change its credentials. */
  async requireAdmin(ctx: Context, what: string): Promise<Caller> {
    const caller = await this.caller(ctx);
    if (this.isAdmin(caller)) return caller;
    if (caller.kind === 'anonymous') {
      throw new RefdeskError('unauthorized', `${what} needs an admin: sign in (POST /api/auth/login) or send an admin API key as "Authorization: Bearer rdk_...".`);
    }
    if (caller.kind === 'session') {
      throw new RefdeskError('credentials_change_required', `${what} is not allowed yet: this account still has the factory credentials. Change them first (POST /api/auth/credentials).`);
    }
    throw new RefdeskError('forbidden', `${what} needs an admin key; this key (${caller.key.prefix}...) is a member key. The operator creates admin keys with refdesk keys create --role admin.`);
  }

  /** Anyone when the operator turned the anonymous permission On; otherwise an admin. */
  async requirePermission(ctx: Context, permission: Permission, what: string): Promise<Caller> {
    const caller = await this.caller(ctx);
    if (this.isAdmin(caller)) return caller;
    const open = await getAnonymousPermissions(this.store);
    if (open[permission]) return caller;
    return this.requireAdmin(ctx, what);
  }

  /** 403 `license_expired` once the licence has expired (reads and deletes are never blocked). */
  requireLicence(what: string): void {
    const licence = this.options.licence;
    if (licence?.expired()) {
      const when = licence.expiresAt();
      throw new RefdeskError('license_expired', `${what} needs a valid licence; this installation's licence expired${when ? ` on ${when.slice(0, 10)}` : ''}. Search, context, MCP and deleting keep working. Set LICENSE_KEY to a renewed key and restart.`);
    }
  }
}
