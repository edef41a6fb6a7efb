/** The audit role of the Store contract (AuditStore): entries appended, listed newest first by pages. */
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { AuditEntryInput, AuditStore } from '../../contracts.ts';
import { storeTests, type MakeStore } from './shared.ts';

/** Audit entry i, one minute after entry i - 1. */
export function sampleAuditEntry(i: number): AuditEntryInput {
  return {
    at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    actor: 'admin:operator',
    action: 'keys.create',
    target: `key_${i}`,
    outcome: 'success',
    client: '127.0.0.1',
    details: { n: i },
  };
}

export function runAuditStoreContract(name: string, makeStore: MakeStore<AuditStore>): void {
  const storeTest = storeTests(makeStore);
  describe(`Store contract, audit: ${name}`, () => {
    storeTest('entries come back newest first, at most limit, paged by id with before', async (store) => {
      assert.deepEqual(await store.listAudit({ limit: 10 }), []);
      const saved = [];
      for (let i = 1; i <= 5; i++) saved.push(await store.appendAudit(sampleAuditEntry(i)));
      for (let i = 1; i < saved.length; i++) assert.ok(saved[i].id > saved[i - 1].id, 'ids increase with time');
      assert.deepEqual(saved[0], { ...sampleAuditEntry(1), id: saved[0].id });
      const newest = await store.listAudit({ limit: 2 });
      assert.deepEqual(newest.map((e) => e.target), ['key_5', 'key_4']);
      const next = await store.listAudit({ limit: 10, before: newest[1].id });
      assert.deepEqual(next.map((e) => e.target), ['key_3', 'key_2', 'key_1']);
      assert.deepEqual(next[0].details, { n: 3 });
      assert.deepEqual(next[0], saved[2]);
    });
  });
}
