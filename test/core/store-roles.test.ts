import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newContainer, resolveDeps } from '../../core/di.ts';
import { registerStore, StoreTokens, Tokens } from '../../core/di-tokens.ts';
import { MemoryStore } from '../../core/testing/memory-store.ts';
import { delegateStoreRoles } from '../../core/store-roles.ts';

test('registerStore provides the store under Tokens.Store and every role token', () => {
  const container = newContainer();
  const store = new MemoryStore();
  registerStore(container, store);
  const deps = resolveDeps(container.createChildContainer(), { store: Tokens.Store, ...StoreTokens }, 'test');
  assert.deepEqual(Object.keys(deps).sort(), ['apiKeys', 'audit', 'builds', 'catalog', 'jobs', 'sessions', 'settings', 'store']);
  for (const value of Object.values(deps)) assert.equal(value, store);
});

test('a definition that needs one role and finds no store gets the dependency error', () => {
  assert.throws(() => resolveDeps(newContainer(), { jobs: StoreTokens.jobs }, 'plugin x'), /plugin x: dependency "jobs" \(refdesk:core\.store\.jobs\) is not provided/);
});

test('delegateStoreRoles: the store calls its role objects; an optional method a role lacks stays absent; a missing one is refused', async () => {
  const store = new MemoryStore();
  await store.open();
  assert.equal(typeof store.upsertLibrary, 'function');
  assert.equal(store.segmentFile, undefined, 'the memory builds role has no segment files');
  await store.upsertLibrary({ id: '/docs/a', title: 'A', source: { kind: 'upload', spec: {} } });
  assert.equal((await store.catalog.getLibrary('/docs/a'))?.title, 'A', 'the catalog role holds what the store was given');
  const job = await store.jobs.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' });
  assert.equal((await store.getJob(job.id))?.id, job.id);

  class Incomplete {}
  class NoJobs {
    async createJob() {}
  }
  assert.throws(
    () => delegateStoreRoles(Incomplete, { ...roleClassesOf(store), jobs: NoJobs as never }),
    /Incomplete: the jobs role \(NoJobs\) has no method updateJob/,
  );
});

function roleClassesOf(store: MemoryStore) {
  const of = <T extends object>(o: T) => o.constructor as new () => T;
  return {
    catalog: of(store.catalog),
    builds: of(store.builds),
    jobs: of(store.jobs),
    apiKeys: of(store.apiKeys),
    sessions: of(store.sessions),
    audit: of(store.audit),
    settings: of(store.settings),
  } as Parameters<typeof delegateStoreRoles>[1];
}
