/**
 * The compiled distribution: `npm run build` (scripts/build.js) compiles the sources into a
 * folder; the compiled CLI indexes a folder with the built-in plugins named by the copied
 * config/default.yaml, and the compiled server answers /ping and a context query. Then how
 * bin/refdesk.js chooses between dist/ and the TypeScript sources, on a small package tree of
 * its own. The build goes to a temporary folder inside the checkout (the compiled code finds
 * node_modules from there), never to the real dist/.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT, cliEnv, httpGet, makeDataDir, removeDataDir, stopAll, stopProcess } from './refdesk-process.ts';
import { spawn } from 'node:child_process';

const hasTypescript = (() => {
  try {
    createRequire(import.meta.url).resolve('typescript/bin/tsc');
    return true;
  } catch {
    return false;
  }
})();
const SKIP = { skip: hasTypescript ? false : 'typescript (a dev dependency) is not installed' } as const;

function tmpInRoot(prefix: string): string {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  return mkdtempSync(join(ROOT, '.tmp', prefix));
}

function run(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000) {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, env, encoding: 'utf8', timeout: timeoutMs });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, show: `exit ${r.status}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}` };
}

describe('npm run build: the compiled server and CLI', SKIP, () => {
  let out: string;
  let dataDir: string;
  let docs: string;

  before(() => {
    out = join(tmpInRoot('build-'), 'dist');
    dataDir = makeDataDir();
    docs = makeDataDir('refdesk-build-docs-');
    writeFileSync(
      join(docs, 'guide.md'),
      '# Widgets\n\n## Configure the frobnicator\n\nSet `frobLevel` in widgets.yaml to choose how hard it frobs.\n\n```yaml\nfrobLevel: 3\n```\n',
    );
    const r = run([join(ROOT, 'scripts', 'build.js'), '--out-dir', out], process.env, 300_000);
    assert.equal(r.code, 0, r.show);
  });

  after(async () => {
    await stopAll();
    removeDataDir(dataDir);
    removeDataDir(docs);
    if (out) rmSync(join(out, '..'), { recursive: true, force: true });
  });

  test('the build holds plain JavaScript, the schema and a config naming the compiled plugins', () => {
    assert.ok(existsSync(join(out, 'server', 'cli.js')));
    assert.ok(existsSync(join(out, 'server', 'main.js')));
    assert.ok(existsSync(join(out, 'plugins', 'store-embedded', 'index.js')));
    assert.ok(existsSync(join(out, 'config', 'schema.json')));
    assert.ok(existsSync(join(out, '.build-stamp')));
    assert.ok(!existsSync(join(out, 'test')), 'tests are not compiled');
    const cli = readFileSync(join(out, 'server', 'cli.js'), 'utf8');
    assert.doesNotMatch(cli, /from '\.[^']*\.ts'|import\("\.[^"]*\.ts"\)/, 'relative imports point at .js files');
    const yaml = readFileSync(join(out, 'config', 'default.yaml'), 'utf8');
    assert.match(yaml, /use: \.\.\/plugins\/store-embedded\/index\.js/);
    assert.doesNotMatch(yaml, /use: \.\.?\/\S+\.ts/);
  });

  test('the compiled CLI indexes a folder and the compiled server answers /ping and a context query', async () => {
    const env = cliEnv(dataDir);
    const add = run([join(out, 'server', 'cli.js'), 'add', docs, '--name', 'widgets'], env);
    assert.equal(add.code, 0, add.show);
    assert.match(add.stdout, /\/docs\/widgets: 1 files/);
    // The segment is built in a worker thread from the compiled .js module, not on the main thread.
    assert.doesNotMatch(add.stdout + add.stderr, /worker thread/);

    const child = spawn(process.execPath, [join(out, 'server', 'cli.js'), 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let stdout = '';
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "listening" line within 60 s\n${stdout}\n${stderr}`)), 60_000);
        child.stdout!.setEncoding('utf8').on('data', (c: string) => {
          stdout += c;
          const m = /Refdesk listening on port (\d+)/.exec(stdout);
          if (m) {
            clearTimeout(timer);
            resolve(Number(m[1]));
          }
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`the compiled server exited (${code})\n${stdout}\n${stderr}`));
        });
      });
      const ping = await httpGet(`http://127.0.0.1:${port}/ping`);
      assert.equal(ping.status, 200);
      assert.deepEqual(ping.body, { status: 'ok', message: 'pong' });
      const ctx = await httpGet(`http://127.0.0.1:${port}/api/v2/context?libraryId=/docs/widgets&query=frobnicator+level&type=json`);
      assert.equal(ctx.status, 200, ctx.text);
      assert.match(ctx.text, /frobLevel/);
    } finally {
      await stopProcess(child);
    }
  });
});

describe('bin/refdesk.js: compiled code or TypeScript sources', () => {
  let pkg: string;
  const FUTURE = new Date(Date.now() + 3600_000);
  const PAST = new Date(Date.now() - 3600_000);

  before(() => {
    // A package tree of its own: bin/refdesk.js as shipped, a "compiled" CLI and a "source" CLI
    // that say which one ran. Inside the checkout so the sources' tsx resolves.
    pkg = tmpInRoot('bin-');
    mkdirSync(join(pkg, 'bin'));
    copyFileSync(join(ROOT, 'bin', 'refdesk.js'), join(pkg, 'bin', 'refdesk.js'));
    writeFileSync(join(pkg, 'package.json'), '{"type":"module"}\n');
  });

  after(() => rmSync(pkg, { recursive: true, force: true }));

  const writeDist = () => {
    mkdirSync(join(pkg, 'dist', 'server'), { recursive: true });
    writeFileSync(join(pkg, 'dist', 'server', 'cli.js'), "export async function runCli(argv) { process.stdout.write('compiled ' + argv.join(' ') + '\\n'); return 0; }\n");
    writeFileSync(join(pkg, 'dist', '.build-stamp'), 'now\n');
  };
  const writeSources = (mtime: Date) => {
    mkdirSync(join(pkg, 'server'), { recursive: true });
    const f = join(pkg, 'server', 'cli.ts');
    writeFileSync(f, "export async function runCli(argv: string[]): Promise<number> { process.stdout.write('sources ' + argv.join(' ') + '\\n'); return 0; }\n");
    utimesSync(f, mtime, mtime);
  };
  const refdesk = (env: Record<string, string> = {}) => {
    const e = { ...process.env, ...env };
    delete e.NODE_TEST_CONTEXT;
    delete e.REFDESK_RUNTIME;
    Object.assign(e, env);
    return run([join(pkg, 'bin', 'refdesk.js'), 'libraries'], e, 60_000);
  };

  test('a checkout without dist/ runs the sources through tsx', () => {
    writeSources(PAST);
    const r = refdesk();
    assert.equal(r.code, 0, r.show);
    assert.equal(r.stdout, 'sources libraries\n');
  });

  test('a current dist/ is used; a source newer than the build sends it back to the sources', () => {
    writeDist();
    writeSources(PAST);
    assert.equal(refdesk().stdout, 'compiled libraries\n');
    writeSources(FUTURE);
    assert.equal(refdesk().stdout, 'sources libraries\n');
    assert.equal(refdesk({ REFDESK_RUNTIME: 'dist' }).stdout, 'compiled libraries\n', 'REFDESK_RUNTIME=dist forces the build');
    writeSources(PAST);
    assert.equal(refdesk({ REFDESK_RUNTIME: 'tsx' }).stdout, 'sources libraries\n', 'REFDESK_RUNTIME=tsx forces the sources');
  });

  test('an installation without sources runs dist/, and without dist/ says to build it', () => {
    rmSync(join(pkg, 'server'), { recursive: true, force: true });
    writeDist();
    assert.equal(refdesk().stdout, 'compiled libraries\n');
    rmSync(join(pkg, 'dist'), { recursive: true, force: true });
    const r = refdesk();
    assert.equal(r.code, 1, r.show);
    assert.match(r.stderr, /npm run build/);
    const bad = refdesk({ REFDESK_RUNTIME: 'fast' });
    assert.equal(bad.code, 1, bad.show);
    assert.match(bad.stderr, /REFDESK_RUNTIME must be "dist" or "tsx"/);
  });
});
