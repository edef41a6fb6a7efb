/**
 * The admin account's sign-in and server-side sessions (issue 18), and the SessionResolver that
 * server/access.ts asks for the session of a request.
 *
 * - Session id: 32 random bytes (base64url) in the `refdesk_session` cookie (HttpOnly,
 *   SameSite=Strict, Path=/, Secure over TLS or when a proxy says X-Forwarded-Proto: https); the
 *   store keeps its SHA-256 only. Idle expiry (default 30 minutes, counted from the last request
 *   seen, recorded at most once a minute) and absolute expiry (default 12 hours).
 * - CSRF token: HMAC-SHA256 of the session id, so it is never stored and cannot be derived
 *   without the cookie. Every state-changing request authenticated by the cookie must send it
 *   (header X-CSRF-Token, form field _csrf, or for a multipart/form-data body `?_csrf=` in the
 *   URL) and, when the browser sends Origin or Referer,
 *   come from the same origin: otherwise 403 `csrf_failed`.
 * - Factory credentials (`admin` / `refdesk`, no account row): accepted only from a loopback
 *   socket without forwarding headers, or with the setup token of DATA_DIR/setup-token; the
 *   session they open answers 403 `credentials_change_required` everywhere but
 *   POST /api/auth/credentials.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { Clock, SessionRecord, Store } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { ApiError } from '../api/api-error.ts';
import type { SessionInfo, SessionResolver } from '../access.ts';
import { crossOriginRefusal, type HostAllowList } from '../allowed-hosts.ts';
import { clientAddressOf } from '../public-api.ts';
import { readBody } from '../body.ts';
import { FACTORY_PASSWORD, FACTORY_USERNAME, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, dummyHash, hashPassword, safeEqual, verifyPassword } from './passwords.ts';
import { LoginLimiter } from './login-limiter.ts';
import { readSetupToken, removeSetupToken } from './local-files.ts';

export const SESSION_COOKIE = 'refdesk_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'x-client-ip', 'true-client-ip', 'cf-connecting-ip'];
const LOOPBACK_SOCKETS = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;
/** A touch (last activity) is written at most this often per session. */
const TOUCH_EVERY_MS = 60_000;

export interface AuthOptions {
  dataDir: string;
  clock: Clock;
  hosts: HostAllowList;
  /** Idle expiry in minutes (default 30). */
  idleMinutes?: number;
  /** Absolute expiry in hours (default 12). */
  absoluteHours?: number;
  /** How a failed sign-in's answer is delayed (tests record the delays instead of waiting). */
  sleep?: (ms: number) => Promise<void>;
}

/** What a sign-in or GET /api/auth/session answers. */
export interface SessionView {
  username: string;
  csrfToken: string;
  mustChangeCredentials: boolean;
  expiresAt: string;
  idleExpiresAt: string;
}

export type AuthEvent = { action: string; outcome: 'success' | 'failure' | 'denied'; actor: string; target: string | null; details?: Record<string, unknown> };

const hashId = (id: string) => createHash('sha256').update(id).digest('hex');
const csrfOf = (id: string) => createHmac('sha256', id).update('refdesk-csrf').digest('base64url');

