#!/usr/bin/env node
// The `refdesk` command. It runs the compiled CLI (dist/, made by `npm run build`) when that is
// present and current, and otherwise the TypeScript sources through tsx (a development checkout):
//
//   - no sources beside bin/ (an installed package, the Docker image): dist/ is used; without it
//     the command says to run `npm run build`;
//   - a checkout with dist/: dist/ is used unless a file under core/, plugins/, server/ or config/
//     is newer than the build (dist/.build-stamp), in which case tsx runs the sources;
//   - REFDESK_RUNTIME=dist or REFDESK_RUNTIME=tsx forces one or the other.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const SOURCE_DIRS = ['core', 'plugins', 'server', 'config'];

/** The newest modification time of the files under dir, stopping early once past `limit`. */
function newerThan(dir, limit) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (newerThan(p, limit)) return true;
    } else if (statSync(p).mtimeMs > limit) return true;
  }
  return false;
}

function chooseRuntime() {
  const forced = process.env.REFDESK_RUNTIME;
  if (forced && forced !== 'dist' && forced !== 'tsx') return { error: `REFDESK_RUNTIME must be "dist" or "tsx" (got "${forced}").` };
  const hasSources = existsSync(join(ROOT, 'server', 'cli.ts'));
  const hasDist = existsSync(join(DIST, 'server', 'cli.js'));
  if (forced === 'tsx' || (!forced && !hasDist && hasSources)) {
    return hasSources ? { runtime: 'tsx' } : { error: 'REFDESK_RUNTIME=tsx needs the TypeScript sources (server/cli.ts), which this installation does not have.' };
  }
  if (!hasDist) return { error: `the compiled code is missing (${join(DIST, 'server', 'cli.js')}). Build it with: npm run build` };
  if (forced === 'dist' || !hasSources) return { runtime: 'dist' };
  let built = 0;
  try {
    built = statSync(join(DIST, '.build-stamp')).mtimeMs;
  } catch {
    return { runtime: 'tsx' }; // an unfinished build
  }
  return { runtime: SOURCE_DIRS.some((d) => newerThan(join(ROOT, d), built)) ? 'tsx' : 'dist' };
}

const choice = chooseRuntime();
if (choice.error) {
  process.stderr.write(`refdesk: ${choice.error}\n`);
  process.exit(1);
}
let runCli;
if (choice.runtime === 'dist') {
  ({ runCli } = await import('../dist/server/cli.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ runCli } = await import('../server/cli.ts'));
}
if (process.env.REFDESK_SHOW_RUNTIME === '1') process.stderr.write(`refdesk: running ${choice.runtime === 'dist' ? 'the compiled code (dist/)' : 'the TypeScript sources through tsx'}\n`);
try {
  const code = await runCli(process.argv.slice(2));
  if (code >= 0) process.exit(code);
} catch (e) {
  process.stderr.write(`refdesk: ${e && e.code && e.status ? e.message : e?.code?.startsWith?.('ERR_PARSE_ARGS') ? e.message : e?.stack ?? e}\n`);
  process.exit(1);
}
