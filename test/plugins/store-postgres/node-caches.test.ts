/**
 * What each node of the PostgreSQL store keeps in memory for per-request reads (API keys by
 * hash, settings), on Debian's PostgreSQL server with two stores on one database (two nodes):
 * repeated reads cost no query; a write on one node reaches the other through the change feed
 * (notify.ts: LISTEN, polling as the fallback), revoked keys and changed settings included.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { nextChange, withStores } from './helpers.ts';

const key = (id: string, hash: string) => ({ id, name: id, plan: 'free', role: 'member' as const, prefix: 'rdk_TEST', hash });

describe('store-postgres per-node caches on Debian PostgreSQL', { skip: postgresSkipReason() }, () => {
  test('API keys: found from memory; a key created or revoked on node A is seen by node B once told', () =>
    withStores(2, async (_url, a, b) => {
      const hash = 'a'.repeat(64);
      // B looks the hash up before the key exists: the miss is remembered too.
      assert.equal(await b.findApiKeyByHash(hash), null);
      const misses = b.apiKeys.byHash.stats.misses;
      assert.equal(await b.findApiKeyByHash(hash), null);
      assert.equal(b.apiKeys.byHash.stats.misses, misses, 'the second lookup is answered from memory');

      let told = nextChange(b, 'apiKey', 'key_1');
      await a.createApiKey(key('key_1', hash));
      await told;
      assert.equal((await b.findApiKeyByHash(hash))?.id, 'key_1');
      for (let i = 0; i < 10; i++) await b.findApiKeyByHash(hash);
      assert.equal(b.apiKeys.byHash.stats.misses, misses + 1, 'ten more requests, no query');

      told = nextChange(b, 'apiKey', 'key_1');
      const revoked = await a.revokeApiKey('key_1');
      await told;
      assert.equal((await b.findApiKeyByHash(hash))?.revokedAt, revoked?.revokedAt);
      assert.ok(revoked?.revokedAt);
      // What a caller does with a returned record does not change the node's memory.
      const record = (await b.findApiKeyByHash(hash))!;
      record.revokedAt = null;
      assert.ok((await b.findApiKeyByHash(hash))?.revokedAt);
    }));

  test('settings: read from memory; a change on node A is used by node B once told; removal too', () =>
    withStores(2, async (_url, a, b) => {
      assert.equal(await b.getSetting('mcp.requireKey'), undefined);
      let told = nextChange(b, 'settings', 'mcp.requireKey');
      await a.setSetting('mcp.requireKey', true);
      await told;
      assert.equal(await b.getSetting('mcp.requireKey'), true);

      await a.setSetting('policy', { list: ['/a/b'] });
      const policy = (await a.getSetting('policy')) as { list: string[] };
      policy.list.push('/mutated');
      assert.deepEqual(await a.getSetting('policy'), { list: ['/a/b'] }, 'callers get copies');
      const misses = a.settings.cache.stats.misses;
      for (let i = 0; i < 10; i++) await a.getSetting('policy');
      assert.equal(a.settings.cache.stats.misses, misses, 'repeated reads cost no query');

      told = nextChange(b, 'settings', 'mcp.requireKey');
      await a.setSetting('mcp.requireKey', undefined);
      await told;
      assert.equal(await b.getSetting('mcp.requireKey'), undefined);
    }));
});
