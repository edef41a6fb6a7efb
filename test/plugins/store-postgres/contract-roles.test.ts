/**
 * The PostgreSQL store's role objects alone, each on its Store contract suite on Debian's
 * PostgreSQL server (a throwaway cluster for this file, a fresh database per test): API keys,
 * sessions, audit, settings (the jobs role reads the catalog: its suite runs on the whole store).
 * The whole store runs every suite in contract.test.ts.
 */
import { test } from 'node:test';
import {
  runApiKeyStoreContract,
  runAuditStoreContract,
  runSessionStoreContract,
  runSettingsStoreContract,
} from '../../../core/testing/store-contract.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { postgres } from './helpers.ts';

const skip = postgresSkipReason();
if (skip) {
  test('PostgreSQL store role suites', { skip }, () => {});
} else {
  // The role objects alone pass their role's suite, as the embedded store's do (a role is usable, and replaceable, by itself).
  runApiKeyStoreContract('postgres apiKeys role object', postgres((s) => s.apiKeys));
  runSessionStoreContract('postgres sessions role object', postgres((s) => s.sessions));
  runAuditStoreContract('postgres audit role object', postgres((s) => s.audit));
  runSettingsStoreContract('postgres settings role object', postgres((s) => s.settings));
}
