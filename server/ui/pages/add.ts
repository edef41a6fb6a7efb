/**
 * /add: one form per source kind (docs/ui.md "Add a library"). The forms are built from the
 * kinds GET /api/sources lists (server/routes/sources.ts) and their add-payload schemas
 * (server/ui/schema-form.ts), so a third-party source gets a form too; a post calls the same
 * functions as the API routes and then sends the browser to /libraries/{libraryId}.
 *
 * Who: a signed-in admin gets every kind (as POST /api/admin/add, /api/libraries/upload and the
 * OpenAPI upload take them); a signed-out visitor, while the anonymous `parse` permission is On,
 * gets what the API lets anyone do: a library by its address (POST /api/parse, the source that
 * declares parseAddress: git's repository URL) and an upload (POST /api/libraries/upload). Posts are CSRF-checked: a session's token (`_csrf`, or
 * `?_csrf=` on a multipart form), or for a signed-out visitor the form token of form-token.ts.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { JsonSchema } from '../../../core/define.ts';
import { RefdeskError, isRefdeskError } from '../../../core/errors.ts';
import { validate } from '../../../core/validate.ts';
import { getAnonymousPermissions } from '../../../core/settings.ts';
import { formBody } from '../../auth/sessions.ts';
import { sourceKinds } from '../../routes/sources.ts';
import { loadedCapable } from '../../source-capabilities.ts';
import { parseRepository } from '../../routes/parse.ts';
import { uploadDocumentation } from '../../routes/upload.ts';
import { addUploadedSpec } from '../../routes/add.ts';
import { guardPage, uiUser, type UiDeps } from '../page-access.ts';
import { jobUrls, readableJob } from '../../job-access.ts';
import { isHtmx, redirect, renderPage, type UiUser } from '../render.ts';
import { anonymousFormToken, anonymousFormTokenValid } from '../form-token.ts';
import { keptValues, problemsByField, readSchemaForm, schemaFields, type FormField } from '../schema-form.ts';

type FormKind = 'spec' | 'address' | 'upload' | 'spec-file';

/** One tab of the page. */
interface AddKind {
  /** `?kind=` (the source kind, or `<kind>-file` for its specification-file form, e.g. `openapi-file`). */
  id: string;
  title: string;
  description: string;
  form: FormKind;
  /** The source kind it adds. */
  source: string;
  /** The schema its fields come from. */
  schema: JsonSchema;
  /** Prefix of the schema's field names ('spec' for a source spec). */
  prefix: string;
  /** Top-level properties left out of the form. */
  omit: string[];
}

const str = (title: string, description: string, extra: Record<string, unknown> = {}) => ({ type: 'string', title, description, ...extra });

/** The library's own fields of a spec form (POST /api/admin/add's id, title, description). */
const LIBRARY_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    title: str('Title', "Shown in lists and answers; the source's own name for the project when empty.", { maxLength: 200 }),
    description: str('Description', 'A line on what the library is.', { maxLength: 2000 }),
    id: str('Library ID', 'Leave empty to derive it from the source (e.g. /owner/repo, /npm/<name>).', { maxLength: 500 }),
  },
};

/** POST /api/libraries/upload's fields (the files come from the file inputs). */
const UPLOAD_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: str('Name', 'The library becomes /docs/<name>: letters, digits, ".", "_" and "-". Uploading again under the same name replaces its documentation.', { maxLength: 100 }),
    version: str('Version', 'Optional: a version of the library, e.g. 2.1.'),
    title: str('Title', 'Optional: shown in lists and answers.', { maxLength: 200 }),
    description: str('Description', 'Optional: a line on what the library is.', { maxLength: 2000 }),
  },
};

/** The specification-file upload's fields besides the file (`libraryTitle`, `force`), for a source of that ID prefix. */
const specFileSchema = (idPrefix: string): JsonSchema => ({
  type: 'object',
  properties: {
    libraryTitle: str('Title', `Names the library (/${idPrefix}/<title>); the file name when empty.`, { maxLength: 200 }),
    force: { type: 'boolean', title: 'Replace an existing specification', description: 'When a library of that name exists, replace its specification.' },
  },
});

/** POST /api/parse's one field, labelled as the source declaring parseAddress says. */
const addressSchema = (p: { title: string; description: string }): JsonSchema => ({
  type: 'object',
  required: ['url'],
  properties: { url: str(p.title, p.description, { maxLength: 2000 }) },
});

