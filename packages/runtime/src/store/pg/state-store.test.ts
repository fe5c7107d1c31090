import { asyncStateStoreContract } from "../port.test-kit.js";
import { pgStateStore } from "./state-store.js";
import { scratchPgState } from "./test-kit.js";

asyncStateStoreContract("postgres", async (options) => {
  const scratch = await scratchPgState();
  const deps = options?.clock ? { clock: options.clock } : {};
  const store = pgStateStore(await scratch.open(), deps);
  return {
    store,
    other: async () => pgStateStore(await scratch.open(), deps),
    destroy: () => scratch.drop(),
  };
});
