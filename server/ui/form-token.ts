/**
 * CSRF protection for the forms a signed-out visitor may post (the add page while the anonymous
 * `parse` permission is On). There is no session, so there is no session token: the page sets a
 * random nonce in the `refdesk_form` cookie (HttpOnly, SameSite=Strict, Path=/add) and puts the
 * nonce sealed with the server's secret key (core/secrets.ts, AES-GCM) in the form's `_csrf`.
 * A post must bring both, the token must open to the cookie's nonce, and its Origin/Referer (when
 * sent) must be this server: another site can neither read the cookie nor forge a token for it,
 * and a cookie planted from a sibling host is useless without a token sealed with our key.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { isSealed, type SecretBox } from '../../core/secrets.ts';
import { isSecureRequest } from '../auth/sessions.ts';
import { safeEqual } from '../auth/passwords.ts';

export const FORM_COOKIE = 'refdesk_form';
const NONCE = /^[A-Za-z0-9_-]{32,64}$/;

/** The `_csrf` value for a signed-out visitor's form; sets the cookie when the request has none. */
export function anonymousFormToken(ctx: Context, box: SecretBox): string {
  let nonce = ctx.cookies.get(FORM_COOKIE);
  if (!nonce || !NONCE.test(nonce)) {
    nonce = randomBytes(32).toString('base64url');
    const secure = isSecureRequest(ctx) ? '; Secure' : '';
    ctx.append('Set-Cookie', `${FORM_COOKIE}=${nonce}; Path=/add; HttpOnly; SameSite=Strict${secure}`);
  }
  return box.seal(nonce);
}

/** Whether a signed-out visitor's post carries a token that opens to its cookie's nonce. */
export function anonymousFormTokenValid(ctx: Context, box: SecretBox, sent: string | undefined): boolean {
  const nonce = ctx.cookies.get(FORM_COOKIE);
  if (!nonce || !NONCE.test(nonce) || !sent || sent.length > 500 || !isSealed(sent)) return false;
  try {
    return safeEqual(box.open(sent), nonce);
  } catch {
    return false;
  }
}
