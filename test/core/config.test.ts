import { patchSettings } from '../../core/settings.ts';
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel } from '../../core/kernel.ts';
import { ConfigError } from '../../core/errors.ts';
import { createConsoleLogger } from '../../core/services.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const builtin = (name: string) => join(ROOT, 'plugins', name, 'index.ts');
const quiet = createConsoleLogger('error', () => {});

let dir: string;
let dataDir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'refdesk-config-'));
  dataDir = join(dir, 'data');
  // A third-party plugin written in plain JS, as a package author would ship it.
  const fixture = (file: string, body: string) => writeFileSync(join(dir, file), body);
  fixture(
    'embedder-fake.mjs',
    `export default { __refdeskPlugin: true, name: 'embedder-fake', version: '1.0.0', kernel: '^1.0.0', definitions: [{
      role: 'embedder', kind: 'fake', deps: { logger: Symbol.for('refdesk:core.logger') },
      options: { type: 'object', additionalProperties: false, required: ['apiKey'], properties: {
        apiKey: { type: 'string', writeOnly: true, pattern: '^sk-' }, dims: { type: 'integer', default: 8 } } },
      create(options, deps) { return { api: 'openai', connect(endpoint) { return { model: endpoint.model, dimensions: options.dims, hasLogger: !!deps.logger, async embed(t) { return t.map(() => new Float32Array(options.dims)); } }; } }; } }] };`,
  );
  fixture(
    'future.mjs',
    `export default { __refdeskPlugin: true, name: 'future-plugin', version: '1.0.0', kernel: '^2.0.0', definitions: [] };`,
  );
  fixture('not-a-plugin.mjs', `export default { hello: 'world' };`);
  fixture(
    'needs-missing.mjs',
    `export default { __refdeskPlugin: true, name: 'needs-missing', version: '1.0.0', kernel: '^1.0.0', definitions: [{
      role: 'reranker', kind: 'needy', options: { type: 'object' }, deps: { vectors: Symbol.for('refdesk:core.vectors') },
      create() { return { async rerank(q, h) { return h; } }; } }] };`,
  );
});

