/**
 * The session role of the Store contract (SessionStore): the one admin account and its
 * sessions.
 */
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { SessionRecord, SessionStore } from '../../contracts.ts';
import { storeTests, type MakeStore } from './shared.ts';

export function sampleSession(idHash: string, extra: Partial<SessionRecord> = {}): SessionRecord {
  return {
    idHash,
    username: 'operator',
    createdAt: '2026-01-01T00:00:00.000Z',
    lastSeenAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2999-01-01T00:00:00.000Z',
    mustChangeCredentials: false,
    client: '127.0.0.1',
    ...extra,
  };
}

export function runSessionStoreContract(name: string, makeStore: MakeStore<SessionStore>): void {
  const storeTest = storeTests(makeStore);
  const session = sampleSession;
  describe(`Store contract, sessions: ${name}`, () => {
    storeTest('the admin account starts with the factory credentials (null), is replaced, and returns to them', async (store) => {
      assert.equal(await store.getAdminAccount(), null, 'no account: the factory credentials');
      await store.setAdminAccount({ username: 'operator', passwordHash: 'scrypt$1$1$1$a$b', updatedAt: '2026-01-01T00:00:00.000Z' });
      assert.equal((await store.getAdminAccount())?.username, 'operator');
      await store.setAdminAccount({ username: 'second', passwordHash: 'scrypt$1$1$1$c$d', updatedAt: '2026-01-02T00:00:00.000Z' });
      assert.deepEqual(await store.getAdminAccount(), { username: 'second', passwordHash: 'scrypt$1$1$1$c$d', updatedAt: '2026-01-02T00:00:00.000Z' });
      await store.setAdminAccount(null);
      assert.equal(await store.getAdminAccount(), null);
    });

    storeTest('sessions are created, changed, deleted one or all but one; expired ones go when a new one is created', async (store) => {
      await store.createSession(session('a'));
      await store.createSession(session('b', { mustChangeCredentials: true }));
      await store.createSession(session('c'));
      await store.updateSession('b', { mustChangeCredentials: false, username: 'renamed', lastSeenAt: '2026-01-01T01:00:00.000Z' });
      assert.deepEqual(await store.getSession('b'), session('b', { username: 'renamed', lastSeenAt: '2026-01-01T01:00:00.000Z' }));
      assert.equal(await store.deleteSessions({ idHash: 'a' }), 1);
      assert.equal(await store.getSession('a'), null);
      assert.equal(await store.deleteSessions({ exceptIdHash: 'b' }), 1);
      assert.ok(await store.getSession('b'));
      assert.equal(await store.getSession('c'), null);
      // Sessions past their absolute expiry go when a new one is created.
      await store.createSession(session('old', { expiresAt: '2000-01-01T00:00:00.000Z' }));
      await store.createSession(session('new'));
      assert.equal(await store.getSession('old'), null);
      assert.equal(await store.deleteSessions({ exceptIdHash: null }), 2);
    });
  });
}
