/**
 * The first-launch setup wizard at /setup (docs/ui.md#setup-wizard). Step 1 changes the factory
 * credentials (required: AuthService.changeCredentials, as POST /api/auth/credentials); then the
 * LLM provider, the embedding provider, git tokens and anonymous permissions, each skippable, each
 * saved through changeSettings (as PATCH /api/settings: validated, audited). The provider steps
 * have "Test connection" (testProviderSettings, as POST /api/settings/test). Reaching the end
 * records the wizard as finished, "Skip the rest" as skipped (server/setup-state.ts); either way
 * setup is done and `/` leads to the libraries.
 *
 * GET /setup?step=<id>[&again=1] shows a step (`again=1` re-enters a finished wizard, from
 * Settings); POST /setup (urlencoded: _csrf, step, again, action=save|skip|test|skip-all, the
 * step's fields) acts and answers 303 to the next step, or the step again with the errors.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { getAnonymousPermissions, getSettingsView, ANONYMOUS_PERMISSIONS, type AnonymousPermission } from '../../../core/settings.ts';
import { MIN_PASSWORD_LENGTH } from '../../auth/passwords.ts';
import type { ProviderCheck } from '../../provider-check.ts';
import { changeSettings, settingsAuditOf, testProviderSettings } from '../../operator-actions.ts';
import { recordWizard } from '../../setup-state.ts';
import { formCaller, formError, formFields, type FormError } from '../forms.ts';
import { loginUrl, setupDone, uiUser, type UiDeps } from '../page-access.ts';
import { isHtmx, redirect, renderPage, type Flash, type UiUser } from '../render.ts';

type StepId = 'credentials' | 'llm' | 'embedding' | 'git' | 'anonymous';

interface Step {
  id: StepId;
  title: string;
  /** One line on what the step is for. */
  why: string;
}

export const SETUP_STEPS: readonly Step[] = [
  { id: 'credentials', title: 'Admin credentials', why: 'Replace the factory user name and password with your own. This step is required: nothing else works until it is done.' },
  { id: 'llm', title: 'LLM provider', why: 'A language model can write better snippet titles and descriptions and rerank answers. Without one, Refdesk works fully offline with lexical search.' },
  { id: 'embedding', title: 'Embedding provider', why: 'Embeddings add search by meaning beside the lexical search. Without one, search stays lexical (or uses the LLM provider\'s embeddings where it has them).' },
  { id: 'git', title: 'Git tokens', why: 'Tokens let Refdesk index private repositories on GitHub and GitLab. Public repositories need none; self-managed hosts are set in Settings.' },
  { id: 'anonymous', title: 'Anonymous permissions', why: 'What anyone may do without signing in. Each is Off by default; searching and reading documentation is always open.' },
];

const PERMISSION_LABELS: Record<AnonymousPermission, { label: string; hint: string }> = {
  parse: { label: 'Add libraries', hint: 'Anyone may add and parse a library (POST /api/parse, the Add library page).' },
  refresh: { label: 'Refresh libraries', hint: 'Anyone may re-read a library from its source.' },
  delete: { label: 'Delete libraries', hint: 'Anyone may delete a library or one of its versions.' },
  supportBundle: { label: 'Download a support bundle', hint: 'Anyone may download the diagnostics bundle (it never holds secrets).' },
};

const LLM_PROVIDERS = [
  ['', 'None: lexical search only, works offline'],
  ['custom', 'Custom (any OpenAI-compatible API)'],
  ['openai', 'OpenAI'],
  ['anthropic', 'Anthropic'],
  ['gemini', 'Google Gemini'],
] as const;

const EMBEDDING_PROVIDERS = [
  ['', 'None (the LLM provider\'s embeddings where it has them)'],
  ['openai', 'OpenAI (or an OpenAI-compatible embeddings API)'],
  ['gemini', 'Google Gemini'],
] as const;

/** The API's field names (as its error messages spell them) -> the form's fields and labels. */
const providerLabels = (s: 'llm' | 'embedding') => ({
  [`${s}.provider`]: { field: 'provider', label: 'Provider' },
  [`${s}.model`]: { field: 'model', label: 'Model' },
  [`${s}.baseUrl`]: { field: 'baseUrl', label: 'Base URL' },
  [`${s}.apiKey`]: { field: 'apiKey', label: 'API key' },
});
const LABELS: Record<StepId, Record<string, { field: string; label: string }>> = {
  credentials: {
    currentPassword: { field: 'currentPassword', label: 'Current password' },
    newUsername: { field: 'newUsername', label: 'New user name' },
    newPassword: { field: 'newPassword', label: 'New password' },
  },
  llm: providerLabels('llm'),
  embedding: providerLabels('embedding'),
  git: { 'git.githubToken': { field: 'githubToken', label: 'GitHub token' }, 'git.gitlabToken': { field: 'gitlabToken', label: 'GitLab token' } },
  anonymous: {},
};

