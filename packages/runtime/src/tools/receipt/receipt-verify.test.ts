import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decodeReceipt } from "../../receipts/index.js";
import type { Receipt } from "../../receipts/index.js";
import { REPO_ROOT } from "../../testing/cli.js";
import { makeTestReceiptStore } from "../../testing/payment-receipts.test-kit.js";
import type { TestReceiptStore } from "../../testing/payment-receipts.test-kit.js";
import { receiptVerifyTool } from "./receipt-verify.js";
import { makeToolContext } from "../../testing/tool-context.js";

/** A sealed send-as tree (root + five steps) and a refused one (root + two steps). */
const SEEDS = join(REPO_ROOT, "skills", "audit-receipt", "fixtures", "receipts");
const SENT = "sha256:da192636f73608fcd34b47b3a1e43c31ac8af2475a192a5d87709d7a6df34ed8";
const seeds: Receipt[] = readdirSync(SEEDS).map((f) =>
  decodeReceipt(JSON.parse(readFileSync(join(SEEDS, f), "utf8"))),
);
const byId = (id: string) => seeds.find((r) => r.id === id) as Receipt;

let store: TestReceiptStore;
beforeEach(() => {
  store = makeTestReceiptStore();
});
afterEach(() => store.cleanup());

interface Verification {
  valid: boolean;
  signatures: string;
  receipt_count: number;
  missing: string[];
  findings: Array<{ code: string }>;
  members: Array<{ role: string; disposition: string; status: string }>;
}

async function verify(id: string) {
  const ctx = makeToolContext({ receipts: store.lookup });
  return receiptVerifyTool.execute({ receipt_id: id }, ctx);
}
const dataOf = (result: Awaited<ReturnType<typeof verify>>): Verification => {
  if (result.status !== "success") throw new Error(`verify ${result.status}`);
  return (result.output.receipt_verification as unknown as { data: Verification }).data;
};

describe("receipt.verify", () => {
  it("verifies a whole tree and reports each member's signed seal", async () => {
    await store.add(...seeds);
    const data = dataOf(await verify(SENT));
    expect(data).toMatchObject({ valid: true, signatures: "unverified", receipt_count: 6 });
    expect(data.missing).toEqual([]);
    expect(data.members[0]).toMatchObject({ role: "root", disposition: "closed" });
    expect(data.members.filter((m) => m.role === "descendant")).toHaveLength(5);
  });

  it("reports a child the lineage commits but the store lacks, as an answer and not an error", async () => {
    const root = byId(SENT);
    await store.add(root);
    const data = dataOf(await verify(SENT));
    expect(data.valid).toBe(false);
    expect(data.receipt_count).toBe(1);
    expect(data.missing).toHaveLength(5);
    expect(data.findings.map((f) => f.code)).toContain("child_receipt_missing");
  });

  it("reports a tampered member as invalid instead of refusing the tree", async () => {
    await store.add(...seeds);
    const child = byId(SENT).lineage!.children[0]!.uri.replace("runx:receipt:", "");
    store.tamper(child, (text) => text.replace('"step_closed"', '"step_closed_edited"'));
    const data = dataOf(await verify(SENT));
    expect(data.valid).toBe(false);
    expect(data.findings.length).toBeGreaterThan(0);
  });

  it("fails with RECEIPT_NOT_FOUND for a root the store does not hold", async () => {
    const result = await verify(`sha256:${"0".repeat(64)}`);
    expect(result.status).toBe("failure");
    expect(result.status === "failure" && result.code).toBe("RECEIPT_NOT_FOUND");
  });

  it("refuses an id that is not a receipt id before reading anything", async () => {
    const result = await verify("not-a-receipt");
    expect(result.status === "failure" && result.code).toBe("INPUT_INVALID");
  });
});
