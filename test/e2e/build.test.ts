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
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
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
    // The whole suite (test/run.ts) has just run scripts/build.js into dist/ and stops if it
    // fails; that build is copied instead of compiling everything a second time (about 30 s of
    // CPU). Run alone, this file builds into its own folder with --out-dir.
    const built = process.env.REFDESK_TEST_BUILT_DIST;
    if (built && existsSync(join(built, '.build-stamp'))) {
      cpSync(built, out, { recursive: true });
      return;
    }
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

  test('the entries are bundles over tsc\'s output, with shared chunks and no absolute path of the build', () => {
    // The server's entry imports chunks, not the module graph tsc wrote beside it.
    const main = readFileSync(join(out, 'server', 'main.js'), 'utf8');
    assert.match(main, /from "\.\.\/chunks\/[^"]+\.js"/);
    assert.doesNotMatch(main, /from "\.\.?\/(core|server|plugins)\//, 'no import of a tsc module');
    for (const entry of ['server/cli.js', 'server/search-worker.js', 'core/chunk-thread.js', 'plugins/store-embedded/segment-build-thread.js', 'plugins/chunker-markdown/index.js']) {
      assert.match(readFileSync(join(out, entry), 'utf8'), /chunks\//, `${entry} is a bundle entry`);
    }
    // tsc's other files stay (the package's exports and declarations use them).
    assert.ok(existsSync(join(out, 'core', 'kernel.js')));
    // Relocatable: no file names the folder it was built in.
    const chunks = readdirSync(join(out, 'chunks'));
    assert.ok(chunks.length > 0);
    for (const f of [...chunks.map((c) => join('chunks', c)), 'server/cli.js', 'server/main.js']) {
      assert.ok(!readFileSync(join(out, f), 'utf8').includes(ROOT), `${f} names the build folder ${ROOT}`);
    }
  });

  test('the compiled CLI imports a plugin given by path in the config, TypeScript too (.mts), also in the chunk worker', () => {
    // A chunker outside the package, named by an absolute path in a config beside the compiled
    // default: it marks every snippet, so the answer shows which chunker ran. It is TypeScript
    // (type annotations), which plain Node cannot load: the compiled code registers tsx for it.
    const plugin = join(docs, '..', `${docs.split('/').pop()}-stamp-chunker.mts`);
    writeFileSync(
      plugin,
      `import { isMainThread } from 'node:worker_threads';\nexport default { __refdeskPlugin: true, name: 'stamp', version: '1.0.0', kernel: '^1.0.0', definitions: [{
        role: 'chunker', kind: 'stamp', description: 'test', options: { type: 'object', properties: { mark: { type: 'string', default: 'STAMPED' } } }, deps: {},
        create: (o: { mark: string }) => ({ formats: ['markdown', 'mdx', 'text'], chunk: (doc: { path: string; content: string }) => [{ type: 'info', title: o.mark + ' ' + doc.path, description: '', language: '', code: '',
          content: o.mark + (isMainThread ? ' main ' : ' worker ') + doc.content.slice(0, 200), breadcrumb: [o.mark], pageTitle: o.mark, sourcePath: doc.path, lineStart: 1, lineEnd: 1, tokens: 50 }] }),
      }] };\n`,
    );
    try {
      const yaml = readFileSync(join(out, 'config', 'default.yaml'), 'utf8')
        .replace(/^plugins:\n/m, `plugins:\n  - use: ${plugin}\n    options:\n      stamp:\n        mark: PATHPLUGIN\n`)
        .replace(/^(\s*chunkers:).*$/m, '$1 [stamp]');
      const config = join(out, 'config', 'stamp.yaml');
      writeFileSync(config, yaml);
      const stampDocs = join(docs, '..', `${docs.split('/').pop()}-stamp-docs`);
      mkdirSync(stampDocs, { recursive: true });
      writeFileSync(join(stampDocs, 'small.md'), '# Small\n\nfrobnicator small page\n');
      // 8 KiB and more goes to the chunk worker thread, which imports the chunkers itself. Outside a
      // server (refdesk add) the main thread chunks the first CHUNK_WORKER_SHARE_CHARS (256 KiB) of
      // large documents before the worker starts: 30 pages of 13 KiB leave the last ones to it.
      for (let i = 0; i < 30; i++) writeFileSync(join(stampDocs, `large-${String(i).padStart(2, '0')}.md`), '# Large\n\nfrobnicator large page\n\n' + 'All work and no play. '.repeat(600));
      const env = cliEnv(makeDataDir('refdesk-build-stamp-'), { REFDESK_CONFIG: config });
      try {
        const add = run([join(out, 'server', 'cli.js'), 'add', stampDocs, '--name', 'stamped'], env);
        assert.equal(add.code, 0, add.show);
        const ctx = run([join(out, 'server', 'cli.js'), 'context', '/docs/stamped', 'frobnicator page', '--json', '--fast', '--tokens', '20000'], env);
        assert.equal(ctx.code, 0, ctx.show);
        assert.doesNotMatch(add.stdout + add.stderr, /worker thread/, 'the chunk worker started');
        assert.match(ctx.stdout, /"content": "PATHPLUGIN main # Small/);
        assert.match(ctx.stdout, /"content": "PATHPLUGIN worker # Large/, 'the large page was chunked by the plugin in the chunk worker');
      } finally {
        removeDataDir(env.DATA_DIR);
        removeDataDir(stampDocs);
      }
    } finally {
      rmSync(plugin, { force: true });
    }
  });

  test('the compiled CLI indexes a folder and the compiled server answers /ping and a context query', async () => {
    const env = cliEnv(dataDir);
    const add = run([join(out, 'server', 'cli.js'), 'add', docs, '--name', 'widgets'], env);
    assert.equal(add.code, 0, add.show);
    assert.match(add.stdout, /\/docs\/widgets: 1 files/);
    // The segment is built in a worker thread from the compiled .js module, not on the main thread.
    assert.doesNotMatch(add.stdout + add.stderr, /worker thread/);

    // A preloaded script lists, at exit, the CommonJS modules of ajv Node loaded: the compiled
    // start validates the config with the validators compiled at build time, not with ajv.
    const hook = join(out, '..', 'ajv-hook.cjs');
    const loadedList = join(out, '..', 'ajv-loaded.json');
    writeFileSync(hook, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(loadedList)}, JSON.stringify(Object.keys(require.cache).filter((p) => /node_modules[\\\\/]ajv[\\\\/]/.test(p)))));\n`);
    const child = spawn(process.execPath, ['--require', hook, join(out, 'server', 'cli.js'), 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    assert.deepEqual(JSON.parse(readFileSync(loadedList, 'utf8')), [], 'ajv is not loaded by the compiled start');
  });

  test('the validators compiled at build time answer as ajv does: result, errors and defaults', async () => {
    const { precompiledValidatorsSource } = await import(pathToFileURL(join(ROOT, 'scripts', 'bundle.js')).href);
    const { AJV_OPTIONS } = await import('../../core/validate.ts');
    // The generated table as the bundle has it, in a module of its own (its runtime helpers are required from node_modules).
    const file = join(out, '..', 'validators.mjs');
    writeFileSync(file, "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);\n" + (await precompiledValidatorsSource(ROOT, out)));
    const { precompiledValidators } = (await import(pathToFileURL(file).href)) as { precompiledValidators: Map<string, ValidateFunction> };
    const schemas = [...precompiledValidators.keys()];
    const config = JSON.stringify(JSON.parse(readFileSync(join(ROOT, 'config', 'schema.json'), 'utf8')));
    assert.ok(schemas.includes(config), 'the config schema is precompiled');
    assert.ok(schemas.length >= 15, `every built-in plugin's options: ${schemas.length} schemas`);
    const ajv = new Ajv(AJV_OPTIONS);
    const samples = (schema: Record<string, unknown>): unknown[] => {
      const props = (schema.properties ?? {}) as Record<string, { type?: string }>;
      const wrong = Object.fromEntries(Object.entries(props).map(([k, p]) => [k, p.type === 'string' ? 12 : 'not this']));
      const first = Object.keys(props)[0];
      return [{}, { notAnOption: true }, wrong, first ? { [first]: null } : [], 'text', null];
    };
    for (const key of schemas) {
      const schema = JSON.parse(key) as Record<string, unknown>;
      const pre = precompiledValidators.get(key)!;
      const fresh = ajv.compile(schema);
      for (const sample of samples(schema)) {
        const a = structuredClone(sample);
        const b = structuredClone(sample);
        const ok = pre(a);
        assert.equal(ok, fresh(b), `${schema.title ?? key.slice(0, 80)} on ${JSON.stringify(sample)}`);
        assert.deepEqual(pre.errors ?? null, fresh.errors ?? null);
        assert.deepEqual(a, b, 'the same defaults applied');
      }
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
