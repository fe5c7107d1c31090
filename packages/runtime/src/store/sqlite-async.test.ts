import { openStateStore } from "./open.js";
import { asyncStateStoreContract } from "./port.test-kit.js";
import { asyncSqliteStateStore } from "./sqlite-async.js";
import { tempDir } from "./test-support/fixtures.js";

asyncStateStoreContract("sqlite", (options) => {
  const tmp = tempDir();
  const open = () =>
    asyncSqliteStateStore(
      openStateStore({ path: tmp.dbPath, ...(options?.clock ? { clock: options.clock } : {}) }),
    );
  const store = open();
  return Promise.resolve({
    store,
    other: () => Promise.resolve(open()),
    async destroy() {
      await store.close();
      tmp.cleanup();
    },
  });
});
