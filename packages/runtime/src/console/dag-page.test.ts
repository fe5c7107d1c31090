import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Receipt } from "../receipts/model.js";
import { ReceiptStore } from "../receipts/store.js";
import { localDevelopmentPolicy } from "../receipts/verifier.js";
import { openStateStore } from "../store/open.js";
import { consoleFixture } from "../testing/console-fixture.js";
import { PER_STEP, STEPS, TOTAL, sealedAt } from "../testing/wide-run.js";
import type { ConsoleFixture } from "../testing/console-fixture.js";

/** A receipt of this file's run (testing/wide-run.ts), dated from 2026-04-01. */
function sealed(name: string, i: number, children: Receipt[] = []): Receipt {
  return sealedAt("2026-04-01T00:00:00Z", name, i, children);
}

let fx: ConsoleFixture;
let runId: string;
let root: Receipt;
let steps: Receipt[];
let receiptDir: string;

beforeAll(async () => {
  fx = consoleFixture();
  // A real run through the runtime, then given a large receipt tree as its root.
  const env = await fx.runtime.runSkill({
    ref: "skills/echo",
    inputs: { message: { value: "hi" } },
    secretEnv: [],
  });
  runId = env.run_id;
  receiptDir = join(fx.ws.root, ".runx", "receipts");
  const store = new ReceiptStore({ dir: receiptDir, policy: localDevelopmentPolicy() });
  steps = [];
  let n = 0;
  for (let s = 0; s < STEPS; s++) {
    const leaves = Array.from({ length: PER_STEP }, () => sealed(`leaf-${n}`, n++));
    const step = sealed(`step-${s}`, n++, leaves);
    await store.writeAll([...leaves, step]);
    steps.push(step);
  }
  root = sealed("big-run", n++, steps);
  await store.write(root);
  const state = openStateStore({ path: join(fx.ws.root, ".runx", "state.sqlite") });
  try {
    state.updateRun(runId, { receiptId: root.id });
  } finally {
    state.close();
  }
}, 300_000);

afterAll(() => fx.cleanup());

function fileOf(id: string): string {
  return join(receiptDir, `sha256-${id.slice("sha256:".length)}.json`);
}

describe("receipt DAG pages", () => {
  it("loads a bounded page of a 20,000-receipt run, breadth first from its root", async () => {
    const first = await fx.runtime.console.evidence.page(runId, { limit: 50 });
    expect(first.total).toBe(TOTAL);
    expect(first.nodes).toHaveLength(50);
    expect(first.nodes[0]?.id).toBe(root.id);
    expect(first.nodes.slice(1, 1 + STEPS).map((n) => n.id)).toEqual(steps.map((s) => s.id));
    expect(first.nextCursor).toBe("50");
    // The edges into the page's receipts only, each checked against the parent's commitment.
    expect(first.edges).toHaveLength(49);
    expect(first.edges.every((e) => e.digestMatches === true)).toBe(true);
    expect(first.nodes.every((n) => n.status === "unverified")).toBe(true);
    const last = await fx.runtime.console.evidence.page(runId, {
      cursor: String(TOTAL - 10),
      limit: 50,
    });
    expect(last.nodes).toHaveLength(10);
    expect(last.nextCursor).toBeNull();
  }, 60_000);

  it("reads only the page's receipts: one tampered elsewhere does not show, one inside does", async () => {
    const page = await fx.runtime.console.evidence.page(runId, { cursor: "1000", limit: 20 });
    const inside = page.nodes[5]?.id as string;
    const outside = (await fx.runtime.console.evidence.page(runId, { cursor: "5000", limit: 1 }))
      .nodes[0]?.id as string;
    const keep = [inside, outside].map((id) => [id, readFileSync(fileOf(id), "utf8")] as const);
    try {
      for (const [id, text] of keep) writeFileSync(fileOf(id), text.replace("leaf-", "LEAF-"));
      const again = await fx.runtime.console.evidence.page(runId, { cursor: "1000", limit: 20 });
      expect(again.nodes.map((n) => n.id)).toEqual(page.nodes.map((n) => n.id));
      const bad = again.nodes.filter((n) => n.status === "invalid").map((n) => n.id);
      expect(bad).toEqual([inside]);
      expect(again.nodes[5]?.failedCheck).toBe("seal_digest_mismatch");
    } finally {
      for (const [id, text] of keep) writeFileSync(fileOf(id), text);
    }
  }, 60_000);

  it("pages through every receipt exactly once", async () => {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await fx.runtime.console.evidence.page(runId, {
        limit: 5000,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      ids.push(...page.nodes.map((n) => n.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(ids).toHaveLength(TOTAL);
    expect(new Set(ids).size).toBe(TOTAL);
  }, 120_000);

  it("names the parent of a receipt deep in the run in its report", async () => {
    const deep = (await fx.runtime.console.evidence.page(runId, { cursor: "15000", limit: 1 }))
      .nodes[0]?.id as string;
    const report = await fx.runtime.console.evidence.report(deep);
    const parents = report.commits!.parents;
    expect(parents).toHaveLength(1);
    expect(steps.map((s) => s.id)).toContain(parents[0]!.id);
    expect(parents[0]).toMatchObject({ present: true, digest_matches: true });
  }, 60_000);

  it("refuses a cursor that is not a position", async () => {
    await expect(fx.runtime.console.evidence.page(runId, { cursor: "-3" })).rejects.toMatchObject({
      code: "INPUT_INVALID",
    });
  });
});
