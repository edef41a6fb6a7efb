/**
 * The API key role of the Store contract (ApiKeyStore): key records, found by hash, revoked.
 */
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiKeyStore } from '../../contracts.ts';
import { ISO_MS, errorCode, storeTests, type MakeStore } from './shared.ts';

export function runApiKeyStoreContract(name: string, makeStore: MakeStore<ApiKeyStore>): void {
  const storeTest = storeTests(makeStore);
  describe(`Store contract, API keys: ${name}`, () => {
    storeTest('API keys: created, found by hash, listed oldest first, revoked idempotently; duplicates refused', async (store) => {
      const a = await store.createApiKey({ id: 'key_a', name: 'ci', plan: 'free', role: 'member', prefix: 'rdk_AAAA', hash: 'h'.repeat(64) });
      assert.deepEqual({ ...a, createdAt: '' }, { id: 'key_a', name: 'ci', plan: 'free', role: 'member', prefix: 'rdk_AAAA', createdAt: '', revokedAt: null });
      assert.match(a.createdAt, ISO_MS);
      assert.equal('hash' in a, false, 'the hash is never handed out');
      await store.createApiKey({ id: 'key_b', name: '', plan: 'pro', role: 'admin', prefix: 'rdk_BBBB', hash: 'g'.repeat(64) });
      await assert.rejects(store.createApiKey({ id: 'key_c', name: '', plan: 'pro', role: 'admin', prefix: 'rdk_CCCC', hash: 'g'.repeat(64) }), errorCode('already_exists'));
      await assert.rejects(store.createApiKey({ id: 'key_d', name: '', plan: 'pro', role: 'owner' as never, prefix: 'rdk_D', hash: 'd'.repeat(64) }), errorCode('invalid_request'));
      assert.equal((await store.findApiKeyByHash('g'.repeat(64)))?.id, 'key_b');
      assert.equal(await store.findApiKeyByHash('x'), null);
      assert.deepEqual((await store.listApiKeys()).map((k) => k.id), ['key_a', 'key_b']);
      const revoked = await store.revokeApiKey('key_a');
      assert.match(revoked?.revokedAt ?? '', ISO_MS);
      assert.equal((await store.revokeApiKey('key_a'))?.revokedAt, revoked?.revokedAt);
      assert.equal((await store.findApiKeyByHash('h'.repeat(64)))?.revokedAt, revoked?.revokedAt);
      assert.equal(await store.revokeApiKey('key_zzz'), null);
    });
  });
}
