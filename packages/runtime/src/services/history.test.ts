import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import {
  buildSkillReceipt,
  localDevelopmentPolicy,
  localDevelopmentSigner,
  ReceiptStore,
  sealReceipt,
} from "../receipts/index.js";
import type { Receipt } from "../receipts/index.js";
import { openStateStore } from "../store/open.js";
import { asyncSqliteStateStore } from "../store/sqlite-async.js";
import type { StateStore } from "../store/state-store.js";
import { runId, sampleRun, tempDir } from "../store/test-support/fixtures.js";
import type { TempDir } from "../store/test-support/fixtures.js";
import { listHistory, pendingRuns } from "./history.js";

let dir: TempDir;
let state: StateStore;
beforeEach(() => {
  dir = tempDir();
  state = openStateStore({ path: dir.dbPath });
});
afterEach(() => {
  state.close();
  dir.cleanup();
});

/** A sealed receipt of skill `echo` made `n` seconds after 2026-01-01T00:00:00Z. */
function receipt(n: number): Receipt {
  const at = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString().slice(0, 19) + "Z";
  return sealReceipt(
    buildSkillReceipt({
      name: "echo",
      step: `cli-tool-${n}`,
      createdAt: at,
      disposition: "closed",
      reasonCode: "process_closed",
    }),
    localDevelopmentSigner(),
  );
}

describe("listHistory", () => {
  it("knows the run and the harness origin of every receipt, however many the store holds", async () => {
    // More receipts than one page of the state store's index (500): the oldest ones must still
    // be matched to their runs, and harness receipts among them still hidden.
    const receipts = Array.from({ length: 620 }, (_, i) => receipt(i));
    const store = new ReceiptStore({
      dir: join(dir.dir, "receipts"),
      policy: localDevelopmentPolicy(),
      label: "receipts",
    });
    await store.writeAll(receipts);
    receipts.forEach((r, i) =>
      state.indexReceipt({
        receiptId: r.id,
        runId: `run_default_${i.toString(16).padStart(16, "0")}`,
        skillName: "echo",
        disposition: "closed",
        createdAt: r.created_at,
        fileName: `sha256-${r.id.slice("sha256:".length)}.json`,
        // The ten oldest came from `runx harness`.
        harness: i < 10,
      }),
    );
    const list = (includeHarness: boolean) =>
      listHistory({
        receiptDir: join(dir.dir, "receipts"),
        storeLabel: "receipts",
        policy: localDevelopmentPolicy(),
        state: asyncSqliteStateStore(state),
        limit: 1000,
        includeInternal: false,
        includeHarness,
      });

    const listed = await list(false);
    expect(listed.receipts).toHaveLength(610);
    expect(listed.receipts.every((row) => row.run_id !== null)).toBe(true);
    // Newest first; the oldest listed is the first one not made by the harness.
    expect(listed.receipts[0]?.id).toBe(receipts[619]?.id);
    expect(listed.receipts.at(-1)).toMatchObject({
      id: receipts[10]?.id,
      run_id: "run_default_000000000000000a",
    });

    const all = await list(true);
    expect(all.receipts).toHaveLength(620);
    expect(all.receipts.at(-1)?.id).toBe(receipts[0]?.id);
  });
});

describe("pendingRuns", () => {
  it("lists every paused run, more than one page of the state store per status", async () => {
    for (let n = 0; n < 620; n++) {
      const id = runId(n);
      state.createRun(sampleRun(id));
      state.updateRun(id, { status: n % 10 === 0 ? "needs_approval" : "needs_agent" });
    }
    state.createRun(sampleRun(runId(9999)));
    const pending = await pendingRuns(asyncSqliteStateStore(state));
    expect(pending).toHaveLength(620);
    expect(new Set(pending.map((p) => p.id)).size).toBe(620);
    expect(pending.some((p) => p.id === runId(9999))).toBe(false);
  });
});
