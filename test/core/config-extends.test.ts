/**
 * Config files that compose (issue 23 item 5): `extends: default` or a path, plugins merged by
 * name (added, removed, re-configured), other sections merged key by key; chains, cycles,
 * missing files and bad paths, each error naming the file and the path inside it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, readComposedConfig } from '../../core/config.ts';
import { ConfigError } from '../../core/errors.ts';
import { pluginEntryName } from '../../core/config-compose.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NOTES = join(ROOT, 'test/fixtures/custom-source/notes-source.ts');
let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'refdesk-extends-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, yaml: string): string {
  const file = join(dir, name);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, yaml);
  return file;
}

async function refused(file: string): Promise<string> {
  await assert.rejects(loadConfig(file), (e: unknown) => e instanceof ConfigError);
  return loadConfig(file).then(
    () => '',
    (e: Error) => e.message,
  );
}

describe('extends', () => {
  test('extends: default, one plugin added, one removed, one re-configured; other sections merge key by key', async () => {
    const file = write(
      'my.yaml',
      [
        'extends: default',
        'remove: [source-confluence]',
        'plugins:',
        '  - use: ../plugins/source-website/index.ts   # the same plugin, named as default.yaml names it: re-configured',
        '    options:',
        '      website:',
        '        maxPages: 7',
        `  - use: ${NOTES}`,
        '    options:',
        '      notes:',
        '        greeting: Ahoy',
        '  - name: source-llms-txt',
        '    enabled: false',
        'query:',
        '  defaultTokens: 1234',
        'network:',
        "  allowHosts: ['127.0.0.1']",
        '',
      ].join('\n'),
    );
    const loaded = await loadConfig(file);
    const sources = [...loaded.definitions.get('source')!.keys()];
    assert.ok(!sources.includes('confluence'), 'removed');
    assert.ok(!sources.includes('llmstxt'), 'enabled: false');
    assert.ok(sources.includes('git') && sources.includes('notes') && sources.includes('website'), sources.join(','));
    assert.equal(loaded.definitions.get('source')!.get('website')!.options.maxPages, 7);
    assert.equal(loaded.definitions.get('source')!.get('website')!.options.concurrency, 4, "the default's other website options stay");
    assert.equal(loaded.definitions.get('source')!.get('notes')!.options.greeting, 'Ahoy');
    assert.equal(loaded.config.query.defaultTokens, 1234);
    assert.equal(loaded.config.query.maxTokens, 100000, 'the default query section is merged, not replaced');
    assert.deepEqual(loaded.config.network.allowHosts, ['127.0.0.1']);
    assert.equal(loaded.config.slots.store, 'embedded');
    assert.deepEqual(loaded.config.slots.chunkers, ['markdown', 'openapi-operations']);
  });

  test('a chain of paths: each file relative to its own folder, the last word wins', async () => {
    write('team/plugin/notes.ts', `export { default } from ${JSON.stringify(NOTES)};\n`);
    write('team/base.yaml', ['extends: ../my-default.yaml', 'plugins:', '  - use: ./plugin/notes.ts', '    name: notes', '    options:', '      notes:', '        greeting: Base', ''].join('\n'));
    write('my-default.yaml', ['extends: default', 'remove: [source-confluence]', ''].join('\n'));
    const file = write('app/refdesk.yaml', ['extends: ../team/base.yaml', 'plugins:', '  - name: notes', '    options:', '      notes:', '        greeting: App', ''].join('\n'));
    const { chain, origins } = readComposedConfig(file);
    assert.equal(chain.length, 4);
    assert.match(chain[3], /default\.yaml$/);
    const notes = origins.find((o) => o.name === 'notes')!;
    assert.match(notes.file, /app\/refdesk\.yaml$/);
    assert.match(notes.useDir, /team$/, 'use stays relative to the file that gave it');
    const loaded = await loadConfig(file);
    assert.equal(loaded.definitions.get('source')!.get('notes')!.options.greeting, 'App');
    assert.ok(!loaded.definitions.get('source')!.has('confluence'));
  });

  test('a cycle is refused, naming the chain', async () => {
    write('cycle-a.yaml', 'extends: ./cycle-b.yaml\n');
    write('cycle-b.yaml', 'extends: ./cycle-a.yaml\n');
    const m = await refused(join(dir, 'cycle-a.yaml'));
    assert.match(m, /cycle-b\.yaml: extends: a cycle: .*cycle-a\.yaml -> .*cycle-b\.yaml -> .*cycle-a\.yaml/);
  });

  test('a missing file: the file that names it, and why', async () => {
    const m = await refused(write('lost.yaml', 'extends: ./nowhere.yaml\n'));
    assert.match(m, /lost\.yaml: extends: cannot read the configuration file .*nowhere\.yaml \(it does not exist\)/);
  });

  test('bad paths name the file and the path in it', async () => {
    let m = await refused(write('bad-option.yaml', ['extends: default', 'plugins:', '  - name: source-git', '    options:', '      git:', '        attempts: 2', '  - name: source-website', '    options:', '      website:', '        maxPages: many', ''].join('\n')));
    assert.match(m, /bad-option\.yaml: plugin @refdesk\/source-website: plugins\[1\]\.options\.website\.maxPages: must be integer/);
    m = await refused(write('bad-section.yaml', ['extends: default', 'query:', '  defaultTokens: lots', ''].join('\n')));
    assert.match(m, /bad-section\.yaml: query\.defaultTokens: must be integer/);
    m = await refused(write('bad-remove.yaml', ['extends: default', 'remove: [source-nothing]', ''].join('\n')));
    assert.match(m, /bad-remove\.yaml: remove\[0\]: no plugin named "source-nothing" in .*default\.yaml \(its plugins: store-embedded, chunker-markdown/);
    m = await refused(write('bad-name.yaml', ['extends: default', 'plugins:', '  - name: source-notion', '    options: {}', ''].join('\n')));
    assert.match(m, /bad-name\.yaml: plugins\[0\]: no plugin named "source-notion" in .*default\.yaml to re-configure/);
    m = await refused(write('no-base.yaml', ['plugins:', '  - name: source-git', ''].join('\n')));
    assert.match(m, /no-base\.yaml: plugins\[0\]: "use" is required/);
    m = await refused(write('no-base-remove.yaml', ['remove: [source-git]', 'plugins:', `  - use: source-git`, ''].join('\n')));
    assert.match(m, /no-base-remove\.yaml: remove: this file extends no config/);
    m = await refused(write('nested/bad-use.yaml', ['extends: ../my-default.yaml', 'plugins:', '  - use: ./missing-plugin.ts', ''].join('\n')));
    assert.match(m, /nested\/bad-use\.yaml: plugins\[0\] \(\.\/missing-plugin\.ts\): module not found: nothing at .*nested\/missing-plugin\.ts/);
  });

  test('names: built-in paths and bare names are the folder name; packages their name; other paths resolved', () => {
    assert.equal(pluginEntryName({ use: '../plugins/source-git/index.ts' }, '/x/config'), 'source-git');
    assert.equal(pluginEntryName({ use: 'source-git' }, '/x'), 'source-git');
    assert.equal(pluginEntryName({ use: '@acme/refdesk-notion' }, '/x'), '@acme/refdesk-notion');
    assert.equal(pluginEntryName({ use: './notion/index.ts' }, '/x/config'), '/x/config/notion/index.ts');
    assert.equal(pluginEntryName({ use: './notion/index.ts', name: 'notion' }, '/x'), 'notion');
  });
});
