import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runx } from "../testing/cli.js";
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

    const report = await fx.runtime.verifyBundle(JSON.stringify(bundle), { label: "bundle:test" });
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
    const report = await fx.runtime.verifyBundle(JSON.stringify(bundle), { label: "bundle:test" });
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
    const report = await fx.runtime.verifyBundle(JSON.stringify(bundle), { label: "bundle:test" });
    expect(report.valid).toBe(false);
    expect(report.unreadable_files).toContainEqual(expect.objectContaining({ file_name: stray }));
  });
});

describe("runx verify --bundle", () => {
  it("prints a bundle's trees, refuses an edited one naming the receipt, and names the line of broken JSON", async () => {
    const runId = await resumedRun();
    const bundle = await fx.runtime.console.evidence.bundle(runId);
    // As the console's download once wrote it: indented.
    fx.ws.write("evidence.json", `${JSON.stringify(bundle, null, 2)}\n`);
    const ok = await runx(fx.ws, ["verify", "--bundle", "evidence.json"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`receipt store bundle:evidence.json`);
    expect(ok.stdout).toContain(`✓ ${bundle.root_receipt_id}`);
    expect(ok.stdout.trimEnd().endsWith("valid")).toBe(true);

    const [file, body] = Object.entries(bundle.receipts)[1]!;
    const edited = {
      ...bundle,
      receipts: { ...bundle.receipts, [file]: body.replace("hi", "ho") },
    };
    expect(edited.receipts[file]).not.toBe(body);
    fx.ws.write("edited.json", JSON.stringify(edited));
    const bad = await runx(fx.ws, ["verify", "--bundle", "edited.json"]);
    expect(bad.code).toBe(3);
    expect(bad.stdout).toContain(
      `receipt[sha256:${file.slice("sha256-".length, -".json".length)}]`,
    );
    expect(bad.stdout.trimEnd().endsWith("not valid")).toBe(true);

    const text = JSON.stringify(bundle, null, 2).split("\n");
    fx.ws.write("broken.json", [...text.slice(0, 5), "  oops", ...text.slice(5)].join("\n"));
    const broken = await runx(fx.ws, ["verify", "--bundle", "broken.json", "--json"]);
    expect(broken.code).not.toBe(0);
    expect(broken.json()).toMatchObject({
      error: { reason: "INPUT_INVALID", file: "bundle:broken.json", line: 6 },
    });
    const missing = await runx(fx.ws, ["verify", "--bundle", "nowhere.json", "--json"]);
    expect(missing.json()).toMatchObject({ error: { reason: "IO_ERROR", file: "nowhere.json" } });
  }, 60_000);
});

describe("receipt graph pages over an earlier journal", () => {
  it("rebuilds a journal whose lines predate `previous` before paging a resumed run", async () => {
    const runId = await resumedRun();
    const dag = await fx.runtime.console.evidence.dag(runId);
    const before = await fx.runtime.console.evidence.page(runId);
    expect(before.total).toBe(dag.nodes.length);
    // The journal as an earlier version wrote it: no line format, no `previous`.
    const journal = join(fx.ws.root, ".runx", "receipts", "index.jsonl");
    const lines = readFileSync(journal, "utf8")
      .split("\n")
      .filter((l) => l !== "");
    const old = lines.map((line) => {
      const { v: _v, previous: _previous, ...rest } = JSON.parse(line) as Record<string, unknown>;
      return `${JSON.stringify(rest)}\n`;
    });
    expect(old.join("")).not.toContain('"previous"');
    writeFileSync(journal, old.join(""));
    // Paging follows the continuation to its paused receipt's tree again.
    const after = await fx.runtime.console.evidence.page(runId);
    expect(after.total).toBe(dag.nodes.length);
    expect(after.nodes.map((n) => n.id)).toEqual(before.nodes.map((n) => n.id));
    expect(after.edges.some((e) => e.kind === "previous")).toBe(true);
    const rebuilt = readFileSync(journal, "utf8")
      .split("\n")
      .filter((l) => l !== "");
    expect(rebuilt).toHaveLength(lines.length);
    expect(rebuilt.every((l) => (JSON.parse(l) as { v?: number }).v === 2)).toBe(true);
    expect(rebuilt.some((l) => l.includes('"previous"'))).toBe(true);
    // Once rebuilt, the next page reads the journal as it is.
    const stamp = statSync(journal).mtimeMs;
    await fx.runtime.console.evidence.page(runId);
    expect(statSync(journal).mtimeMs).toBe(stamp);
  });
});

/** The stored file of receipt `id` in the fixture's workspace store. */
function receiptFile(id: string): string {
  return join(fx.ws.root, ".runx", "receipts", `${id.replace(":", "-")}.json`);
}

function checkOf(report: { checks: Array<{ name: string }> }, name: string) {
  return report.checks.find((c) => c.name === name);
}

describe("receipt report", () => {
  it("names the signer, the commitments and every check of a sound resumed run", async () => {
    const runId = await resumedRun();
    const dag = await fx.runtime.console.evidence.dag(runId);
    const report = await fx.runtime.console.evidence.report(dag.rootReceiptId);
    expect(report).toMatchObject({
      schema: "runx.receipt_report.v1",
      receipt_id: dag.rootReceiptId,
      status: "unverified",
      failed_check: null,
      signer: { issuer_type: "local", signature_kind: "local-development" },
    });
    expect(report.checks.map((c) => c.name)).toEqual([
      "readable",
      "content_address",
      "body_digest",
      "signature",
      "structure",
      "parent",
      "children",
      "previous",
    ]);
    expect(report.checks.filter((c) => c.ok === false)).toEqual([]);
    expect(report.commits!.children.map((c) => c.present)).toEqual([true, true]);
    expect(report.commits!.previous).toMatchObject({ present: true, digest_matches: true });
    expect(report.commits!.package_digest).toMatchObject({
      value: expect.stringMatching(/^sha256:/),
      signed: true,
    });
    expect(report.commits!.execution_closure_digest).toMatchObject({ signed: false });

    // A step names the graph receipt that lists it as its parent.
    const child = report.commits!.children[0]!;
    const step = await fx.runtime.console.evidence.report(child.id);
    expect(step.commits!.parents).toEqual([
      expect.objectContaining({ id: dag.rootReceiptId, present: true, digest_matches: true }),
    ]);
    expect(checkOf(step, "parent")).toMatchObject({ ok: true });
  });

  it("names the failed check of an edited, a re-signed and a missing receipt", async () => {
    const runId = await resumedRun();
    const dag = await fx.runtime.console.evidence.dag(runId);
    const root = await fx.runtime.console.evidence.report(dag.rootReceiptId);
    const [first, second] = root.commits!.children;

    // An edited body: its id and digest no longer match, and its parent committed another body.
    const text = readFileSync(receiptFile(first!.id), "utf8");
    writeFileSync(receiptFile(first!.id), text.replace(/"summary":"([^"]*)"/, '"summary":"$1!"'));
    const edited = await fx.runtime.console.evidence.report(first!.id);
    expect(edited.status).toBe("invalid");
    expect(edited.failed_check).toMatchObject({
      name: "content_address",
      message: "receipt id is not the digest of its body",
    });
    expect(checkOf(edited, "body_digest")).toMatchObject({ ok: false });
    expect(checkOf(edited, "parent")).toMatchObject({
      ok: false,
      codes: ["child_receipt_digest_mismatch"],
    });
    const parent = await fx.runtime.console.evidence.report(dag.rootReceiptId);
    expect(parent.failed_check).toMatchObject({ name: "children", ok: false });

    // A signature that is not the one the body implies.
    const other = JSON.parse(readFileSync(receiptFile(second!.id), "utf8")) as {
      signature: { value: string };
    };
    other.signature.value = `sig:sha256:${"0".repeat(64)}`;
    writeFileSync(receiptFile(second!.id), JSON.stringify(other));
    const resigned = await fx.runtime.console.evidence.report(second!.id);
    expect(resigned.failed_check).toMatchObject({
      name: "signature",
      message: "signature does not match",
      codes: ["signature_invalid"],
    });

    // A child gone from the store.
    rmSync(receiptFile(second!.id));
    const missing = await fx.runtime.console.evidence.report(dag.rootReceiptId);
    expect(checkOf(missing, "children")).toMatchObject({
      ok: false,
      codes: ["child_receipt_missing"],
    });
    await expect(fx.runtime.console.evidence.report(second!.id)).rejects.toMatchObject({
      code: "RECEIPT_NOT_FOUND",
    });

    // A file that is no receipt at all.
    writeFileSync(receiptFile(first!.id), "{not json");
    expect((await fx.runtime.console.evidence.report(first!.id)).failed_check).toMatchObject({
      name: "readable",
      ok: false,
    });
  });
});
