/**
 * The admin account's routes: POST /api/auth/login, POST /api/auth/logout ({"all": true} ends
 * every session), GET /api/auth/session, POST /api/auth/credentials. Bodies are JSON or
 * application/x-www-form-urlencoded (a plain HTML form).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { newRouter } from './router.ts';
import { parseJsonText, readBody } from '../body.ts';
import { RefdeskError } from '../../core/errors.ts';
import { objectBody, onlyFields, optionalBool, type Params } from '../api/params.ts';
import { formBody, type AuthService } from '../auth/sessions.ts';

/** The body's fields (JSON object or form); an empty body is {} when `allowEmpty`. */
async function fields(ctx: Context, allowEmpty = false): Promise<Params> {
  const form = await formBody(ctx);
  if (form) {
    const { _csrf: _ignored, ...rest } = form;
    return rest;
  }
  const type = ctx.request.type;
  if (type && type !== 'application/json') {
    throw new RefdeskError('invalid_request', `The body must be JSON ("Content-Type: application/json") or a form (application/x-www-form-urlencoded); got "${type.slice(0, 60)}".`);
  }
  const text = (await readBody(ctx, 64 * 1024)).toString('utf8');
  if (allowEmpty && text.trim() === '') return {};
  return objectBody(parseJsonText(text));
}

export function authRoutes(auth: AuthService): Router {
  const r = newRouter('/api/auth');
  r.post('/login', async (ctx) => {
    const body = await fields(ctx);
    onlyFields(body, ['username', 'password', 'setupToken']);
    const view = await auth.login(ctx, body);
    ctx.body = { ...view, message: view.mustChangeCredentials ? 'Signed in with the factory credentials: change them now (POST /api/auth/credentials); everything else answers 403 until then.' : `Signed in as ${view.username}.` };
  });
  r.post('/logout', async (ctx) => {
    const raw = await fields(ctx, true);
    onlyFields(raw, ['all']);
    const all = optionalBool(raw, 'all', false);
    const { ended } = await auth.logout(ctx, all);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ended, message: ended === 0 ? 'Not signed in; the session cookie was cleared.' : all ? `Signed out; ${ended} session(s) ended.` : 'Signed out.' };
  });
  r.get('/session', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await auth.current(ctx);
  });
  r.post('/credentials', async (ctx) => {
    // The session (and its CSRF token) first: a stranger learns nothing from the body checks.
    await auth.sessionOf(ctx);
    const body = await fields(ctx);
    onlyFields(body, ['currentPassword', 'newUsername', 'newPassword']);
    const view = await auth.changeCredentials(ctx, body);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ...view, message: `Credentials changed for ${view.username}; every other session was ended.` };
  });
  return r;
}