function stepUrl(id: StepId, again: boolean, extra = ''): string {
  return `/setup?step=${id}${again ? '&again=1' : ''}${extra}`;
}

/** The step to show: the credentials while the factory ones are in use, else the one asked for (default: the first after them). */
function stepOf(user: UiUser, asked: unknown): Step {
  if (user.mustChangeCredentials) return SETUP_STEPS[0]!;
  return SETUP_STEPS.find((s) => s.id === asked && s.id !== 'credentials') ?? SETUP_STEPS[1]!;
}

function nextStep(step: Step): Step | undefined {
  return SETUP_STEPS[SETUP_STEPS.indexOf(step) + 1];
}

function flashOf(q: Record<string, unknown>): Flash | null {
  const named = (v: unknown) => SETUP_STEPS.find((s) => s.id === v);
  if (q.saved === 'credentials') return { kind: 'success', text: 'Credentials changed. Every other session of the account was ended.' };
  const saved = named(q.saved);
  if (saved) return { kind: 'success', text: `${saved.title}: saved.` };
  const skipped = named(q.skipped);
  if (skipped) return { kind: 'info', text: `${skipped.title}: skipped. You can set it later in Settings.` };
  return null;
}

interface StepState {
  /** The form's values to show (never a secret). */
  values: Record<string, unknown>;
  error?: FormError | null;
  /** The result of Test connection for this step's role. */
  test?: { check?: ProviderCheck; error?: string } | null;
}

/** What the step shows when first opened: the saved settings (secrets only as set / last 4). */
async function savedValues(deps: UiDeps, step: Step, user: UiUser): Promise<Record<string, unknown>> {
  if (step.id === 'credentials') return { newUsername: user.username };
  const view = (await getSettingsView(deps.kernel.store, deps.kernel.secrets)) as Record<string, any>;
  if (step.id === 'llm' || step.id === 'embedding') return { ...view[step.id], embeddingNote: view.effective?.embeddingNote ?? null };
  if (step.id === 'git') return { githubToken: view.git.githubToken, gitlabToken: view.git.gitlabToken };
  return { ...(await getAnonymousPermissions(deps.kernel.store)) };
}

/** The steps whose setting is in place (the credentials changed, a provider or token set). */
async function configuredSteps(deps: UiDeps, user: UiUser): Promise<Set<StepId>> {
  const done = new Set<StepId>();
  if (user.mustChangeCredentials) return done;
  const view = (await getSettingsView(deps.kernel.store, deps.kernel.secrets)) as Record<string, any>;
  done.add('credentials');
  if (view.llm.provider) done.add('llm');
  if (view.embedding.provider) done.add('embedding');
  if (view.git.githubToken.set || view.git.gitlabToken.set || view.git.hosts.length) done.add('git');
  return done;
}

async function renderStep(ctx: Context, deps: UiDeps, user: UiUser, step: Step, again: boolean, state: StepState, flash: Flash | null, status = 200): Promise<void> {
  const locked = user.mustChangeCredentials;
  const configured = await configuredSteps(deps, user);
  const steps = SETUP_STEPS.map((s, i) => ({
    id: s.id,
    title: s.title,
    // done: set (✓); open: passed without a value; the current one; todo: still ahead.
    state: s === step ? 'current' : configured.has(s.id) ? 'done' : i < SETUP_STEPS.indexOf(step) ? 'open' : 'todo',
    link: locked || s.id === 'credentials' || s === step ? null : stepUrl(s.id, again),
  }));
  const index = SETUP_STEPS.indexOf(step);
  const saved = step.id === 'llm' || step.id === 'embedding' || step.id === 'git' ? await savedValues(deps, step, user) : {};
  renderPage(
    ctx,
    'setup/wizard',
    { title: again ? 'Setup (again)' : 'Set up Refdesk', nav: 'setup', user, flash },
    {
      wizard: {
        steps,
        step,
        index: index + 1,
        count: SETUP_STEPS.length,
        last: index === SETUP_STEPS.length - 1,
        again,
        factory: locked,
        minPassword: MIN_PASSWORD_LENGTH,
        providers: step.id === 'llm' ? LLM_PROVIDERS : EMBEDDING_PROVIDERS,
        permissions: ANONYMOUS_PERMISSIONS.map((p) => ({ id: p, ...PERMISSION_LABELS[p] })),
        // Secrets: whether each is set, from the store, whatever the form sent.
        secrets: { apiKey: saved.apiKey ?? null, githubToken: saved.githubToken ?? null, gitlabToken: saved.gitlabToken ?? null },
        values: state.values,
        error: state.error ?? null,
        fieldErrors: state.error?.fields ?? {},
        test: state.test ?? null,
      },
    },
    status,
  );
}

