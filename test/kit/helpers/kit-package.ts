/**
 * The package a plugin author installs, built for a test: `refdesk/core` and `refdesk/testing`
 * compiled (JavaScript and declarations, tsconfig.build.json's settings) into a folder inside the
 * checkout whose package.json carries this package's own `exports`; and a plugin package outside
 * the checkout that depends on it (node_modules/refdesk is a symlink, as `npm install` of a
 * `file:` dependency makes one). Nothing is downloaded.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

export interface Run {
  status: number | null;
  output: string;
}

export function run(cmd: string, args: string[], cwd: string, timeoutMs = 300_000): Run {
  const res = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    // Without NODE_TEST_CONTEXT, which would make a child node:test report to this runner.
    env: Object.fromEntries(Object.entries({ ...process.env, NODE_NO_WARNINGS: '1' }).filter(([k]) => k !== 'NODE_TEST_CONTEXT')),
  });
  return { status: res.status, output: `${res.stdout ?? ''}${res.stderr ?? ''}${res.error ? String(res.error) : ''}` };
}

export function tsc(project: string): Run {
  return run(process.execPath, [TSC, '-p', project], dirname(project));
}

/**
 * Compiles the two entry points into `<checkout>/test-output/kit-package-XXXX/dist` (inside the
 * checkout, so the compiled code finds its own dependencies in node_modules) and returns that
 * package folder. Throws with tsc's output when the build fails.
 */
export function buildKitPackage(): string {
  mkdirSync(join(ROOT, 'test-output'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'test-output', 'kit-package-'));
  const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; exports: unknown };
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'refdesk', version: own.version, type: 'module', exports: own.exports }, null, 2));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.build.json'),
      compilerOptions: { rootDir: ROOT, outDir: join(dir, 'dist') },
      include: [],
      files: [join(ROOT, 'core/public.ts'), join(ROOT, 'core/testing/index.ts')],
    }),
  );
  // The whole suite (test/run.ts) has just compiled everything with these settings into dist/
  // (declarations included) and stops if that fails: its output is copied instead of compiling
  // the two entry points again. Run alone, this builds them.
  const suiteBuild = process.env.REFDESK_TEST_BUILT_DIST;
  if (suiteBuild && existsSync(join(suiteBuild, '.build-stamp'))) {
    cpSync(suiteBuild, join(dir, 'dist'), { recursive: true });
    return dir;
  }
  const built = tsc(join(dir, 'tsconfig.json'));
  if (built.status !== 0) throw new Error(`building refdesk/core and refdesk/testing failed:\n${built.output}`);
  return dir;
}

/** A plugin package in a temporary folder outside the checkout, depending on `refdesk` (the kit package). */
export function makePluginPackage(kitPackage: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-plugin-package-'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'refdesk-plugin-under-test', version: '1.0.0', type: 'module', private: true, dependencies: { refdesk: `file:${kitPackage}` } }, null, 2),
  );
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'out', rootDir: 'src', types: ['node'], lib: ['ES2023'], skipLibCheck: false },
      include: ['src'],
    }),
  );
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(kitPackage, join(dir, 'node_modules', 'refdesk'), 'dir');
  // The author's own dev dependency on Node's types.
  symlinkSync(join(ROOT, 'node_modules', '@types'), join(dir, 'node_modules', '@types'), 'dir');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

export function remove(...dirs: Array<string | undefined>): void {
  for (const d of dirs) if (d) rmSync(d, { recursive: true, force: true });
}

/** The guide's code blocks tagged ```ts file=<path>, by path (blocks of one path joined in order). */
export function guideFiles(markdown: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const m of markdown.matchAll(/^```ts file=(\S+)[^\n]*\n([\s\S]*?)^```[ \t]*$/gm)) {
    files[m[1]] = `${files[m[1]] ?? ''}${m[2]}`;
  }
  return files;
}
