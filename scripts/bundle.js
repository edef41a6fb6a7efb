/**
 * The bundling step of `npm run build` (scripts/build.js runs it after tsc): esbuild bundles the
 * server and CLI entries, the worker threads' entries and every built-in plugin's index into
 * ES modules with shared chunks, written over tsc's output for those same files in the build
 * folder (shared code goes to `chunks/`). Node then loads a handful of files at start instead
 * of several hundred modules (issue 17 item 5, docs/benchmark.md "Compiled start").
 *
 * What keeps the bundle equivalent to tsc's output:
 *
 *   - every entry is written where tsc wrote it (`server/cli.js`, `plugins/<name>/index.js`,
 *     `server/search-worker.js`, ...), so the config's built-in plugin paths, the worker URLs
 *     and bin/refdesk.js find them unchanged, and a built-in plugin imported by the config
 *     loader shares its modules (the kernel's classes, its errors) with the server through the
 *     chunks, one instance of each;
 *   - `import.meta.url` in each source module is the URL of that module's own compiled file
 *     (`core/config.js` ...), computed from the bundle file it ended up in, so paths beside it
 *     (config/schema.json, the UI's views, worker modules, ../package.json) resolve as in tsc's
 *     tree; the build folder is relocatable (no absolute path is written);
 *   - a plugin named in the config by another path, or an npm package, is still imported at run
 *     time (config.ts is unchanged); every other file of tsc's output stays for the package's
 *     exports and type declarations;
 *   - core/precompiled-validators.ts (an empty table in the sources) is replaced by ajv standalone
 *     code for the config schema and each built-in plugin's options and spec schemas, compiled
 *     with core/validate.ts's own options and keyed by the schema's JSON text: the compiled
 *     start validates the config without loading ajv; any other schema (a plugin given by path,
 *     a schema changed since the build) is compiled by ajv at its first use, as in the sources.
 *
 * Packages whose code finds files beside itself at run time stay external (resolved from
 * node_modules as before): sql.js (its WASM), and what is only loaded through require() at
 * first use (core/lazy-module.ts).
 */
import { readdirSync, existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** Entries besides the built-in plugins: the CLI, the server and the worker threads' modules. */
const ENTRIES = ['server/cli.ts', 'server/main.ts', 'server/search-worker.ts', 'core/chunk-thread.ts', 'plugins/store-embedded/segment-build-thread.ts'];
/** Resolved from node_modules at run time, never bundled. */
const EXTERNAL = ['sql.js', 'tsx', 'tsx/*', 'jsdom', 'esbuild', 'typescript'];
/** Written in place of `import.meta.url`; each output file replaces the marker by its way up to the build folder. */
const ROOT_MARK = '__REFDESK_BUILD_ROOT__/';

/** The entry files, relative to root: ENTRIES and each plugins/<name>/index.ts. */
export function bundleEntries(root) {
  const plugins = readdirSync(join(root, 'plugins'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, 'plugins', d.name, 'index.ts')))
    .map((d) => `plugins/${d.name}/index.ts`);
  return [...ENTRIES.filter((e) => existsSync(join(root, e))), ...plugins.sort()];
}

/**
 * The module that replaces core/precompiled-validators.ts in the bundle: one ajv standalone
 * validator per schema the compiled start validates, read from tsc's output in `out` (the
 * config schema, the built-in plugins' definitions) and compiled with core/validate.ts's options.
 */
export async function precompiledValidatorsSource(root, out) {
  const require = createRequire(join(root, 'package.json'));
  const { Ajv } = require('ajv');
  const standaloneCode = require('ajv/dist/standalone').default;
  const { AJV_OPTIONS } = await import(pathToFileURL(join(out, 'core', 'validate.js')).href);
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true } });
  const schemas = new Map([[JSON.stringify(JSON.parse(readFileSync(join(root, 'config', 'schema.json'), 'utf8'))), 'config/schema.json']]);
  for (const entry of bundleEntries(root).filter((e) => e.startsWith('plugins/') && e.endsWith('/index.ts'))) {
    const plugin = (await import(pathToFileURL(join(out, entry.replace(/\.ts$/, '.js'))).href)).default;
    for (const def of plugin?.definitions ?? []) {
      for (const [what, schema] of [['options', def.options], ['spec', def.specSchema]]) {
        if (schema && typeof schema === 'object') schemas.set(JSON.stringify(schema), `${entry} ${def.role} ${def.kind} ${what}`);
      }
    }
  }
  const parts = [];
  let i = 0;
  for (const [key, what] of schemas) {
    // Each validator in a scope of its own (ajv's CommonJS standalone form: module.exports, require of its runtime helpers).
    const code = standaloneCode(ajv, ajv.compile(JSON.parse(key)));
    parts.push(`// ${what}\nconst v${i} = ((module) => {\n${code}\nreturn module.exports;\n})({ exports: {} });`);
    i++;
  }
  const table = [...schemas.keys()].map((key, n) => `[${JSON.stringify(key)}, v${n}]`).join(',\n  ');
  return `${parts.join('\n')}\nexport const precompiledValidators = new Map([\n  ${table}\n]);\n`;
}

/** esbuild plugin: core/precompiled-validators.ts is the generated table. */
function precompiledPlugin(root, contents) {
  const file = join(root, 'core', 'precompiled-validators.ts');
  return {
    name: 'refdesk-precompiled-validators',
    setup(b) {
      b.onLoad({ filter: /precompiled-validators\.ts$/ }, (args) => (args.path === file ? { contents, loader: 'js', resolveDir: join(root, 'core') } : undefined));
    },
  };
}

/** esbuild plugin: `import.meta.url` of a source module becomes the URL of its compiled file. */
function ownUrlPlugin(root) {
  return {
    name: 'refdesk-own-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const rel = relative(root, args.path);
        if (rel.startsWith('..') || rel.split(sep)[0] === 'node_modules') return undefined;
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return { contents: source, loader: 'ts' };
        const compiled = rel.split(sep).join('/').replace(/\.ts$/, '.js');
        const url = `new URL(${JSON.stringify(ROOT_MARK + compiled)}, import.meta.url).href`;
        return { contents: source.replaceAll('import.meta.url', `(${url})`), loader: 'ts' };
      });
    },
  };
}

/**
 * Bundles into `out` (which holds tsc's output already). Returns the bundle's files, relative
 * to out.
 */
export async function bundle(root, out) {
  const entryPoints = bundleEntries(root).map((e) => join(root, e));
  const validators = await precompiledValidatorsSource(root, out);
  const result = await build({
    absWorkingDir: root,
    entryPoints,
    outbase: root,
    outdir: out,
    entryNames: '[dir]/[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    // CommonJS packages in the bundle call require() for Node's own modules.
    banner: { js: "import { createRequire as __refdeskCreateRequire } from 'node:module'; const require = __refdeskCreateRequire(import.meta.url);" },
    plugins: [precompiledPlugin(root, validators), ownUrlPlugin(root)],
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
  });
  const files = [];
  for (const f of result.outputFiles) {
    const rel = relative(out, f.path).split(sep).join('/');
    const up = '../'.repeat(rel.split('/').length - 1) || './';
    const text = f.text.replaceAll(ROOT_MARK, up);
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, text);
    files.push(rel);
  }
  return files;
}
