import type Router from '@koa/router';
import type { UiDeps } from '../page-access.ts';

/** Placeholder until the library page lands (issue 20): registers nothing yet. */
export function registerLibraryPages(_r: Router, _deps: UiDeps): void {}
