#!/usr/bin/env node
/**
 * `npm run build`: compiles core/, plugins/ and server/ to plain JavaScript in dist/ (tsc with
 * tsconfig.build.json; `.ts` import specifiers are rewritten to `.js`), then copies what the
 * compiled code reads at run time: config/schema.json, the web UI's views and assets, and config/default.yaml with its built-in
 * plugin paths pointing at the compiled plugins (`index.ts` -> `index.js`). Then esbuild bundles
 * the entries (server, CLI, worker threads, built-in plugins) over tsc's output for those files
 * (scripts/bundle.js; --no-bundle leaves tsc's output alone). Last it writes `.build-stamp`,
 * which bin/refdesk.js compares with the sources' times to tell a current build from a stale one.
 *
 *   node scripts/build.js [--out-dir DIR] [--no-bundle]     (DIR defaults to dist; it is emptied first)
 *
 * Plain JavaScript so it runs with node alone.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundle } from './bundle.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { 'out-dir': { type: 'string', default: 'dist' }, 'no-bundle': { type: 'boolean', default: false } } });
const out = resolve(ROOT, values['out-dir']);
if (out === ROOT || !out.startsWith(ROOT)) {
  process.stderr.write(`build: --out-dir must be a folder inside ${ROOT} (the compiled code finds node_modules from there)\n`);
  process.exit(2);
}

rmSync(out, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const res = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', out], { cwd: ROOT, stdio: 'inherit' });
if (res.status !== 0) process.exit(res.status ?? 1);

mkdirSync(join(out, 'config'), { recursive: true });
copyFileSync(join(ROOT, 'config', 'schema.json'), join(out, 'config', 'schema.json'));
// Relative `use:` paths of built-in plugins name their TypeScript entry; the compiled tree has .js.
const yaml = readFileSync(join(ROOT, 'config', 'default.yaml'), 'utf8').replace(
  /^(\s*-?\s*use:\s*)(\.{1,2}\/\S+)\.ts(\s*(?:#.*)?)$/gm,
  (_m, head, path, tail) => `${head}${path}.js${tail}`,
);
writeFileSync(join(out, 'config', 'default.yaml'), yaml);
// The web UI's templates and static files are read at run time beside the compiled code.
for (const dir of ['views', 'assets']) cpSync(join(ROOT, 'server', 'ui', dir), join(out, 'server', 'ui', dir), { recursive: true });
// The PostgreSQL store's schema migrations (SQL files read by plugins/store-postgres/migrate.ts).
cpSync(join(ROOT, 'plugins', 'store-postgres', 'migrations'), join(out, 'plugins', 'store-postgres', 'migrations'), { recursive: true });
// The entries (CLI, server, workers, built-in plugins) bundled over tsc's output (scripts/bundle.js).
if (!values['no-bundle']) await bundle(ROOT, out);
writeFileSync(join(out, '.build-stamp'), `${new Date().toISOString()}\n`);
process.stdout.write(`Built ${out}\n`);
