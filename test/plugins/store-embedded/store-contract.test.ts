import { runStoreContract } from '../../../core/testing/store-contract.ts';
import { makeStore, tempDataDir } from './helpers.ts';

runStoreContract('embedded', async () => {
  const data = await tempDataDir();
  const store = makeStore(data.dir, 'writer', { flushIntervalMs: 50 });
  await store.open();
  return {
    store,
    async cleanup() {
      await store.close();
      await data.remove();
    },
  };
});
