import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decodeReceipt } from "../../receipts/index.js";
import type { Receipt } from "../../receipts/index.js";
import { openStateStore } from "../../store/open.js";
import { asyncSqliteStateStore } from "../../store/sqlite-async.js";
import type { StateStore } from "../../store/types.js";
import { REPO_ROOT } from "../../testing/cli.js";
import { makeTestReceiptStore } from "../../testing/payment-receipts.test-kit.js";
import type { TestReceiptStore } from "../../testing/payment-receipts.test-kit.js";
import { makeToolContext, successData } from "../../testing/tool-context.js";
import type { JsonRecord, ToolResult } from "../types.js";
import { storeHistory } from "./history.js";
import { receiptProveTool, receiptQueryTool } from "./index.js";

/** Two sealed graph trees: a send (root + five steps) and a refusal (root + two steps). */
const SEEDS = join(REPO_ROOT, "skills", "audit-receipt", "fixtures", "receipts");
const SENT = "sha256:da192636f73608fcd34b47b3a1e43c31ac8af2475a192a5d87709d7a6df34ed8";
const REFUSED = "sha256:fda9ee804803af12af0ef74a95889e18c47f1dd6fe99d6cd91a54fa5ab23dfbe";
const ABSENT = `sha256:${"0".repeat(64)}`;
const seeds: Receipt[] = readdirSync(SEEDS).map((f) =>
  decodeReceipt(JSON.parse(readFileSync(join(SEEDS, f), "utf8"))),
);

let store: TestReceiptStore;
let state: StateStore;
beforeEach(async () => {
  store = makeTestReceiptStore();
  state = openStateStore({ path: ":memory:" });
  await store.add(...seeds);
});
afterEach(() => {
  state.close();
  store.cleanup();
});

function context() {
  return makeToolContext({
    receipts: store.lookup,
    history: storeHistory(
      () => store.store,
      () => Promise.resolve(asyncSqliteStateStore(state)),
    ),
    scopes: ["receipt.read"],
  });
}
const query = (input: JsonRecord): Promise<ToolResult> =>
  receiptQueryTool.execute(input, context());
const prove = (input: JsonRecord): Promise<ToolResult> =>
  receiptProveTool.execute(input, context());

describe("receipt.query", () => {
  it("lists top-level receipts newest first with the filter it applied", async () => {
    const data = successData(await query({}));
    expect(data).toMatchObject({
      schema: "runx.receipt.query.v1",
      source: "native_receipt_store",
      store_label: "test-receipts",
      pending_runs: [],
      receipt_details: [],
      verification: { signature_mode: "local-development", checked: false, intact: null },
    });
    // Lineage children stay out of the default history, as upstream's surface leaves them.
    expect(data.receipt_ids).toEqual([REFUSED, SENT]);
    expect(data.filter).toEqual({
      query: null,
      skill: null,
      status: null,
      source: null,
      actor: null,
      artifact_type: null,
      since: null,
      until: null,
      limit: 1000,
      receipt_ids: [],
    });
    expect((data.receipts as JsonRecord[])[1]).toMatchObject({
      id: SENT,
      name: "sends-after-one-approval",
      status: "closed",
      source_type: "graph",
      actors: ["runx:principal:local_runtime"],
      verification: { status: "unverified" },
    });
  });

  it("filters by status, skill and a case-insensitive query", async () => {
    expect(successData(await query({ status: "BLOCKED" })).receipt_ids).toEqual([REFUSED]);
    expect(successData(await query({ skill: "sends-after" })).receipt_ids).toEqual([SENT]);
    expect(successData(await query({ query: "SKIP-APPROVAL" })).receipt_ids).toEqual([REFUSED]);
    expect(successData(await query({ source: "skill" })).receipt_ids).toEqual([]);
  });

  it("bounds the window with since/until and resolves a period from as_of", async () => {
    expect(successData(await query({ since: "2026-05-18T00:00:01Z" })).receipt_ids).toEqual([]);
    expect(successData(await query({ until: "2026-05-18T00:00:00Z" })).receipt_ids).toHaveLength(2);
    const data = successData(await query({ period: "2d", as_of: "2026-05-19T12:00:00Z" }));
    expect((data.filter as JsonRecord).since).toBe("2026-05-17T12:00:00Z");
    expect(data.receipt_ids).toHaveLength(2);
  });

  it("cuts the rows to limit", async () => {
    expect(successData(await query({ limit: 1 })).receipt_ids).toEqual([REFUSED]);
  });

  it("proves the matched trees when verify_chain is set", async () => {
    const data = successData(await query({ verify_chain: true }));
    const verification = data.verification as JsonRecord;
    expect(verification).toMatchObject({ checked: true, intact: null, findings: [] });
    expect(verification.trees).toEqual([
      { root_receipt_id: REFUSED, receipt_count: 3, valid: true, findings: [] },
      { root_receipt_id: SENT, receipt_count: 6, valid: true, findings: [] },
    ]);
    expect(data.receipt_details).toHaveLength(2);
  });

  it("reads exact receipt ids in detail, without the history rows", async () => {
    const data = successData(await query({ receipt_ids: [` ${SENT} `, SENT] }));
    expect(data.receipt_ids).toEqual([SENT]);
    expect((data.filter as JsonRecord).receipt_ids).toEqual([SENT]);
    expect(data.receipts).toEqual([
      {
        receipt_id: SENT,
        skill_ref: "hrn_sends-after-one-approval_graph",
        status: "closed",
        created_at: "2026-05-18T00:00:00Z",
        verification_status: "unverified",
      },
    ]);
  });

  it("refuses a malformed period, an unparseable until and a non-sha256 exact id", async () => {
    const cases: Array<[JsonRecord, string]> = [
      [{ period: "7w" }, "period"],
      [{ period: "0d" }, "period"],
      [{ until: "yesterday" }, "until"],
      [{ receipt_ids: ["receipt-1"] }, "receipt_ids.0"],
      [{ limit: 0 }, "limit"],
    ];
    for (const [input, path] of cases) {
      const result = await query(input);
      expect(result.status).toBe("failure");
      if (result.status === "failure") {
        expect(result.code).toBe("INPUT_INVALID");
        expect((result.output?.details as JsonRecord).path).toBe(path);
      }
    }
  });
});