/**
 * The tabs a caller may use, in the config's order: every kind for an admin; for a signed-out
 * visitor, uploads and the kind POST /api/parse adds, by its address. A kind added by uploading
 * files (`addPayload: 'files'`) gets the upload form; the kind serving POST /api/parse (the first
 * declaring `parseAddress`) its address form; the kind serving the specification-file upload (the
 * first declaring `specUpload`) also gets that route's file form. The kinds and forms come from
 * the loaded sources' declarations: no list of kinds here.
 */
function kindsFor(deps: UiDeps, user: UiUser | null): AddKind[] {
  const kinds: AddKind[] = [];
  const parser = loadedCapable(deps.kernel, 'parseAddress');
  const specFiles = loadedCapable(deps.kernel, 'specUpload');
  for (const s of sourceKinds(deps.kernel)) {
    const base = { title: s.title, description: s.description, source: s.kind, omit: [] as string[] };
    if (s.addPayload === 'files') {
      kinds.push({ ...base, id: s.kind, description: 'Markdown and other documentation files, a folder of them, or one .zip / .tar.gz / .tar archive.', form: 'upload', schema: UPLOAD_SCHEMA, prefix: '' });
    } else if (!user) {
      if (s.kind === parser?.kind) kinds.push({ ...base, id: s.kind, form: 'address', schema: addressSchema(parser.def.parseAddress), prefix: '' });
    } else if (s.kind === specFiles?.kind) {
      const up = specFiles.def.specUpload;
      kinds.push({ ...base, id: s.kind, title: up.specFormTitle ?? s.title, form: 'spec', schema: s.specSchema, prefix: 'spec', omit: [up.specField] });
      kinds.push({ ...base, id: `${s.kind}-file`, title: up.fileTitle, description: up.fileDescription, form: 'spec-file', schema: specFileSchema(s.idPrefix ?? s.kind), prefix: '' });
    } else {
      kinds.push({ ...base, id: s.kind, form: 'spec', schema: s.specSchema, prefix: 'spec' });
    }
  }
  // In the config's order (GET /api/sources'): no list of kinds here.
  return kinds;
}

interface FormState {
  values?: Record<string, string>;
  errors?: Record<string, string>;
  /** Why the post was refused (shown above the form). */
  refusal?: string;
}

/** The rendered fields, nested ones included. */
function flatten(fields: FormField[]): FormField[] {
  return fields.flatMap((f) => [f, ...flatten(f.children)]);
}

function renderAdd(ctx: Context, deps: UiDeps, user: UiUser | null, kinds: AddKind[], kind: AddKind, state: FormState = {}, status = 200): void {
  const opts = { values: state.values, errors: state.errors };
  const fields = schemaFields(kind.schema, kind.prefix, { ...opts, omit: kind.omit });
  const libraryFields = kind.form === 'spec' ? schemaFields(LIBRARY_SCHEMA, '', opts) : [];
  const all = flatten([...fields, ...libraryFields]);
  // The error summary (role=alert, read out when it appears): each field's problem links to it.
  const fieldProblems = all.filter((f) => f.error).map((f) => ({ id: f.id, label: f.label, message: f.error }));
  const known = new Set(all.map((f) => f.name));
  const other = Object.entries(state.errors ?? {})
    .filter(([name]) => !known.has(name))
    .map(([, message]) => message);
  const summary = [state.refusal, ...other].filter(Boolean).join(' ');
  const csrf = user ? user.csrfToken : anonymousFormToken(ctx, deps.kernel.secrets);
  const multipart = kind.form === 'upload' || kind.form === 'spec-file';
  const action = `/add?kind=${encodeURIComponent(kind.id)}${multipart ? `&_csrf=${encodeURIComponent(csrf)}` : ''}`;
  const data = { kinds, kind, fields, libraryFields, csrf, action, multipart, signedOut: !user, summary, fieldProblems };
  // An htmx post swaps the answer in only on 2xx: a form with its errors is a 200 there.
  renderPage(ctx, 'add/index', { title: 'Add a library', nav: 'add', user }, data, isHtmx(ctx) ? 200 : status);
}

/** The `?kind=` of a request ('' when absent). */
const kindParam = (ctx: Context): string => (typeof ctx.query.kind === 'string' ? ctx.query.kind : '');

/** The tab of `?kind=`, the first when absent; null for a kind this caller has no form for. */
function chosenKind(ctx: Context, kinds: AddKind[]): AddKind | null {
  const q = kindParam(ctx);
  return q ? (kinds.find((k) => k.id === q) ?? null) : (kinds[0] ?? null);
}

