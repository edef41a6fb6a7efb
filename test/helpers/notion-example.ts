/**
 * The worked example examples/source-notion (issue 23 item 8) is a package of its own that
 * depends on `"refdesk": "file:../.."` and imports only `refdesk/core` and `refdesk/testing`.
 * `npm install` there would link node_modules/refdesk to this checkout, whose exports point at
 * the compiled build in dist/. The tests make that link themselves (no network, no install), to
 * the package as the kit's own test builds it (test/kit/helpers/kit-package.ts: the two entry
 * points compiled with declarations, this package.json's `exports`), so they need no `npm run
 * build` and never run against a stale dist/.
 */
import { lstatSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildKitPackage, ROOT } from '../kit/helpers/kit-package.ts';

export { ROOT };
export const NOTION_EXAMPLE = join(ROOT, 'examples', 'source-notion');

/** Builds refdesk/core and refdesk/testing and links them as examples/source-notion/node_modules/refdesk; returns the package folder (remove it when done). */
export function linkRefdeskIntoExample(): string {
  const pkg = buildKitPackage();
  const modules = join(NOTION_EXAMPLE, 'node_modules');
  const link = join(modules, 'refdesk');
  mkdirSync(modules, { recursive: true });
  if (lstatSync(link, { throwIfNoEntry: false })) rmSync(link, { recursive: true, force: true });
  symlinkSync(relative(modules, pkg), link, 'dir'); // what npm install does for a file: dependency
  return pkg;
}
