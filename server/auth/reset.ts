/**
 * Credential recovery (`refdesk account reset`): the admin account goes back to the factory
 * credentials (admin / refdesk, forced change, accepted only from this machine or with the setup
 * token), every session ends, and a setup token is made. Only whoever can read DATA_DIR may do it:
 * the CLI on the data directory, or through a running server with its local CLI token.
 */
import type { Store } from '../../core/contracts.ts';
import { ensureSetupToken } from './local-files.ts';

export async function resetAdminAccount(store: Store, dataDir: string): Promise<{ sessionsEnded: number }> {
  await store.setAdminAccount(null);
  const sessionsEnded = await store.deleteSessions({ exceptIdHash: null });
  await ensureSetupToken(dataDir);
  return { sessionsEnded };
}
