import { dataStoreContract } from "./contract.test-kit.js";
import { openPostgresAdapter } from "./postgres.js";
import { PG_USER, scratchPostgres } from "./test-services.js";

dataStoreContract(
  "postgres",
  async () => {
    const db = await scratchPostgres();
    return {
      open: () => openPostgresAdapter({ endpoint: db.endpoint, user: PG_USER }),
      destroy: () => db.drop(),
    };
  },
  { timeoutMs: 60_000 },
);
