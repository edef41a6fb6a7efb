import type Router from '@koa/router';
import type { UiDeps } from '../page-access.ts';

/** Placeholder until the libraries page lands (issue 20): registers nothing yet. */
export function registerLibrariesPages(_r: Router, _deps: UiDeps): void {}
