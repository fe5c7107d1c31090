import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { consoleFixture } from "../testing/console-fixture.js";
import type { ConsoleFixture } from "../testing/console-fixture.js";
import type { Operator } from "./operators.js";

let fx: ConsoleFixture;
let operators: Map<string, Operator>;
beforeEach(() => {
  fx = consoleFixture();
  operators = new Map();
});
afterEach(() => fx.cleanup());

const PASSWORD = "correct horse battery";

/** The approver `username`, added on first use. */
async function operator(username: string): Promise<Operator> {
  const known = operators.get(username);
  if (known !== undefined) return known;
  const added = await fx.runtime.console.operators.add({
    username,
    role: "approver",
    password: PASSWORD,
  });
  operators.set(username, added);
  return added;
}

/** A gated run paused, approved by a second operator and resumed to its seal. */
async function resumedRun(): Promise<string> {
  const c = fx.runtime.console;
  const starter = await operator("sam");
  const alice = await operator("alice");
  const runId = c.newRunId();
  c.recordInitiator(runId, starter);
  const env = await fx.runtime.runSkill({
    ref: "skills/gated-echo",
    inputs: { message: { value: "hi" } },
    secretEnv: [],
    runId,
  });
  expect(env.status).toBe("needs_approval");
  const gateId = env.requests[0]!.id;
  await c.approvals.decide({ runId, gateId, decision: "approve", reason: "fine" }, alice);
  expect((await c.approvals.release({ runId, gateId })).status).toBe("sealed");
  return runId;
}

describe("evidence bundle", () => {
  it("verifies every receipt the run's graph shows, the paused receipt's tree included", async () => {
    const runId = await resumedRun();
    const dag = await fx.runtime.console.evidence.dag(runId);
    // The resumed seal continues the paused receipt (lineage.previous): two trees.
    expect(dag.edges.some((e) => e.kind === "previous")).toBe(true);
    const bundle = await fx.runtime.console.evidence.bundle(runId);
    expect(Object.keys(bundle.receipts)).toHaveLength(dag.nodes.length);

    const report = fx.runtime.verifyBundle(JSON.stringify(bundle), { label: "bundle:test" });
    expect(report.valid).toBe(true);
    expect(report.receipt_count).toBe(dag.nodes.length);
    expect(report.trees.length).toBeGreaterThan(1);
    expect(new Set(report.trees.flatMap((t) => t.root_receipt_id))).toContain(dag.rootReceiptId);
    // The transcript the bundle carries covers the same trees.
    expect(bundle.verification.map((t) => t.root_receipt_id).sort()).toEqual(
      report.trees.map((t) => t.root_receipt_id).sort(),
    );
  });

  it("refuses a bundle whose paused receipt was edited", async () => {
    const runId = await resumedRun();
    const dag = await fx.runtime.console.evidence.dag(runId);
    const paused = dag.nodes.find((n) => n.disposition === "deferred")!;
    const bundle = await fx.runtime.console.evidence.bundle(runId);
    const file = bundle.index.entries.find((e) => e.receipt_id === paused.id)!.file_name;
    const body = bundle.receipts[file]!;
    bundle.receipts[file] = body.replace(/"summary":"([^"]*)"/, '"summary":"$1 (edited)"');
    expect(bundle.receipts[file]).not.toBe(body);
    const report = fx.runtime.verifyBundle(JSON.stringify(bundle), { label: "bundle:test" });
    expect(report.valid).toBe(false);
    const tree = report.trees.find((t) => t.root_receipt_id === paused.id)!;
    expect(tree.valid).toBe(false);
    expect(tree.findings.map((f) => f.code)).toContain("seal_digest_mismatch");
  });

  it("refuses a bundle holding a receipt tree the run's root does not continue", async () => {
    const runId = await resumedRun();
    const other = await resumedRun();
    const bundle = await fx.runtime.console.evidence.bundle(runId);
    const foreign = await fx.runtime.console.evidence.bundle(other);
    const stray = Object.keys(foreign.receipts).find(
      (f) =>
        f ===
        foreign.index.entries.find((e) => e.receipt_id === foreign.root_receipt_id)!.file_name,
    )!;
    bundle.receipts[stray] = foreign.receipts[stray]!;
    bundle.index.entries.push(foreign.index.entries.find((e) => e.file_name === stray)!);
    const report = fx.runtime.verifyBundle(JSON.stringify(bundle), { label: "bundle:test" });
    expect(report.valid).toBe(false);
    expect(report.unreadable_files).toContainEqual(expect.objectContaining({ file_name: stray }));
  });
});
