import { openStateStore } from "./open.js";
import { asyncStateStoreContract } from "./port.test-kit.js";
import { asyncSqliteStateStore } from "./sqlite-async.js";
import { tempDir } from "./test-support/fixtures.js";

asyncStateStoreContract("sqlite", () => {
  const tmp = tempDir();
  const store = asyncSqliteStateStore(openStateStore({ path: tmp.dbPath }));
  return Promise.resolve({
    store,
    other: () => Promise.resolve(asyncSqliteStateStore(openStateStore({ path: tmp.dbPath }))),
    async destroy() {
      await store.close();
      tmp.cleanup();
    },
  });
});
