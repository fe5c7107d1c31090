import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dataStoreContract } from "./contract.test-kit.js";
import { openSqliteAdapter } from "./sqlite.js";

dataStoreContract("sqlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "runx-data-sqlite-"));
  const path = join(dir, "store.sqlite");
  return Promise.resolve({
    open: () => Promise.resolve(openSqliteAdapter({ path, label: "store.sqlite" })),
    destroy: () => {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  });
});
