/**
 * The embedded store's admin account, sessions and audit log (schema 4): durable where they must
 * be, batched where they come with every request (session touches, audit entries), and added to
 * a version-3 data file by migration without touching what it holds.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionRecord, Store } from '../../../core/contracts.ts';
import { MemoryStore } from '../../../core/testing/memory-store.ts';
import { loadSqlJs } from '../../../plugins/store-embedded/sqlite.ts';
import { makeStore, tempDataDir } from './helpers.ts';

const session = (idHash: string, extra: Partial<SessionRecord> = {}): SessionRecord => ({
  idHash,
  username: 'operator',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastSeenAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2999-01-01T00:00:00.000Z',
  mustChangeCredentials: false,
  client: '127.0.0.1',
  ...extra,
});

const entry = (i: number) => ({ at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(), actor: 'admin:operator', action: 'keys.create', target: `key_${i}`, outcome: 'success' as const, client: '127.0.0.1', details: { n: i } });

/** What every Store does with the account, sessions and audit log. */
async function behaves(store: Store): Promise<void> {
  assert.equal(await store.getAdminAccount(), null, 'no account: the factory credentials');
  await store.setAdminAccount({ username: 'operator', passwordHash: 'scrypt$1$1$1$a$b', updatedAt: '2026-01-01T00:00:00.000Z' });
  assert.equal((await store.getAdminAccount())?.username, 'operator');
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

  for (let i = 1; i <= 5; i++) await store.appendAudit(entry(i));
  const newest = await store.listAudit({ limit: 2 });
  assert.deepEqual(newest.map((e) => e.target), ['key_5', 'key_4']);
  const next = await store.listAudit({ limit: 10, before: newest[1].id });
  assert.deepEqual(next.map((e) => e.target), ['key_3', 'key_2', 'key_1']);
  assert.deepEqual(next[0].details, { n: 3 });
}

describe('store: admin account, sessions, audit log', () => {
  test('MemoryStore and EmbeddedStore behave alike', async () => {
    const memory = new MemoryStore();
    await memory.open();
    await behaves(memory);
    const tmp = await tempDataDir();
    const store = makeStore(tmp.dir);
    try {
      await store.open();
      await behaves(store);
    } finally {
      await store.close();
      await tmp.remove();
    }
  });

  test('embedded: session touches and audit entries are batched (no export per call); the account and sessions survive a restart', async () => {
    const tmp = await tempDataDir();
    let store = makeStore(tmp.dir, 'writer', { flushIntervalMs: 600_000 });
    try {
      await store.open();
      await store.setAdminAccount({ username: 'operator', passwordHash: 'scrypt$1$1$1$a$b', updatedAt: '2026-01-01T00:00:00.000Z' });
      await store.createSession(session('s1'));
      const file = join(tmp.dir, 'refdesk.sqlite');
      const before = readFileSync(file);
      for (let i = 1; i <= 50; i++) {
        await store.updateSession('s1', { lastSeenAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() });
        await store.appendAudit(entry(i));
      }
      assert.ok(readFileSync(file).equals(before), 'the data file was not rewritten by touches and audit entries');
      await store.flush();
      assert.ok(!readFileSync(file).equals(before), 'flush writes them');
      await store.close();
      store = makeStore(tmp.dir);
      await store.open();
      assert.equal((await store.getAdminAccount())?.username, 'operator');
      assert.equal((await store.getSession('s1'))?.lastSeenAt, '2026-01-01T00:50:00.000Z');
      assert.equal((await store.listAudit({ limit: 100 })).length, 50);
    } finally {
      await store.close();
      await tmp.remove();
    }
  });

  test('embedded: a version-3 data file gets the new tables and keeps its data', async () => {
    const tmp = await tempDataDir();
    let store = makeStore(tmp.dir);
    try {
      await store.open();
      await store.setSetting('kept', { a: 1 });
      await store.close();
      // Make it a version-3 file: no admin tables, schema_version 3.
      const file = join(tmp.dir, 'refdesk.sqlite');
      const SQL = await loadSqlJs();
      const db = new SQL.Database(readFileSync(file));
      db.exec("DROP TABLE admin_account; DROP TABLE sessions; DROP TABLE audit_log; UPDATE meta SET value = '3' WHERE key = 'schema_version';");
      writeFileSync(file, db.export());
      db.close();
      store = makeStore(tmp.dir);
      await store.open();
      assert.deepEqual(await store.getSetting('kept'), { a: 1 });
      assert.equal(await store.getAdminAccount(), null);
      await store.createSession(session('x'));
      await store.appendAudit(entry(1));
      assert.equal((await store.listAudit({ limit: 5 })).length, 1);
    } finally {
      await store.close();
      await tmp.remove();
    }
  });
});