export class AuthService implements SessionResolver {
  readonly limiter: LoginLimiter;
  private readonly idleMs: number;
  private readonly absoluteMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly store: Store,
    private readonly options: AuthOptions,
    /** Called for every sign-in, sign-out and credential change (the audit log). */
    private readonly onEvent: (ctx: Context, e: AuthEvent) => Promise<void> = async () => {},
  ) {
    this.limiter = new LoginLimiter(options.clock);
    this.idleMs = (options.idleMinutes ?? 30) * 60_000;
    this.absoluteMs = (options.absoluteHours ?? 12) * 3_600_000;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  private now(): number {
    return this.options.clock.now().getTime();
  }

  // ---------------------------------------------------------------------------------------------
  // The session of a request (SessionResolver)
  // ---------------------------------------------------------------------------------------------

  async sessionOf(ctx: Context): Promise<SessionInfo | null> {
    const known = ctx.state.authSession as { info: SessionInfo } | undefined;
    if (known) return known.info;
    const id = ctx.cookies.get(SESSION_COOKIE);
    if (!id) return null;
    const record = await this.liveSession(id);
    if (!record) {
      this.clearCookie(ctx);
      throw new RefdeskError('unauthorized', 'Your session has ended or expired: sign in again (POST /api/auth/login).');
    }
    const info: SessionInfo = { id: record.idHash, username: record.username, csrfToken: csrfOf(id), mustChangeCredentials: record.mustChangeCredentials };
    if (!SAFE_METHODS.has(ctx.method)) await this.checkCsrf(ctx, info.csrfToken);
    const now = this.now();
    if (now - Date.parse(record.lastSeenAt) >= TOUCH_EVERY_MS) {
      await this.store.updateSession(record.idHash, { lastSeenAt: new Date(now).toISOString() });
    }
    ctx.state.authSession = { info, record };
    return info;
  }

  /** The stored session of a cookie's id, or null when unknown or expired (an expired one is removed). */
  private async liveSession(id: string): Promise<SessionRecord | null> {
    if (id.length > 200) return null;
    const record = await this.store.getSession(hashId(id));
    if (!record) return null;
    const now = this.now();
    if (now >= Date.parse(record.expiresAt) || now - Date.parse(record.lastSeenAt) >= this.idleMs) {
      await this.store.deleteSessions({ idHash: record.idHash }).catch(() => 0);
      return null;
    }
    return record;
  }

  /** Why a state change is refused as cross-site (its Origin or Referer is another site), or null. */
  crossSiteRefusal(ctx: Context): string | null {
    return crossOriginRefusal(this.options.hosts, ctx.headers);
  }

  private async checkCsrf(ctx: Context, expected: string): Promise<void> {
    const refusal = crossOriginRefusal(this.options.hosts, ctx.headers);
    if (refusal) throw new RefdeskError('csrf_failed', refusal);
    let sent = ctx.get('x-csrf-token');
    if (!sent) sent = String((await formBody(ctx))?._csrf ?? '');
    // A multipart form (a file upload without JavaScript) carries it in its action's query string:
    // its body is streamed to the route, so it cannot be read here first.
    if (!sent && ctx.is('multipart/form-data') && typeof ctx.query._csrf === 'string') sent = ctx.query._csrf;
    if (!sent || !safeEqual(sent, expected)) {
      throw new RefdeskError(
        'csrf_failed',
        'This change needs the session\'s CSRF token: send it as header X-CSRF-Token (or form field _csrf); it is the csrfToken of POST /api/auth/login and GET /api/auth/session.',
      );
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Sign-in, sign-out, credentials
  // ---------------------------------------------------------------------------------------------

  async login(ctx: Context, body: Record<string, unknown>): Promise<SessionView> {
    const refusal = crossOriginRefusal(this.options.hosts, ctx.headers);
    if (refusal) throw new RefdeskError('csrf_failed', refusal);
    const username = stringField(body, 'username', 64);
    const password = stringField(body, 'password', MAX_PASSWORD_LENGTH);
    const setupToken = body.setupToken === undefined ? undefined : stringField(body, 'setupToken', 200);
    const client = clientAddressOf(ctx);
    const key = `${username.toLowerCase()}|${client}`;
    const locked = this.limiter.lockedFor(key);
    if (locked > 0) {
      await this.onEvent(ctx, { action: 'auth.login', outcome: 'denied', actor: 'anonymous', target: null, details: { reason: 'locked' } });
      throw new ApiError('login_locked', `Too many failed sign-ins for this account from this address: try again in ${locked} seconds.`, { headers: { 'Retry-After': String(locked) } });
    }
    const account = await this.store.getAdminAccount();
    const factory = account === null;
    let ok: boolean;
    if (account === null) {
      const userOk = safeEqual(username, FACTORY_USERNAME);
      ok = safeEqual(password, FACTORY_PASSWORD) && userOk;
    } else {
      // An unknown username costs the same scrypt as a known one.
      const userOk = safeEqual(username, account.username);
      ok = (await verifyPassword(password, userOk ? account.passwordHash : await dummyHash())) && userOk;
    }
    // The audit log names the account only when it is this one: a password typed into the
    // username field must not end up in the log.
    const known = safeEqual(username, account?.username ?? FACTORY_USERNAME);
    if (!ok) return this.failLogin(ctx, key, known ? username : null, known ? 'wrong password' : 'unknown username', 'Wrong username or password.');
    if (factory && !isLocalRequest(ctx)) {
      const expected = await readSetupToken(this.options.dataDir);
      if (setupToken === undefined) {
        await this.onEvent(ctx, { action: 'auth.login', outcome: 'denied', actor: 'anonymous', target: username, details: { reason: 'factory credentials need the setup token' } });
        throw new RefdeskError(
          'forbidden',
          'The factory credentials sign in only from this machine (a loopback address, no proxy) or with the setup token: send it as "setupToken". The server printed it at its first start and keeps it in DATA_DIR/setup-token.',
        );
      }
      if (!expected || !safeEqual(setupToken, expected)) return this.failLogin(ctx, key, username, 'wrong setup token', 'Wrong setup token: it is in DATA_DIR/setup-token on the server.');
    }
    this.limiter.succeed(key);
    const id = randomBytes(32).toString('base64url');
    const now = this.now();
    const record: SessionRecord = {
      idHash: hashId(id),
      username,
      createdAt: new Date(now).toISOString(),
      lastSeenAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.absoluteMs).toISOString(),
      mustChangeCredentials: factory,
      client,
    };
    await this.store.createSession(record);
    // A previous session of this browser ends with the new sign-in.
    const previous = ctx.cookies.get(SESSION_COOKIE);
    if (previous && previous.length <= 200) await this.store.deleteSessions({ idHash: hashId(previous) });
    this.setCookie(ctx, id, this.absoluteMs);
    await this.onEvent(ctx, { action: 'auth.login', outcome: 'success', actor: `admin:${username}`, target: username, details: factory ? { factoryCredentials: true } : {} });
    return this.view(record, id);
  }

  private async failLogin(ctx: Context, key: string, username: string | null, reason: string, message: string): Promise<never> {
    const delay = this.limiter.fail(key);
    await this.onEvent(ctx, { action: 'auth.login', outcome: 'failure', actor: 'anonymous', target: username, details: { reason } });
    if (delay > 0) await this.sleep(delay);
    throw new RefdeskError('unauthorized', message);
  }

  view(record: SessionRecord, id: string): SessionView {
    return {
      username: record.username,
      csrfToken: csrfOf(id),
      mustChangeCredentials: record.mustChangeCredentials,
      expiresAt: record.expiresAt,
      idleExpiresAt: new Date(Math.min(Date.parse(record.expiresAt), Date.parse(record.lastSeenAt) + this.idleMs)).toISOString(),
    };
  }

  /** GET /api/auth/session: the signed-in session, or 401. */
  async current(ctx: Context): Promise<SessionView> {
    const info = await this.sessionOf(ctx);
    if (!info) throw new RefdeskError('unauthorized', 'Not signed in: POST /api/auth/login {username, password}.');
    const { record } = ctx.state.authSession as { record: SessionRecord };
    return this.view({ ...record, lastSeenAt: new Date(this.now()).toISOString() }, ctx.cookies.get(SESSION_COOKIE)!);
  }

  /** Ends this session, or every session with `all`. Without a valid session only the cookie is cleared. */
  async logout(ctx: Context, all: boolean): Promise<{ ended: number }> {
    const id = ctx.cookies.get(SESSION_COOKIE);
    const record = id ? await this.liveSession(id) : null;
    if (!record) {
      this.clearCookie(ctx);
      return { ended: 0 };
    }
    const info = await this.sessionOf(ctx); // the CSRF check of a state change
    const ended = await this.store.deleteSessions(all ? { exceptIdHash: null } : { idHash: record.idHash });
    this.clearCookie(ctx);
    await this.onEvent(ctx, { action: all ? 'auth.logout_all' : 'auth.logout', outcome: 'success', actor: `admin:${info!.username}`, target: info!.username, details: { ended } });
    return { ended };
  }

  /** POST /api/auth/credentials: a signed-in session changes the username and password. */
  async changeCredentials(ctx: Context, body: Record<string, unknown>): Promise<SessionView> {
    const info = await this.sessionOf(ctx);
    if (!info) throw new RefdeskError('unauthorized', 'Changing the credentials needs a signed-in session: POST /api/auth/login first.');
    const currentPassword = stringField(body, 'currentPassword', MAX_PASSWORD_LENGTH);
    const newPassword = stringField(body, 'newPassword', MAX_PASSWORD_LENGTH);
    const newUsername = body.newUsername === undefined ? undefined : stringField(body, 'newUsername', 64).trim();
    if (newUsername !== undefined && !USERNAME.test(newUsername)) {
      throw new RefdeskError('invalid_request', 'newUsername must be 1 to 64 letters, digits or . _ @ -.');
    }
    if (newPassword.length < MIN_PASSWORD_LENGTH) throw new RefdeskError('invalid_request', `newPassword must be at least ${MIN_PASSWORD_LENGTH} characters.`);
    if (newPassword === FACTORY_PASSWORD) throw new RefdeskError('invalid_request', 'newPassword must not be the factory password.');
    const client = clientAddressOf(ctx);
    const key = `${info.username.toLowerCase()}|${client}`;
    const locked = this.limiter.lockedFor(key);
    if (locked > 0) throw new ApiError('login_locked', `Too many failed attempts for this account from this address: try again in ${locked} seconds.`, { headers: { 'Retry-After': String(locked) } });
    const account = await this.store.getAdminAccount();
    const ok = account === null ? safeEqual(currentPassword, FACTORY_PASSWORD) : await verifyPassword(currentPassword, account.passwordHash);
    if (!ok) {
      const delay = this.limiter.fail(key);
      await this.onEvent(ctx, { action: 'auth.credentials', outcome: 'failure', actor: `admin:${info.username}`, target: info.username, details: { reason: 'wrong current password' } });
      if (delay > 0) await this.sleep(delay);
      throw new RefdeskError('unauthorized', 'currentPassword is wrong.');
    }
    this.limiter.succeed(key);
    const username = newUsername ?? account?.username ?? FACTORY_USERNAME;
    await this.store.setAdminAccount({ username, passwordHash: await hashPassword(newPassword), updatedAt: new Date(this.now()).toISOString() });
    await this.store.updateSession(info.id, { username, mustChangeCredentials: false });
    const ended = await this.store.deleteSessions({ exceptIdHash: info.id });
    await removeSetupToken(this.options.dataDir).catch(() => {});
    await this.onEvent(ctx, {
      action: 'auth.credentials',
      outcome: 'success',
      actor: `admin:${info.username}`,
      target: username,
      details: { usernameChanged: username !== info.username, otherSessionsEnded: ended },
    });
    const record = (await this.store.getSession(info.id))!;
    return this.view(record, ctx.cookies.get(SESSION_COOKIE)!);
  }

  // ---------------------------------------------------------------------------------------------
  // Cookie
  // ---------------------------------------------------------------------------------------------

  private setCookie(ctx: Context, id: string, maxAgeMs: number): void {
    const secure = isSecureRequest(ctx) ? '; Secure' : '';
    ctx.append('Set-Cookie', `${SESSION_COOKIE}=${id}; Path=/; Max-Age=${Math.floor(maxAgeMs / 1000)}; HttpOnly; SameSite=Strict${secure}`);
    ctx.set('Cache-Control', 'no-store');
  }

  private clearCookie(ctx: Context): void {
    const secure = isSecureRequest(ctx) ? '; Secure' : '';
    ctx.append('Set-Cookie', `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure}`);
  }
}

/** Over TLS, or behind a proxy that says the client used https. */
export function isSecureRequest(ctx: Context): boolean {
  if ((ctx.req.socket as { encrypted?: boolean }).encrypted) return true;
  if (ctx.state.forwardedHttps === true) return true;
  const proto = ctx.get('x-forwarded-proto').split(',')[0]?.trim().toLowerCase();
  return proto === 'https' || /(^|[;,\s])proto=https\b/i.test(ctx.get('forwarded'));
}

/** From a loopback socket with no forwarding header (so not relayed by a proxy on this machine). */
export function isLocalRequest(ctx: Context): boolean {
  if (!LOOPBACK_SOCKETS.has(ctx.req.socket.remoteAddress ?? '')) return false;
  return ctx.state.forwarded !== true && FORWARDING_HEADERS.every((h) => ctx.headers[h] === undefined);
}

function stringField(body: Record<string, unknown>, name: string, max: number): string {
  const v = body[name];
  if (v === undefined || v === null) throw new RefdeskError('invalid_request', `Missing required field "${name}".`);
  if (typeof v !== 'string') throw new RefdeskError('invalid_request', `Field "${name}" must be a string.`);
  if (v.length === 0) throw new RefdeskError('invalid_request', `Field "${name}" must not be empty.`);
  if (v.length > max) throw new RefdeskError('invalid_request', `Field "${name}" must be at most ${max} characters.`);
  return v;
}

/**
 * The fields of an application/x-www-form-urlencoded body (read once, kept on ctx.state), or
 * null for any other body.
 */
export async function formBody(ctx: Context): Promise<Record<string, string> | null> {
  if (ctx.state.formBody !== undefined) return ctx.state.formBody as Record<string, string> | null;
  if (!ctx.is('application/x-www-form-urlencoded')) {
    ctx.state.formBody = null;
    return null;
  }
  const raw = await readBody(ctx, 64 * 1024, 'The form');
  const fields: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) if (!(k in fields)) fields[k] = v;
  ctx.state.formBody = fields;
  return fields;
}
