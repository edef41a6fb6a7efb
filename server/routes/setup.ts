import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import { getStoredProviderSettings } from '../../core/settings.ts';
import type { Access } from '../access.ts';
import { getWizardState } from '../setup-state.ts';

export interface SetupStep {
  id: 'credentials' | 'provider' | 'git-token';
  done: boolean;
  title: string;
  description: string;
}

export interface SetupRouteOptions {
  /**
   * Whether the admin account's factory credentials were changed (the auth module's store
   * knows). Without it the answer relies on the caller: a session signed in with the factory
   * credentials means not yet; any other admin means done.
   */
  credentialsChanged?: () => Promise<boolean>;
}

/**
 * GET /api/setup: what a first-launch UI still has to ask for, `{done, steps: [{id, done, title,
 * description}], wizard: {done, finishedAt?, skippedAt?}}` (`wizard`: the web UI's /setup wizard was
 * finished or skipped). For admins, and for a session that still has to change the factory
 * credentials (the first thing the UI shows it). Names what is missing, never a value.
 */
export function setupRoutes(kernel: Kernel, access: Access, opts: SetupRouteOptions = {}): Router {
  const r = newRouter();
  r.get('/api/setup', async (ctx) => {
    const caller = await access.caller(ctx);
    if (caller.kind !== 'session') await access.requireAdmin(ctx, 'Reading the setup state');
    const credentialsDone = opts.credentialsChanged ? await opts.credentialsChanged() : !(caller.kind === 'session' && caller.session.mustChangeCredentials);
    const { llm, embedding, git } = await getStoredProviderSettings(kernel.store);
    const providerDone = Boolean(llm.provider || embedding.provider);
    const gitDone = Boolean(git.githubToken || git.gitlabToken || (git.hosts ?? []).some((h) => h.token));
    const steps: SetupStep[] = [
      {
        id: 'credentials',
        done: credentialsDone,
        title: 'Change the admin credentials',
        description: 'The admin account still has the factory user name and password: choose your own (POST /api/auth/credentials). Until then only this change is allowed.',
      },
      {
        id: 'provider',
        done: providerDone,
        title: 'Choose a model provider',
        description: 'Set an LLM provider (custom OpenAI-compatible, OpenAI, Anthropic or Gemini) and, if you like, an embedding provider (PATCH /api/settings, then POST /api/settings/test). Without one, search is lexical and works offline.',
      },
      {
        id: 'git-token',
        done: gitDone,
        title: 'Add a git token',
        description: 'To index private repositories, give a GitHub or GitLab token, or name a self-managed GitHub/GitLab host with its token (PATCH /api/settings, section git). Public repositories need none.',
      },
    ];
    ctx.body = { done: steps.every((s) => s.done), steps, wizard: await getWizardState(kernel.store) };
  });
  return r;
}
