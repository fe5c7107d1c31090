import { dataStoreContract } from "./contract.test-kit.js";
import { openRedisAdapter } from "./redis.js";
import { REDIS_URL, scratchRedisPrefix } from "./test-services.js";

dataStoreContract("redis", () => {
  const scratch = scratchRedisPrefix();
  return Promise.resolve({
    open: () => openRedisAdapter({ endpoint: REDIS_URL, keyPrefix: scratch.prefix }),
    destroy: () => scratch.drop(),
  });
});