/** The PATCH /api/settings body a step's form stands for (blank fields: unset; a blank key keeps the saved one). */
function patchOf(step: Step, form: Record<string, string>): Record<string, unknown> {
  const text = (name: string) => (form[name] ?? '').trim();
  if (step.id === 'llm' || step.id === 'embedding') {
    if (!text('provider')) return { [step.id]: null };
    return {
      [step.id]: {
        provider: text('provider'),
        model: text('model') || null,
        baseUrl: text('baseUrl') || null,
        ...(text('apiKey') ? { apiKey: text('apiKey') } : {}),
      },
    };
  }
  if (step.id === 'git') {
    const git: Record<string, string> = {};
    for (const f of ['githubToken', 'gitlabToken']) if (text(f)) git[f] = text(f);
    return { git };
  }
  return { anonymous: Object.fromEntries(ANONYMOUS_PERMISSIONS.map((p) => [p, form[p] === 'on' || form[p] === '1'])) };
}

/** The form's values to show again after an error: everything but secrets. */
function keptValues(step: Step, form: Record<string, string>): Record<string, unknown> {
  if (step.id === 'anonymous') return Object.fromEntries(ANONYMOUS_PERMISSIONS.map((p) => [p, form[p] === 'on' || form[p] === '1']));
  const { provider = '', model = '', baseUrl = '', newUsername = '' } = form;
  return { provider, model, baseUrl, newUsername };
}

export function registerSetupPages(r: Router, deps: UiDeps): void {
  const settingsAudit = settingsAuditOf(deps.kernel);

  r.get('/setup', async (ctx) => {
    const user = await uiUser(ctx, deps);
    if (!user) {
      redirect(ctx, loginUrl(ctx));
      return;
    }
    const again = ctx.query.again === '1';
    if (!user.mustChangeCredentials && !again && (await setupDone(deps))) {
      redirect(ctx, '/libraries');
      return;
    }
    const step = stepOf(user, ctx.query.step);
    await renderStep(ctx, deps, user, step, again, { values: await savedValues(deps, step, user) }, flashOf(ctx.query));
  });

  r.post('/setup', async (ctx) => {
    const form = await formFields(ctx);
    const caller = await formCaller(ctx, deps);
    if (!caller) return;
    const user: UiUser = { username: caller.session.username, csrfToken: caller.session.csrfToken, mustChangeCredentials: caller.session.mustChangeCredentials };
    const again = form.again === '1';
    const step = stepOf(user, form.step);
    const action = form.action ?? 'save';
    const goOn = async (how: 'saved' | 'skipped') => {
      const next = nextStep(step);
      if (next) return redirect(ctx, stepUrl(next.id, again, `&${how}=${step.id}`));
      await recordWizard(deps.kernel.store, deps.kernel.clock, 'finished');
      redirect(ctx, '/libraries');
    };

    if (step.id === 'credentials') {
      const fail = (error: FormError) => renderStep(ctx, deps, user, step, again, { values: keptValues(step, form), error }, null, error.status);
      if ((form.newPassword ?? '') !== (form.repeatPassword ?? '')) {
        return fail({ text: 'The two new passwords differ: type the same new password twice.', status: 400, fields: { repeatPassword: 'Does not match the new password.' } });
      }
      const body: Record<string, unknown> = { currentPassword: form.currentPassword ?? '', newPassword: form.newPassword ?? '' };
      if (form.newUsername?.trim()) body.newUsername = form.newUsername;
      try {
        await deps.auth.changeCredentials(ctx, body);
      } catch (e) {
        return fail(formError(e, LABELS.credentials));
      }
      return redirect(ctx, stepUrl('llm', again, '&saved=credentials'));
    }

    // The settings steps need an admin, as PATCH /api/settings does.
    const admin = await deps.access.requireAdmin(ctx, 'Changing the settings');
    if (action === 'skip-all') {
      await recordWizard(deps.kernel.store, deps.kernel.clock, 'skipped');
      return redirect(ctx, '/libraries');
    }
    if (action === 'skip') return goOn('skipped');
    const testing = action === 'test' && (step.id === 'llm' || step.id === 'embedding');
    try {
      await changeSettings(deps.kernel, settingsAudit, admin, patchOf(step, form));
    } catch (e) {
      const error = formError(e, LABELS[step.id]);
      // htmx swaps only a 2xx answer: Test connection shows the refusal in its status region.
      const status = testing && isHtmx(ctx) ? 200 : error.status;
      return renderStep(ctx, deps, user, step, again, { values: keptValues(step, form), error, test: testing ? { error: error.text } : null }, null, status);
    }
    if (!testing) return goOn('saved');
    const result = await testProviderSettings(deps.kernel, 10_000).catch((e) => ({ error: formError(e, LABELS[step.id]).text }));
    const check = 'error' in result ? undefined : result[step.id as 'llm' | 'embedding'];
    const test = 'error' in result ? { error: result.error as string } : { check };
    await renderStep(ctx, deps, user, step, again, { values: await savedValues(deps, step, user), test }, { kind: 'success', text: `${step.title}: saved.` });
  });
}
