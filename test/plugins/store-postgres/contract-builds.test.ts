/**
 * The PostgreSQL store's builds role (with the catalog and jobs roles it reads) on its Store
 * contract suites, on Debian's PostgreSQL server: a throwaway cluster for this file, a fresh
 * database and data directory per test (test/plugins/store-postgres/helpers.ts).
 */
import { test } from 'node:test';
import type { Store } from '../../../core/contracts.ts';
import { runBuildStoreContract, runCatalogStoreContract } from '../../../core/testing/store-contract.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { postgres } from './helpers.ts';

const skip = postgresSkipReason();
if (skip) {
  test('PostgreSQL store: builds and catalog suites', { skip }, () => {});
} else {
  runBuildStoreContract('postgres', postgres<Store>((s) => s));
  runCatalogStoreContract('postgres', postgres<Store>((s) => s));
}
