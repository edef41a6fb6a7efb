/**
 * The settings role of the Store contract (SettingsStore): JSON values by key.
 */
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { SettingsStore } from '../../contracts.ts';
import { errorCode, storeTests, type MakeStore } from './shared.ts';

export function runSettingsStoreContract(name: string, makeStore: MakeStore<SettingsStore>): void {
  const storeTest = storeTests(makeStore);
  describe(`Store contract, settings: ${name}`, () => {
    storeTest('settings hold JSON values; undefined removes them; bad keys are refused', async (store) => {
      assert.equal(await store.getSetting('mcp.requireKey'), undefined);
      await store.setSetting('mcp.requireKey', true);
      await store.setSetting('policy', { sourceTypes: { websites: false }, list: ['/a/b'] });
      assert.equal(await store.getSetting('mcp.requireKey'), true);
      assert.deepEqual(await store.getSetting('policy'), { sourceTypes: { websites: false }, list: ['/a/b'] });
      await store.setSetting('mcp.requireKey', undefined);
      assert.equal(await store.getSetting('mcp.requireKey'), undefined);
      await assert.rejects(store.setSetting('bad key!', 1), errorCode('invalid_request'));
    });
  });
}
