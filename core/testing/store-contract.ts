/**
 * Reusable node:test suites for the Store contract, one per role (core/contracts.ts), and
 * `runStoreContract`, which runs them all on a whole Store:
 *
 *   runStoreContract('embedded', async () => ({ store, cleanup }));
 *   runJobStoreContract('postgres jobs', async () => ({ store, cleanup })); // one role
 *
 * `makeStore` returns a fresh, empty store that is already open; `cleanup` releases it and its
 * data, and must also work when the test has already closed the store. The store's clock must
 * follow real time (a few tests wait a few milliseconds to order updates).
 */
import assert from 'node:assert/strict';
import type { Store } from '../contracts.ts';
import { runApiKeyStoreContract } from './store-contracts/api-keys.ts';
import { runAuditStoreContract } from './store-contracts/audit.ts';
import { runBuildStoreContract } from './store-contracts/builds.ts';
import { runCatalogStoreContract } from './store-contracts/catalog.ts';
import { runJobStoreContract } from './store-contracts/jobs.ts';
import { runSessionStoreContract } from './store-contracts/sessions.ts';
import { runSettingsStoreContract } from './store-contracts/settings.ts';
import { lib, storeTests, type MakeStore } from './store-contracts/shared.ts';

export { runApiKeyStoreContract, runAuditStoreContract, runBuildStoreContract, runCatalogStoreContract, runJobStoreContract, runSessionStoreContract, runSettingsStoreContract };
export { sampleAuditEntry } from './store-contracts/audit.ts';
export { sampleSession } from './store-contracts/sessions.ts';
export { sampleSnippet, type MakeStore, type StoreFixture } from './store-contracts/shared.ts';

/** Every role's suite, and the lifecycle rule, on one whole Store. */
export function runStoreContract(name: string, makeStore: MakeStore<Store>): void {
  runCatalogStoreContract(name, makeStore);
  runBuildStoreContract(name, makeStore);
  runJobStoreContract(name, makeStore);
  runApiKeyStoreContract(name, makeStore);
  runSessionStoreContract(name, makeStore);
  runAuditStoreContract(name, makeStore);
  runSettingsStoreContract(name, makeStore);
  storeTests(makeStore)(`Store contract, lifecycle: ${name}: after close, further calls fail`, async (store) => {
    await store.upsertLibrary(lib('/docs/koa'));
    await store.close();
    await assert.rejects(store.getLibrary('/docs/koa'));
    await assert.rejects(store.upsertLibrary(lib('/docs/other')));
  });
}
