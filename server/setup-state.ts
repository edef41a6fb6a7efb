/**
 * Whether the first-launch wizard of the web UI (/setup) was finished or skipped: the setting
 * `ui.setupWizard`, `{finishedAt}` or `{skippedAt}` (ISO times). Setup is done once the factory
 * credentials were changed and the wizard was finished or skipped (server/ui/page-access.ts
 * setupDone); GET /api/setup reports it as `wizard`.
 */
import type { Clock, Store } from '../core/contracts.ts';

/** The setting that records that the first-launch wizard was finished or skipped. */
export const SETUP_WIZARD_SETTING = 'ui.setupWizard';

export interface WizardState {
  /** True once the wizard was finished or skipped. */
  done: boolean;
  finishedAt?: string;
  skippedAt?: string;
}

export async function getWizardState(store: Store): Promise<WizardState> {
  const v = await store.getSetting(SETUP_WIZARD_SETTING);
  const o = v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const at = (x: unknown) => (typeof x === 'string' && x !== '' ? x : undefined);
  const finishedAt = at(o.finishedAt);
  const skippedAt = at(o.skippedAt);
  return { done: Boolean(finishedAt || skippedAt), ...(finishedAt ? { finishedAt } : {}), ...(skippedAt ? { skippedAt } : {}) };
}

/** Records that the wizard was finished (every step seen) or skipped (left early). */
export async function recordWizard(store: Store, clock: Clock, how: 'finished' | 'skipped'): Promise<void> {
  const now = clock.now().toISOString();
  await store.setSetting(SETUP_WIZARD_SETTING, how === 'finished' ? { finishedAt: now } : { skippedAt: now });
}
