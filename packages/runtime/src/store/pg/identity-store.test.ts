import { identityStoreContract } from "../identity-port.test-kit.js";
import { pgIdentityStore } from "./identity-store.js";
import { scratchPgState } from "./test-kit.js";

identityStoreContract("postgres", async () => {
  const scratch = await scratchPgState();
  return {
    store: pgIdentityStore(await scratch.open()),
    other: async () => pgIdentityStore(await scratch.open()),
    destroy: () => scratch.drop(),
  };
});