describe("receipt.prove", () => {
  it("proves intact local-development trees as unverified with each receipt's inspection", async () => {
    const data = successData(await prove({ receipt_ids: [SENT, REFUSED] }));
    expect(data).toMatchObject({
      schema: "runx.receipt.proof.v1",
      decision: "unverified",
      requested_receipt_ids: [SENT, REFUSED].sort(),
      store: { label: "test-receipts" },
      verification: { signature_mode: "local-development", checked: true, intact: null },
    });
    const details = data.receipt_details as JsonRecord[];
    expect(details.map((d) => d.id)).toEqual([SENT, REFUSED].sort());
    const sent = details.find((d) => d.id === SENT) as JsonRecord;
    expect(sent).toMatchObject({
      receipt_ref: `runx:receipt:${SENT}`,
      subject_kind: "graph",
      status: "closed",
      verification: { status: "unverified" },
    });
    const children = seeds.find((r) => r.id === SENT)!.lineage!.children.map((c) => c.uri);
    expect(sent.lineage_refs).toEqual(expect.arrayContaining(children));
  });

  it("needs more evidence when a receipt is missing or a child is gone", async () => {
    const data = successData(await prove({ receipt_ids: [SENT, ABSENT] }));
    expect(data.decision).toBe("needs_more_evidence");
    expect((data.verification as JsonRecord).findings).toEqual([
      {
        code: "receipt.store.unresolved",
        message: `receipt ${ABSENT} could not be resolved: receipt is missing`,
      },
    ]);
    expect((data.matched_receipts as JsonRecord[]).map((m) => m.receipt_id)).toEqual([SENT]);
  });

  it("reports a tampered child as a tree finding and withholds the verdict", async () => {
    const child = seeds
      .find((r) => r.id === SENT)!
      .lineage!.children[0]!.uri.replace("runx:receipt:", "");
    store.tamper(child, (text) => text.replace('"step_closed"', '"step_closed_edited"'));
    const data = successData(await prove({ receipt_ids: [SENT] }));
    expect(data.decision).toBe("needs_more_evidence");
    const tree = ((data.verification as JsonRecord).trees as JsonRecord[])[0] as JsonRecord;
    expect(tree.valid).toBe(false);
    // Upstream names tree finding codes by variant, not in snake case.
    for (const f of tree.findings as JsonRecord[]) expect(f.code).toMatch(/^[A-Z][A-Za-z]+$/);
  });

  it("refuses duplicate and malformed ids", async () => {
    for (const ids of [[SENT, SENT], ["sha256:ABC"], []]) {
      const result = await prove({ receipt_ids: ids });
      expect(result.status).toBe("failure");
      expect(result.status === "failure" && result.code).toBe("INPUT_INVALID");
    }
  });
});
