/**
 * The PostgreSQL store's roles that do not need builds, each on its Store contract suite on
 * Debian's PostgreSQL server (a throwaway cluster for this file, a fresh database per test):
 * jobs (with the catalog it reads), API keys, sessions, audit, settings. The catalog and build
 * suites run on the whole store in contract.test.ts.
 */
import { test } from 'node:test';
import type { Store } from '../../../core/contracts.ts';
import {
  runApiKeyStoreContract,
  runAuditStoreContract,
  runJobStoreContract,
  runSessionStoreContract,
  runSettingsStoreContract,
} from '../../../core/testing/store-contract.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { postgres } from './helpers.ts';

const skip = postgresSkipReason();
if (skip) {
  test('PostgreSQL store role suites', { skip }, () => {});
} else {
  runJobStoreContract('postgres', postgres<Store>((s) => s));
  runApiKeyStoreContract('postgres', postgres<Store>((s) => s));
  runSessionStoreContract('postgres', postgres<Store>((s) => s));
  runAuditStoreContract('postgres', postgres<Store>((s) => s));
  runSettingsStoreContract('postgres', postgres<Store>((s) => s));
  // The role objects alone pass their role's suite, as the embedded store's do.
  runApiKeyStoreContract('postgres apiKeys role object', postgres((s) => s.apiKeys));
  runSessionStoreContract('postgres sessions role object', postgres((s) => s.sessions));
  runAuditStoreContract('postgres audit role object', postgres((s) => s.audit));
  runSettingsStoreContract('postgres settings role object', postgres((s) => s.settings));
}