function noSuchKind(ctx: Context, user: UiUser | null, kinds: AddKind[]): void {
  const q = kindParam(ctx);
  const message = kinds.length === 0 ? 'No source that you may add from is enabled on this server.' : `There is no "${q.slice(0, 60)}" form here${user ? '' : ' for a signed-out visitor'}: choose one of ${kinds.map((k) => k.title).join(', ')}.`;
  renderPage(ctx, 'message', { title: 'Add a library', nav: 'add', user }, { message, link: { href: user ? '/add' : '/login?next=%2Fadd', text: user ? 'All the add forms' : 'Sign in' } }, 404);
}

/** The form's own page, `/add?kind=<kind>` (never with a multipart action's ?_csrf=). */
function formPath(ctx: Context): string {
  return `/add${kindParam(ctx) ? `?kind=${encodeURIComponent(kindParam(ctx))}` : ''}`;
}

/**
 * Who posts: the admin session (its CSRF token checked by the session module), or a signed-out
 * visitor with the form token while anonymous parse is On. Undefined: answered already.
 */
async function poster(ctx: Context, deps: UiDeps): Promise<UiUser | null | undefined> {
  // Back to the form after sign-in.
  const toLogin = () => redirect(ctx, `/login?next=${encodeURIComponent(formPath(ctx))}`);
  let caller;
  try {
    caller = await deps.access.caller(ctx);
  } catch (e) {
    if (isRefdeskError(e) && e.code === 'unauthorized') {
      toLogin();
      return undefined;
    }
    throw e; // csrf_failed: the post handler answers with a page
  }
  if (caller.kind === 'session') {
    if (caller.session.mustChangeCredentials) {
      redirect(ctx, '/setup');
      return undefined;
    }
    return { username: caller.session.username, csrfToken: caller.session.csrfToken, mustChangeCredentials: false };
  }
  if (caller.kind === 'key') throw new RefdeskError('invalid_request', 'The add page is for browsers; with an API key, use POST /api/admin/add, /api/parse or /api/libraries/upload.');
  if (!(await getAnonymousPermissions(deps.kernel.store)).parse) {
    toLogin();
    return undefined;
  }
  const refusal = deps.auth.crossSiteRefusal(ctx);
  if (refusal) throw new RefdeskError('csrf_failed', refusal);
  const sent = ctx.is('multipart/form-data') ? ctx.query._csrf : (await formBody(ctx))?._csrf;
  if (!anonymousFormTokenValid(ctx, deps.kernel.secrets, typeof sent === 'string' ? sent : undefined)) {
    throw new RefdeskError('csrf_failed', 'This form needs its form token (the _csrf field of the page, with the cookie the page set): open /add again and send the form from there.');
  }
  return null;
}

/** What an added library's job answer holds (parse and upload answers: queuedJobAnswer). */
interface Added {
  libraryId: string;
  /** The API's 202 answer, with the job's status/log URLs (their token lets a signed-out starter follow it). */
  answer?: Record<string, unknown>;
}

/** Adds what a posted form describes. Throws RefdeskError for anything wrong (with `state.errors` by field when fields are). */
async function submit(ctx: Context, deps: UiDeps, kind: AddKind, state: FormState): Promise<Added> {
  const { kernel, service, jobs, access } = deps;
  const what = `Adding a library (${kind.title})`;
  if (kind.form === 'upload' || kind.form === 'address') await access.requirePermission(ctx, 'parse', what);
  else await access.requireAdmin(ctx, what);
  access.requireLicence(what);
  if (kind.form === 'upload') {
    try {
      const answer = await uploadDocumentation(ctx, kernel, service, jobs, { browserForm: true });
      return { libraryId: String(answer.libraryId), answer };
    } finally {
      state.values = { ...(ctx.state.uploadFields as Record<string, string> | undefined) };
    }
  }
  if (kind.form === 'spec-file') {
    await service.specUploadSource();
    const added = await addUploadedSpec(ctx, { dataDir: kernel.env.dataDir, maxUploadBytes: kernel.config.api.maxOpenApiUploadBytes }, (upload) => {
      state.values = upload.title ? { libraryTitle: upload.title } : {};
      return service.addOpenApiUpload(upload);
    });
    return { libraryId: added.libraryName };
  }
  const form = await formBody(ctx);
  if (!form) throw new RefdeskError('invalid_request', 'Send the form as application/x-www-form-urlencoded.');
  state.values = keptValues(kind.schema, kind.prefix, form);
  const read = readSchemaForm(kind.schema, kind.prefix, form);
  for (const key of kind.omit) delete read.value[key];
  if (kind.form === 'address') {
    if (!read.value.url) state.errors = { url: 'Required.' };
    else {
      const answer = await parseRepository(kernel, service, jobs, String(read.value.url));
      return { libraryId: String(answer.libraryId), answer };
    }
  } else {
    const lib = readSchemaForm(LIBRARY_SCHEMA, '', form).value as { title?: string; description?: string; id?: string };
    // The same checks addLibrary makes, first by field so each message stands beside its field.
    const problems = Object.keys(read.errors).length ? {} : problemsByField(validate(kind.schema, structuredClone(read.value), kind.prefix));
    state.errors = { ...read.errors, ...problems };
    if (Object.keys(state.errors).length === 0) {
      const { library } = await service.addFromSpec({ source: kind.source, spec: read.value, ...lib });
      return { libraryId: library.id };
    }
  }
  throw new RefdeskError('invalid_request', 'some fields need fixing (see the messages beside them).');
}

