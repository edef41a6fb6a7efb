/**
 * The embedded store's admin account, sessions and audit log (schema 4): durable where they must
 * be, batched where they come with every request (session touches, audit entries), and added to
 * a version-3 data file by migration without touching what it holds. What every store does with
 * them is the session and audit suites of the Store contract (core/testing/store-contracts/).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sampleAuditEntry, sampleSession } from '../../../core/testing/store-contract.ts';
import { loadSqlJs } from '../../../plugins/store-embedded/sqlite.ts';
import { makeStore, tempDataDir } from './helpers.ts';

const session = sampleSession;
const entry = sampleAuditEntry;

describe('store: admin account, sessions, audit log', () => {
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
