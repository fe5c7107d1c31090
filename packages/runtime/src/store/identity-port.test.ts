import { consoleStoreExtension } from "./console-store.js";
import { asyncSqliteIdentityStore } from "./identity-port.js";
import { identityStoreContract } from "./identity-port.test-kit.js";
import { openStateStore } from "./open.js";
import { sqliteExclusive } from "./sqlite-async.js";
import { tempDir } from "./test-support/fixtures.js";
import type { StateStore } from "./types.js";

identityStoreContract("sqlite", () => {
  const tmp = tempDir();
  const opened: StateStore[] = [];
  const open = () => {
    const state = openStateStore({ path: tmp.dbPath });
    opened.push(state);
    return asyncSqliteIdentityStore(
      state.attach(consoleStoreExtension),
      state.label,
      sqliteExclusive(state),
    );
  };
  return Promise.resolve({
    store: open(),
    other: () => Promise.resolve(open()),
    destroy() {
      for (const state of opened) state.close();
      tmp.cleanup();
      return Promise.resolve();
    },
  });
});
