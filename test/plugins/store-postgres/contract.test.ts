/**
 * The whole Store contract (every role's suite and the lifecycle rule) on the PostgreSQL store,
 * on Debian's PostgreSQL server: a throwaway cluster for this file, a fresh database and data
 * directory per test (helpers.ts). The same suites run on the embedded store
 * (test/plugins/store-embedded/store-contract.test.ts).
 */
import { test } from 'node:test';
import type { Store } from '../../../core/contracts.ts';
import { runStoreContract } from '../../../core/testing/store-contract.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { postgres } from './helpers.ts';

const skip = postgresSkipReason();
if (skip) test('PostgreSQL store: the Store contract', { skip }, () => {});
else runStoreContract('postgres', postgres<Store>((s) => s));
