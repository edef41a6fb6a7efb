/**
 * The plugin test kit: everything a plugin author needs to test a plugin with no server and no
 * network.
 *
 * - `runSource`: run a Source the way the kernel does and collect its documents, logs, progress.
 * - `runSourceContract`, `runStoreContract`: reusable node:test suites every Source / Store runs;
 *   a store written one role at a time runs that role's suite (`runCatalogStoreContract`, `runBuildStoreContract`,
 *   `runJobStoreContract`, `runApiKeyStoreContract`, `runSessionStoreContract`, `runAuditStoreContract`,
 *   `runSettingsStoreContract`).
 * - `MemoryStore`: the whole Store contract in memory.
 * - `createFakeFetch`, `createFakeEmbedder`, `createFakeClock`, `createTestLogger`: fake services.
 */
export * from './run-source.ts';
export * from './store-contract.ts';
export * from './source-contract.ts';
export * from './memory-store.ts';
export {
  createFakeClock,
  createFakeEmbedder,
  createFakeFetch,
  cosineSimilarity,
  type FakeClock,
  type FakeEmbedder,
  type FakeEmbedderCall,
  type FakeEmbedderOptions,
  type FakeFetch,
  type FakeFetchCall,
  type FakeFetchOptions,
  type FakeRoute,
} from './fakes.ts';
