/**
 * A plugin package outside this repository builds on `refdesk/core` and `refdesk/testing` alone:
 * the two entry points are compiled with their declarations, a package depending on them (a
 * `file:` dependency, linked) is type-checked against the declarations with tsc, and its tests
 * run with node:test against the kit. One package is the guide's own example
 * (docs/writing-plugins.md, its ```ts file=... blocks), so the guide's code stays true.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildKitPackage, guideFiles, makePluginPackage, remove, ROOT, run, tsc } from './helpers/kit-package.ts';

let kit: string;
const made: string[] = [];
before(() => {
  kit = buildKitPackage();
});
after(() => remove(kit, ...made));

function testsPassed(output: string): number {
  return Number(/^# pass (\d+)/m.exec(output)?.[1] ?? 0);
}

test('the package exports only refdesk/core and refdesk/testing, each with types and import conditions', () => {
  const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown>; private?: boolean };
  assert.deepEqual(Object.keys(own.exports).sort(), ['./core', './package.json', './testing']);
  for (const entry of ['./core', './testing']) assert.deepEqual(Object.keys(own.exports[entry] as object), ['types', 'import']);
  const pkg = makePluginPackage(kit, {
    'probe.mjs': `for (const s of ['refdesk/core', 'refdesk/testing', 'refdesk/core/define.ts', 'refdesk/dist/core/define.js']) {
      try { const m = await import(s); console.log(s, 'ok', typeof (m.definePlugin ?? m.runPlugin)); } catch (e) { console.log(s, e.code); }
    }`,
  });
  made.push(pkg);
  const out = run(process.execPath, ['probe.mjs'], pkg);
  assert.equal(out.status, 0, out.output);
  assert.match(out.output, /^refdesk\/core ok function$/m);
  assert.match(out.output, /^refdesk\/testing ok function$/m);
  assert.match(out.output, /^refdesk\/core\/define\.ts ERR_PACKAGE_PATH_NOT_EXPORTED$/m);
  assert.match(out.output, /^refdesk\/dist\/core\/define\.js ERR_PACKAGE_PATH_NOT_EXPORTED$/m);
});

test("the guide's example plugin compiles against the declarations and passes its tests, the Source contract suite among them", () => {
  const files = guideFiles(readFileSync(join(ROOT, 'docs/writing-plugins.md'), 'utf8'));
  assert.deepEqual(Object.keys(files).sort(), ['src/index.test.ts', 'src/index.ts']);
  for (const text of Object.values(files)) {
    for (const m of text.matchAll(/from '([^']+)'/g)) assert.ok(/^(node:|refdesk\/(core|testing)$|\.\/)/.test(m[1]), `the guide imports ${m[1]}`);
  }
  const pkg = makePluginPackage(kit, files);
  made.push(pkg);
  const built = tsc(join(pkg, 'tsconfig.json'));
  assert.equal(built.status, 0, `tsc failed:\n${built.output}`);
  const tested = run(process.execPath, ['--test', '--test-reporter=tap', 'out/index.test.js'], pkg);
  assert.equal(tested.status, 0, tested.output);
  assert.match(tested.output, /^ok \d+ - Source contract: pages$/m);
  assert.match(tested.output, /read\(\) yields no further document once the signal is aborted mid-read/);
  assert.ok(testsPassed(tested.output) >= 9, tested.output);
  assert.match(tested.output, /^# fail 0$/m);
});

test('every role\'s contract suite runs from an outside package with node:test', () => {
  const suites = `import { Type, citeOriginalLines, definePlugin, defineChunker, defineReranker, type Snippet } from 'refdesk/core';
import { MemoryStore, createFakeEmbedder, runChunkerContract, runEmbedderContract, runPlugin, runRerankerContract, runStoreContract } from 'refdesk/testing';

const plugin = definePlugin({ name: 'lines', version: '1.0.0', kernel: '^1.0.0', definitions: [
  defineChunker({
    kind: 'lines',
    options: Type.Object({ minLength: Type.Integer({ minimum: 1, default: 1 }) }, { additionalProperties: false }),
    deps: {},
    create: (options) => ({
      formats: ['text'],
      chunk(doc) {
        const out: Snippet[] = [];
        doc.content.split('\\n').forEach((line, i) => {
          if (line.trim().length < options.minLength) return;
          out.push({ type: 'info', title: line.slice(0, 30), description: '', language: '', code: '', content: line, breadcrumb: [], pageTitle: doc.path, sourcePath: doc.path, lineStart: i + 1, lineEnd: i + 1, tokens: 1 });
        });
        if (doc.lineMap) citeOriginalLines(out, doc.lineMap);
        return out;
      },
    }),
  }),
  defineReranker({ kind: 'keep', options: Type.Object({}), deps: {}, create: () => ({ rerank: async (_q, hits, n) => hits.slice(0, n) }) }),
] });

runChunkerContract('lines', async () => {
  const run = await runPlugin(plugin, { kind: 'lines', role: 'chunker' });
  return { chunker: run.instance, documents: [{ path: 'a.txt', format: 'text', content: 'one\\ntwo\\n' }], cleanup: run.close };
});
runRerankerContract('keep', async () => {
  const run = await runPlugin(plugin, { kind: 'keep', role: 'reranker' });
  return { reranker: run.instance, cleanup: run.close };
});
runEmbedderContract('fake', async () => ({ embedder: createFakeEmbedder() }));
runStoreContract('memory', async () => {
  const store = new MemoryStore();
  await store.open();
  return { store, cleanup: () => store.close().catch(() => {}) };
});
`;
  const pkg = makePluginPackage(kit, { 'src/suites.test.ts': suites });
  made.push(pkg);
  const built = tsc(join(pkg, 'tsconfig.json'));
  assert.equal(built.status, 0, `tsc failed:\n${built.output}`);
  const tested = run(process.execPath, ['--test', '--test-reporter=tap', 'out/suites.test.js'], pkg);
  assert.equal(tested.status, 0, tested.output);
  const storeSuites = ['catalog', 'builds and snippets', 'jobs', 'API keys'].map((role) => `Store contract, ${role}: memory`);
  for (const suite of ['Chunker contract: lines', 'Reranker contract: keep', 'Embedder contract: fake', ...storeSuites]) {
    assert.match(tested.output, new RegExp(`^ok \\d+ - ${suite}$`, 'm'), suite);
  }
  assert.match(tested.output, /^# fail 0$/m);
});

test('options typed from the schema: a plugin that misuses them does not compile', () => {
  const plugin = `import { definePlugin, defineChunker, Type } from 'refdesk/core';
export default definePlugin({ name: 'typed', version: '1.0.0', kernel: '^1.0.0', definitions: [
  defineChunker({
    kind: 'typed',
    options: Type.Object({ size: Type.Integer({ default: 3 }), label: Type.Optional(Type.String()) }, { additionalProperties: false }),
    deps: {},
    create: (options) => {
      const size: number = options.size;
      const label: string = options.label; // string | undefined: a type error
      return { formats: ['text'], chunk: () => (size && label ? [] : []) };
    },
  }),
] });
`;
  const pkg = makePluginPackage(kit, { 'src/index.ts': plugin });
  made.push(pkg);
  const built = tsc(join(pkg, 'tsconfig.json'));
  assert.notEqual(built.status, 0, 'the misuse compiled');
  assert.match(built.output, /src\/index\.ts\(9,\d+\): error TS2322: Type 'string \| undefined' is not assignable to type 'string'/);
  assert.doesNotMatch(built.output, /\(8,\d+\)/, 'the typed use compiles');
});
