import type Router from '@koa/router';
import type { UiDeps } from '../page-access.ts';

/** Placeholder until the settings page lands (issue 20): registers nothing yet. */
export function registerSettingsPages(_r: Router, _deps: UiDeps): void {}