export function registerAddPages(r: Router, deps: UiDeps): void {
  r.get('/add', async (ctx) => {
    const user = await guardPage(ctx, deps, { anonymous: 'parse' });
    if (user === undefined) return;
    const kinds = kindsFor(deps, user);
    const kind = chosenKind(ctx, kinds);
    if (!kind) return noSuchKind(ctx, user, kinds);
    renderAdd(ctx, deps, user, kinds, kind);
  });

  // What a signed-out visitor sees after adding: the job, read with its status token.
  r.get('/add/queued', async (ctx) => {
    const jobId = typeof ctx.query.job === 'string' ? ctx.query.job : '';
    let job;
    try {
      job = await readableJob(ctx, deps.kernel.store, deps.access, jobId);
    } catch (e) {
      if (!isRefdeskError(e) || e.status >= 500) throw e;
      renderPage(ctx, 'message', { title: 'Library queued', nav: 'add', user: await uiUser(ctx, deps) }, { message: `This job cannot be shown: ${e.message}`, link: { href: '/add', text: 'Add a library' } }, e.status);
      return;
    }
    const answer = { libraryId: job.libraryId, jobId: job.id, state: job.state, error: job.error, ...(await jobUrls(deps.kernel.store, job.id)) };
    renderPage(ctx, 'add/queued', { title: 'Library queued', nav: 'add', user: await uiUser(ctx, deps) }, { answer, self: ctx.originalUrl });
  });

  r.post('/add', async (ctx) => {
    let user: UiUser | null | undefined;
    try {
      user = await poster(ctx, deps);
    } catch (e) {
      if (!isRefdeskError(e) || e.code !== 'csrf_failed') throw e;
      // A page answer, not JSON: a stale or foreign form is re-opened from the link.
      renderPage(ctx, 'message', { title: 'Add a library', nav: 'add', user: null, flash: { kind: 'error', text: 'Not added: the form could not be checked (csrf_failed).' } }, { message: e.message, link: { href: formPath(ctx), text: 'Open the form again' } }, isHtmx(ctx) ? 200 : e.status);
      return;
    }
    if (user === undefined) return;
    const kinds = kindsFor(deps, user);
    const kind = chosenKind(ctx, kinds);
    if (!kind) return noSuchKind(ctx, user, kinds);
    const state: FormState = {};
    try {
      const added = await submit(ctx, deps, kind, state);
      if (user === null && added.answer) {
        // A signed-out starter cannot open the library's page (admins only): it follows the
        // build by the job's status token, as the API's starters do (server/job-access.ts).
        const token = new URL(String(added.answer.statusUrl), 'http://x').searchParams.get('token') ?? '';
        redirect(ctx, `/add/queued?job=${encodeURIComponent(String(added.answer.jobId))}&token=${encodeURIComponent(token)}`);
        return;
      }
      redirect(ctx, `/libraries${added.libraryId}`);
    } catch (e) {
      if (!isRefdeskError(e) || e.status >= 500) throw e;
      if (e.code === 'csrf_failed' || e.code === 'unauthorized') throw e;
      renderAdd(ctx, deps, user, kinds, kind, { ...state, refusal: `Not added: ${e.message}` }, e.status);
    }
  });
}
