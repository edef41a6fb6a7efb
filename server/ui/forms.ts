/**
 * What the UI's form posts share: the caller of a post (its CSRF check done by the session
 * module, as for the API), the posted fields, a refused post answered with a page, and an API
 * error message turned into errors beside the fields it names.
 */
import type { Context } from 'koa';
import { RefdeskError } from '../../core/errors.ts';
import type { Caller } from '../access.ts';
import { formBody } from '../auth/sessions.ts';
import type { UiDeps } from './page-access.ts';
import { loginUrl } from './page-access.ts';
import { redirect, renderPage } from './render.ts';

/** The fields of an urlencoded form post ({} for any other body). */
export async function formFields(ctx: Context): Promise<Record<string, string>> {
  return (await formBody(ctx)) ?? {};
}

/**
 * The signed-in session calling a form post. A post that fails the CSRF checks (no `_csrf`, a
 * wrong one, another origin) gets a 403 page and changes nothing; an ended session goes to
 * `signInAgain` (default /login?next=<this page>). Returns undefined when the answer was given: the handler stops.
 */
export async function formCaller(ctx: Context, deps: UiDeps, signInAgain = loginUrl(ctx)): Promise<Extract<Caller, { kind: 'session' }> | undefined> {
  let caller: Caller;
  try {
    caller = await deps.access.caller(ctx);
  } catch (e) {
    if (e instanceof RefdeskError && e.code === 'csrf_failed') {
      renderRefused(ctx, 'This form was refused: it did not carry this session\'s security token, or it came from another site. Nothing was changed. Go back, reload the page and try again.');
      return undefined;
    }
    if (e instanceof RefdeskError && e.code === 'unauthorized') {
      redirect(ctx, signInAgain);
      return undefined;
    }
    throw e;
  }
  if (caller.kind !== 'session') {
    redirect(ctx, signInAgain);
    return undefined;
  }
  return caller;
}

/** A 403 page for a refused form post. */
export function renderRefused(ctx: Context, text: string): void {
  renderPage(ctx, 'message', { title: 'Form refused', user: null, flash: { kind: 'error', text } }, { message: 'Reload the page you came from and send the form again.', link: { href: '/', text: 'Back to Refdesk' } }, 403);
}

/** What an error shows: its text, and the part of it that belongs beside each field. */
export interface FormError {
  text: string;
  /** The HTTP status of the error (400, 401, 429...). */
  status: number;
  fields: Record<string, string>;
}

/**
 * Splits an API error message into errors beside the fields it names. `labels` maps the API's
 * field names (as its messages spell them: `newPassword`, `llm.baseUrl`) to the form's field
 * name and label; the message's field names are replaced by the labels. Anything but a
 * RefdeskError (a bug, not bad input) is thrown on to the error middleware.
 */
export function formError(e: unknown, labels: Record<string, { field: string; label: string }>): FormError {
  if (!(e instanceof RefdeskError)) throw e;
  const raw = e.message;
  const human = (s: string) => {
    let out = s;
    for (const [api, { label }] of Object.entries(labels)) out = out.split(`"${api}"`).join(label).split(api).join(label);
    return out;
  };
  const fields: Record<string, string> = {};
  const parts = raw.replace(/^Invalid settings: /, '').replace(/\.$/, '').split('; ');
  for (const part of parts) {
    const hit = Object.keys(labels)
      .sort((a, b) => b.length - a.length)
      .find((api) => part.startsWith(`${api}:`) || part.startsWith(`${api} `) || part.includes(`"${api}"`));
    if (!hit) continue;
    const field = labels[hit]!.field;
    fields[field] = fields[field] ? `${fields[field]}; ${human(part)}` : human(part);
  }
  return { text: human(raw), status: e.status, fields };
}