after(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(name: string, yaml: string): string {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return file;
}

const BASE_PLUGINS = `
  - use: ${builtin('store-embedded')}
  - use: ${builtin('chunker-markdown')}
  - use: ${builtin('source-upload')}`;

async function configError(file: string): Promise<ConfigError> {
  try {
    await createKernel(file, { env: { dataDir, mode: 'reader' }, logger: quiet });
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected ConfigError, got ${(e as Error).stack}`);
    return e;
  }
  assert.fail('expected the config to be refused');
}

describe('kernel wiring', () => {
  test('the default config builds a kernel with store, chunker and upload source', async () => {
    const kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), { env: { dataDir, mode: 'reader' }, logger: quiet });
    assert.ok(kernel.store);
    assert.deepEqual([...kernel.sources.keys()].sort(), ['confluence', 'git', 'llmstxt', 'npm', 'openapi', 'packages', 'pypi', 'upload', 'website']);
    assert.equal(kernel.sources.get('upload')!.def.idPrefix, 'docs');
    assert.ok(kernel.chunkerFor('mdx').formats.includes('mdx'));
    await kernel.open();
    try {
      assert.equal(await kernel.providers.embedder(), null);
      assert.equal(await kernel.providers.llm(), null);
    } finally {
      await kernel.close();
    }
  });

  test('a third-party plugin by path gets validated options with defaults and its declared deps only', async () => {
    const file = writeConfig(
      'ok.yaml',
      `plugins:${BASE_PLUGINS}
  - use: ./embedder-fake.mjs
    options:
      fake: { apiKey: sk-test }
slots:
  store: embedded
  embedder: fake
`,
    );
    const kernel = await createKernel(file, { env: { dataDir: join(dir, 'data-embedder'), mode: 'server' }, logger: quiet });
    await kernel.open();
    try {
      // No embedding provider in the settings: no embedder, whatever plugins are loaded.
      assert.equal(await kernel.providers.embedder(), null);
      await patchSettings(kernel.store, kernel.secrets, { embedding: { provider: 'openai', apiKey: 'sk-test', model: 'fake-model' } });
      kernel.providers.invalidate();
      const embedder = await kernel.providers.embedder();
      assert.equal(embedder!.dimensions, 8);
      assert.equal(embedder!.model, 'fake-model');
      assert.equal((embedder as unknown as { hasLogger: boolean }).hasLogger, true);
    } finally {
      await kernel.close();
    }
  });
});

describe('configuration errors name the file, the path and the plugin', () => {
  test('unknown kind in a slot', async () => {
    const file = writeConfig('unknown-kind.yaml', `plugins:${BASE_PLUGINS}\nslots:\n  store: postgres\n`);
    const e = await configError(file);
    assert.match(e.message, /unknown-kind\.yaml/);
    assert.match(e.message, /slots\.store/);
    assert.match(e.message, /no enabled plugin provides a store of kind "postgres" \(enabled: embedded\)/);
  });

  test('duplicate kind', async () => {
    const file = writeConfig('dup.yaml', `plugins:${BASE_PLUGINS}\n  - use: ${builtin('source-upload')}\n`);
    const e = await configError(file);
    assert.match(e.message, /plugins\[3\]/);
    assert.match(e.message, /duplicate source kind "upload": already provided by plugins\[2\] \(@refdesk\/source-upload\)/);
  });

  test('bad options: the path and the rule, never the value', async () => {
    const file = writeConfig(
      'bad-options.yaml',
      `plugins:${BASE_PLUGINS}
  - use: ./embedder-fake.mjs
    options:
      fake: { apiKey: hunter2-super-secret, dims: lots, colour: hunter3-also-secret }
slots:
  embedder: fake
`,
    );
    const e = await configError(file);
    assert.match(e.message, /bad-options\.yaml/);
    assert.match(e.message, /embedder-fake/);
    assert.match(e.message, /plugins\[3\]\.options\.fake\.apiKey: must match pattern/);
    assert.match(e.message, /plugins\[3\]\.options\.fake\.dims: must be integer/);
    assert.match(e.message, /plugins\[3\]\.options\.fake: unknown property "colour"/);
    assert.ok(!e.message.includes('hunter2') && !e.message.includes('hunter3') && !e.message.includes('lots'), e.message);
  });

  test('options of the built-in plugins are validated too', async () => {
    const file = writeConfig(
      'bad-builtin.yaml',
      `plugins:
  - use: ${builtin('store-embedded')}
  - use: ${builtin('chunker-markdown')}
    options:
      markdown: { maxInfoTokens: -5 }
`,
    );
    const e = await configError(file);
    assert.match(e.message, /plugins\[1\]\.options\.markdown\.maxInfoTokens: must be >= 50/);
  });

  test('options for a kind the plugin does not provide', async () => {
    const file = writeConfig('wrong-kind.yaml', `plugins:${BASE_PLUGINS}\n    options:\n      website: {}\n`);
    const e = await configError(file);
    assert.match(e.message, /plugins\[2\]\.options\.website: plugin @refdesk\/source-upload has no definition of kind "website" \(it provides: upload\)/);
  });

  test('a plugin for another kernel version', async () => {
    const file = writeConfig('future.yaml', `plugins:${BASE_PLUGINS}\n  - use: ./future.mjs\n`);
    const e = await configError(file);
    assert.match(e.message, /plugins\[3\] \(\.\/future\.mjs\): plugin future-plugin requires kernel \^2\.0\.0, but this Refdesk kernel is 1\./);
  });

  test('a module that is not a plugin, and one that does not exist', async () => {
    let e = await configError(writeConfig('notplugin.yaml', `plugins:${BASE_PLUGINS}\n  - use: ./not-a-plugin.mjs\n`));
    assert.match(e.message, /plugins\[3\] \(\.\/not-a-plugin\.mjs\): the module's default export is not a Refdesk plugin/);
    e = await configError(writeConfig('missing.yaml', `plugins:${BASE_PLUGINS}\n  - use: refdesk-plugin-that-does-not-exist\n`));
    assert.match(e.message, /plugins\[3\] \(refdesk-plugin-that-does-not-exist\): module not found/);
  });

  test('a dependency no plugin provides', async () => {
    const file = writeConfig('needs.yaml', `plugins:${BASE_PLUGINS}\n  - use: ./needs-missing.mjs\nslots:\n  reranker: needy\n`);
    const e = await configError(file);
    assert.match(e.message, /plugins\[3\] \(needs-missing\) reranker "needy": dependency "vectors" \(refdesk:core\.vectors\) is not provided/);
  });

  test('structural errors: unknown top-level key, bad YAML, missing plugins', async () => {
    let e = await configError(writeConfig('typo.yaml', `plugins:${BASE_PLUGINS}\nslot:\n  store: embedded\n`));
    assert.match(e.message, /typo\.yaml: unknown property "slot"/);
    e = await configError(writeConfig('yaml.yaml', `plugins: [\n  - use: x\n`));
    assert.match(e.message, /yaml\.yaml: not valid YAML/);
    e = await configError(writeConfig('empty.yaml', `slots: {}\n`));
    assert.match(e.message, /missing required property "plugins"/);
    e = await configError(join(dir, 'nope.yaml'));
    assert.match(e.message, /nope\.yaml: cannot read the configuration file/);
  });
});

describe('built-in plugins resolve wherever the config file lives', () => {
  const DEFAULT_YAML = readFileSync(join(ROOT, 'config', 'default.yaml'), 'utf8');

  test('config/default.yaml copied to another folder still builds (its ../plugins/... paths fall back to the built-ins)', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'refdesk-copied-config-'));
    try {
      const file = join(elsewhere, 'refdesk.yaml');
      writeFileSync(file, DEFAULT_YAML);
      const kernel = await createKernel(file, { env: { dataDir, mode: 'reader' }, logger: quiet });
      assert.deepEqual([...kernel.sources.keys()].sort(), ['confluence', 'git', 'llmstxt', 'npm', 'openapi', 'packages', 'pypi', 'upload', 'website']);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  test('bare built-in names and ./plugins/<name> paths', async () => {
    const file = writeConfig('bare.yaml', `plugins:\n  - use: store-embedded\n  - use: ./plugins/chunker-markdown\n  - use: plugins/source-upload\n`);
    // `plugins/source-upload` (no ./) is a package name to Node: refused with what to write instead.
    let e = await configError(file);
    assert.match(e.message, /plugins\[2\] \(plugins\/source-upload\): module not found: no built-in plugin and no installed npm package is named "plugins\/source-upload"/);
    writeFileSync(file, `plugins:\n  - use: store-embedded\n  - use: ./plugins/chunker-markdown\n  - use: source-upload\n`);
    const kernel = await createKernel(file, { env: { dataDir, mode: 'reader' }, logger: quiet });
    assert.ok(kernel.store);
    assert.deepEqual([...kernel.sources.keys()], ['upload']);
    assert.ok(kernel.chunkerFor('markdown'));
    e = await configError(writeConfig('nope.yaml', `plugins:${BASE_PLUGINS}\n  - use: ./plugins/source-nope/index.ts\n`));
    assert.match(e.message, /plugins\[3\] \(\.\/plugins\/source-nope\/index\.ts\): module not found: nothing at .*plugins\/source-nope\/index\.ts .* and no built-in plugin "source-nope"/);
  });

  test('a file beside the config file wins over a built-in of the same name', async () => {
    const local = mkdtempSync(join(tmpdir(), 'refdesk-local-plugin-'));
    try {
      mkdirSync(join(local, 'plugins', 'source-upload'), { recursive: true });
      writeFileSync(join(local, 'plugins', 'source-upload', 'index.js'), `export default { hello: 'local' };`);
      const file = join(local, 'refdesk.yaml');
      writeFileSync(file, `plugins:${BASE_PLUGINS.replace(builtin('source-upload'), './plugins/source-upload')}\n`);
      const e = await configError(file);
      assert.match(e.message, /plugins\[2\] \(\.\/plugins\/source-upload\): the module's default export is not a Refdesk plugin/);
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  });

  test('invalid YAML: the line and the parser\'s reason, and never the text of the file', async () => {
    const e = await configError(writeConfig('leaky.yaml', `plugins:\n  - use: store-embedded\n    options:\n      embedded: { key: "sk-PLANTED-SECRET\n`));
    assert.match(e.message, /leaky\.yaml: not valid YAML \(line \d+: [^)]+\); fix the file or set REFDESK_CONFIG/);
    assert.doesNotMatch(e.message, /PLANTED/);
  });
});
