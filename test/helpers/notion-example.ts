/**
 * The worked example examples/source-notion (issue 23 item 8) is a package of its own that
 * depends on `"refdesk": "file:../.."` and imports only `refdesk/core` and `refdesk/testing`.
 * `npm install` there would link node_modules/refdesk to this checkout; the tests make that link
 * themselves (no network, no install). While this checkout's package.json has no `./core` export
 * yet (the kit's package exports come on another branch), the link is a small bridge package
 * whose two entry points re-export the sources instead (core/define.ts, core/di-tokens.ts,
 * core/errors.ts, core/contracts.ts' types; core/testing/index.ts).
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const NOTION_EXAMPLE = join(ROOT, 'examples', 'source-notion');

/** Whether this checkout's package.json exports `refdesk/core` (the compiled entry points). */
export function exportsCore(): boolean {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports?: Record<string, unknown> };
  return !!pkg.exports && Object.hasOwn(pkg.exports, './core');
}

/** Makes examples/source-notion/node_modules/refdesk resolve to this checkout; says which way. */
export function linkRefdeskIntoExample(): 'package' | 'bridge' {
  const modules = join(NOTION_EXAMPLE, 'node_modules');
  const link = join(modules, 'refdesk');
  mkdirSync(modules, { recursive: true });
  const current = existsSync(link) || lstatSync(link, { throwIfNoEntry: false }) ? lstatSync(link) : null;
  if (exportsCore()) {
    const target = relative(modules, ROOT);
    if (current?.isSymbolicLink() && readlinkSync(link) === target) return 'package';
    rmSync(link, { recursive: true, force: true });
    symlinkSync(target, link, 'dir'); // what npm install does for a file: dependency
    return 'package';
  }
  if (current?.isSymbolicLink()) rmSync(link, { force: true });
  mkdirSync(link, { recursive: true });
  const src = (p: string) => JSON.stringify(join(ROOT, p));
  writeFileSync(join(link, 'package.json'), JSON.stringify({ name: 'refdesk', private: true, type: 'module', exports: { './core': './core.ts', './testing': './testing.ts' } }, null, 2));
  writeFileSync(
    join(link, 'core.ts'),
    [
      '// Test bridge (test/helpers/notion-example.ts): refdesk/core until the package exports it.',
      `export * from ${src('core/define.ts')};`,
      `export * from ${src('core/di-tokens.ts')};`,
      `export * from ${src('core/errors.ts')};`,
      `export type * from ${src('core/contracts.ts')};`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(link, 'testing.ts'), `// Test bridge: refdesk/testing until the package exports it.\nexport * from ${src('core/testing/index.ts')};\n`);
  return 'bridge';
}
