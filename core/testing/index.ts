/**
 * The plugin test kit (`refdesk/testing`): everything a plugin author needs to test a plugin with
 * no server and no network.
 *
 * - `runPlugin`: build a plugin's definition as the kernel does (options validated as the server
 *   validates them), wired with fakes for Fetch, Logger, Clock, Store, Env, Providers.
 * - `runSource`: run a Source the way the kernel does and collect its documents, logs, progress.
 * - Contract suites (node:test) every implementation runs: `runSourceContract`,
 *   `runChunkerContract`, `runEmbedderContract`, `runRerankerContract`, `runStoreContract`; a
 *   store written one role at a time runs that role's suite (`runCatalogStoreContract`,
 *   `runBuildStoreContract`, `runJobStoreContract`, `runApiKeyStoreContract`,
 *   `runSessionStoreContract`, `runAuditStoreContract`, `runSettingsStoreContract`).
 * - `MemoryStore`: the whole Store contract in memory.
 * - `createFakeFetch`, `createFakeEmbedder`, `createFakeClock`, `createTestLogger`,
 *   `FakeProviders`: fake services.
 */
export * from './run-plugin.ts';
export * from './run-source.ts';
export * from './store-contract.ts';
export * from './source-contract.ts';
export * from './chunker-contract.ts';
export * from './embedder-contract.ts';
export * from './reranker-contract.ts';
export * from './memory-store.ts';
export * from './fake-providers.ts';
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
