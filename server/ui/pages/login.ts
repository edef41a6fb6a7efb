import type Router from '@koa/router';
import type { UiDeps } from '../page-access.ts';

/** Placeholder until the login page lands (issue 20): registers nothing yet. */
export function registerLoginPages(_r: Router, _deps: UiDeps): void {}
