/**
 * Runs the test files with node:test through tsx. On Node 20 `tsx --test` does not expand
 * directories or globs, so we list the files ourselves. Pass file paths to run only those.
 *
 * The whole suite (no file paths) first builds dist/ (`npm run build`, scripts/build.js) and
 * runs with REFDESK_RUNTIME=dist: the `refdesk` commands the end-to-end tests start run the
 * compiled code, as an installed copy does, and the worker threads of in-process servers start
 * from their compiled twins (core/worker-task.ts), instead of compiling the sources through
 * tsx at every start (about 2 s of CPU a command, 0.5 s a worker). The test files themselves
 * still run the sources. REFDESK_RUNTIME set by the caller is kept (tsx: no build).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/**
 * The longest files (each 25 - 75 s on a quiet 2-core machine) start first, so that the last
 * minute of the run is many short files on both cores instead of one long file on one. Only an
 * order: a file missing here runs in its alphabetical place.
 */
const LONGEST_FIRST = [
  'test/e2e/cluster.test.ts',
  'test/ui/libraries.test.ts',
  'test/ui/settings.test.ts',
  'test/e2e/dockerfile.test.ts',
  'test/ui/auth.test.ts',
  'test/ui/add.test.ts',
  'test/server/migrate-store-vectors.test.ts',
  'test/e2e/startup.test.ts',
  'test/kit/package.test.ts',
  'test/plugins/source-git/git-source.test.ts',
  'test/plugins/source-git/kernel.test.ts',
  'test/e2e/build.test.ts',
];

function longestFirst(all: string[]): string[] {
  const first = LONGEST_FIRST.filter((f) => all.includes(f));
  return [...first, ...all.filter((f) => !first.includes(f))];
}

const args = process.argv.slice(2);
const files = args.length > 0 ? args : longestFirst(findTests(join(root, 'test')).map((f) => relative(root, f)));
const env: NodeJS.ProcessEnv = { ...process.env, NODE_NO_WARNINGS: '1' };
if (args.length === 0 && env.REFDESK_RUNTIME === undefined) {
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build.js')], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) {
    process.stderr.write('test: npm run build failed; the suite runs the compiled code, so it stops here\n');
    process.exit(build.status ?? 1);
  }
  env.REFDESK_RUNTIME = 'dist';
  // build.test.ts copies this build instead of compiling the sources again.
  env.REFDESK_TEST_BUILT_DIST = join(root, 'dist');
}
// Three files at a time on CI's two cores: many files spend part of their time waiting (leases,
// polling, child processes starting), and a third file fills those gaps. Measured on a quiet
// 2-core machine, the whole suite: 831 s at 2, 748 s at 3 (same tree, both green).
const res = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=3', '--test-reporter=spec', ...files],
  { cwd: root, stdio: 'inherit', env },
);
process.exit(res.status ?? 1);
