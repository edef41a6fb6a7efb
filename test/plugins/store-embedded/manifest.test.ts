import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validate } from '../../../core/validate.ts';
import plugin from '../../../plugins/store-embedded/index.ts';
import { EmbeddedStore } from '../../../plugins/store-embedded/embedded-store.ts';
import { sortVersionsNewestFirst } from '../../../core/version-order.ts';
import { memoryLogger, realClock } from './helpers.ts';

test('the manifest declares the embedded store with validated options and defaults', async () => {
  assert.equal(plugin.__refdeskPlugin, true);
  assert.equal(plugin.name, '@refdesk/store-embedded');
  assert.equal(plugin.kernel, '^1.0.0');
  const [def] = plugin.definitions;
  assert.equal(def.role, 'store');
  assert.equal(def.kind, 'embedded');
  const options: Record<string, unknown> = {};
  assert.deepEqual(validate(def.options, options, 'store.options'), []);
  assert.deepEqual(options, { fileName: 'refdesk.sqlite', flushIntervalMs: 2000, indexCacheSize: 16, segmentCacheBytes: 134217728 });
  assert.deepEqual(validate(def.options, { bogus: true }, 'store.options'), ['store.options: unknown property "bogus"']);
  assert.equal(validate(def.options, { fileName: 'a/b.sqlite' }, 'store.options').length, 1);
  assert.equal(validate(def.options, { flushIntervalMs: 'soon' }, 'store.options').length, 1);
  const store = await def.create(options, { env: { dataDir: '/nonexistent', mode: 'reader' }, logger: memoryLogger(), clock: realClock });
  assert.ok(store instanceof EmbeddedStore);
});

test('pinned versions sort newest first: by number when they look like versions, else by date', () => {
  const v = (version: string, lastUpdateDate: string | null = null) => ({ version, lastUpdateDate });
  const order = (items: ReturnType<typeof v>[]) => sortVersionsNewestFirst(items).map((i) => i.version);
  assert.deepEqual(order([v('1.9.0'), v('1.10.0'), v('v2'), v('1.10.0-beta.2'), v('1.10.0-beta.10'), v('2.x')]), [
    '2.x',
    'v2',
    '1.10.0',
    '1.10.0-beta.10',
    '1.10.0-beta.2',
    '1.9.0',
  ]);
  assert.deepEqual(order([v('stable', '2024-01-01T00:00:00.000Z'), v('next', '2025-01-01T00:00:00.000Z'), v('v1', '2023-01-01T00:00:00.000Z')]), [
    'next',
    'stable',
    'v1',
  ]);
});
