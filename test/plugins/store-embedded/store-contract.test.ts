import type { Store } from '../../../core/contracts.ts';
import {
  runApiKeyStoreContract,
  runAuditStoreContract,
  runSessionStoreContract,
  runSettingsStoreContract,
  runStoreContract,
  type MakeStore,
} from '../../../core/testing/store-contract.ts';
import type { EmbeddedStore } from '../../../plugins/store-embedded/embedded-store.ts';
import { makeStore, tempDataDir } from './helpers.ts';

/** A fresh embedded store, open; `pick` hands the suite the whole store or one of its role objects. */
function embedded<S>(pick: (store: EmbeddedStore) => S): MakeStore<S> {
  return async () => {
    const data = await tempDataDir();
    const store = makeStore(data.dir, 'writer', { flushIntervalMs: 50 });
    await store.open();
    return {
      store: pick(store),
      async cleanup() {
        await store.close();
        await data.remove();
      },
    };
  };
}

runStoreContract('embedded', embedded<Store>((s) => s));

// The role objects alone pass their role's suite: a role is usable (and replaceable) by itself.
runApiKeyStoreContract('embedded apiKeys role object', embedded((s) => s.apiKeys));
runSessionStoreContract('embedded sessions role object', embedded((s) => s.sessions));
runAuditStoreContract('embedded audit role object', embedded((s) => s.audit));
runSettingsStoreContract('embedded settings role object', embedded((s) => s.settings));
