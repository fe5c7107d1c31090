import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;

function graphPackage(name: string, lines: string[]): void {
  ws.write(`skills/${name}/SKILL.md`, `---\nname: ${name}\n---\nTest graph ${name}.\n`);
  ws.write(`skills/${name}/X.yaml`, [...lines, ""].join("\n"));
}

beforeEach(() => {
  ws = makeWorkspace();
  ws.addBundledSkill("echo");
  ws.write("skills/breaks/SKILL.md", "---\nname: breaks\n---\nAlways fails.\n");
  ws.write(
    "skills/breaks/X.yaml",
    [
      "runners:",
      "  default:",
      "    type: cli-tool",
      "    command: sh",
      "    args: ['-c', 'echo the disk is gone >&2; exit 3']",
      "    inputs:",
      "      message: {type: string, required: true}",
      "    outputs:",
      "      message: string",
      "",
    ].join("\n"),
  );
  // The nested graphs: one that echoes, one behind a human approval, one that fails.
  graphPackage("inner", [
    "runners:",
    "  say:",
    "    default: true",
    "    type: graph",
    "    inputs:",
    "      message: {type: string, required: true}",
    "    graph:",
    "      name: inner-say",
    "      result_from: [say]",
    "      steps:",
    "        - id: say",
    "          skill: ../echo",
    "          inputs:",
    "            message: $input.message",
    "  gated:",
    "    type: graph",
    "    inputs:",
    "      message: {type: string, required: true}",
    "    graph:",
    "      name: inner-gated",
    "      result_from: [say]",
    "      steps:",
    "        - id: approve",
    "          run: {type: approval}",
    "          inputs:",
    "            gate_id: inner.release",
    "            reason: Release the message.",
    "        - id: say",
    "          skill: ../echo",
    "          inputs:",
    "            message: $input.message",
    "  broken:",
    "    type: graph",
    "    inputs:",
    "      message: {type: string, required: true}",
    "    graph:",
    "      name: inner-broken",
    "      result_from: [fail]",
    "      steps:",
    "        - id: fail",
    "          skill: ../breaks",
    "          inputs:",
    "            message: $input.message",
    "  scoped:",
    "    type: graph",
    "    graph:",
    "      name: inner-scoped",
    "      result_from: [compare]",
    "      steps:",
    "        - id: compare",
    "          tool: data.compare",
    "          scopes: [beta]",
    "          inputs: {actual: 1, expected: 1}",
  ]);
  const outer = (runner: string, scopes = "") => [
    "runners:",
    "  default:",
    "    type: graph",
    "    inputs:",
    "      message: {type: string, required: false}",
    "    graph:",
    `      name: outer-${runner}`,
    "      result_from: [after]",
    "      steps:",
    "        - id: nested",
    "          skill: ../inner",
    `          runner: ${runner}`,
    ...(scopes !== "" ? [`          scopes: [${scopes}]`] : []),
    ...(runner === "scoped" ? [] : ["          inputs:", "            message: $input.message"]),
    "        - id: after",
    "          skill: ../echo",
    "          inputs:",
    runner === "scoped"
      ? "            message: done"
      : "            message: $steps.nested.message",
  ];
  graphPackage("outer", outer("say"));
  graphPackage("outer-gated", outer("gated"));
  graphPackage("outer-broken", outer("broken"));
  graphPackage("outer-scoped", outer("scoped", "alpha"));
});
afterEach(() => ws.cleanup());

interface Envelope {
  status: string;
  run_id: string;
  receipt_id: string;
  result: Record<string, unknown> | null;
  requests: Array<{ id: string; kind: string }>;
  closure: { disposition: string; reason_code: string; summary: string } | null;
}

interface ReceiptView {
  id: string;
  subject: { kind: string };
  acts: Array<{ id: string }>;
  seal: { disposition: string; reason_code: string; summary: string };
  lineage: {
    children: Array<{ uri: string; locator: string }>;
    previous?: { uri: string };
  };
}

function readReceipt(id: string): ReceiptView {
  return JSON.parse(
    readFileSync(join(ws.root, ".runx", "receipts", `sha256-${id.slice(7)}.json`), "utf8"),
  ) as ReceiptView;
}

function children(receipt: ReceiptView): ReceiptView[] {
  return receipt.lineage.children.map((c) => readReceipt(c.uri.replace("runx:receipt:", "")));
}

async function verifyTrees(): Promise<Array<{ root_receipt_id: string; receipt_count: number }>> {
  const verify = await runx(ws, ["verify", "--json", "--allow-local-development-signatures"]);
  expect(verify.code).toBe(0);
  return verify.json<{ trees: Array<{ root_receipt_id: string; receipt_count: number }> }>().trees;
}

describe("graph steps whose skill runner is a graph", () => {
  it("run the nested graph as a sub-graph whose result feeds later steps, its receipts one branch of the DAG", async () => {
    const r = await runx(ws, ["skill", "skills/outer", "--message", "hi", "--json"]);
    expect(r.code).toBe(0);
    const env = r.json<Envelope>();
    expect(env.result).toEqual({ message: "hi" });
    const graph = readReceipt(env.receipt_id);
    const [nested, after] = children(graph);
    expect(nested?.acts.map((a) => a.id)).toEqual(["act_nested"]);
    expect(nested?.seal).toMatchObject({ disposition: "closed", reason_code: "graph_closed" });
    expect(children(nested!).map((c) => c.acts[0]?.id)).toEqual(["act_say"]);
    expect(after?.acts[0]?.id).toBe("act_after");
    expect(await verifyTrees()).toEqual([
      expect.objectContaining({ root_receipt_id: env.receipt_id, receipt_count: 4 }),
    ]);
    const detail = (await runx(ws, ["history", "--detail", env.run_id, "--json"])).stdout;
    expect(detail).toContain("nested/say");
  });

  it("pause the whole run for the nested approval and resume into the nested graph", async () => {
    const first = await runx(ws, ["skill", "skills/outer-gated", "--message", "hi", "--json"]);
    expect(first.code).toBe(2);
    const paused = first.json<Envelope>();
    expect(paused.status).toBe("needs_approval");
    expect(paused.requests.map((q) => q.id)).toEqual(["inner.release"]);
    // The pause receipt already commits the nested graph's deferred step receipt.
    const [deferred] = children(readReceipt(paused.receipt_id));
    expect(deferred?.seal).toMatchObject({
      disposition: "deferred",
      reason_code: "approval_required",
    });

    const done = await runx(ws, ["resume", paused.run_id, "-", "--json"], {
      stdin: JSON.stringify({ approvals: { "inner.release": { approved: true, reason: "ok" } } }),
    });
    expect(done.code).toBe(0);
    const sealed = done.json<Envelope>();
    expect(sealed.status).toBe("sealed");
    expect(sealed.result).toEqual({ message: "hi" });
    const [nested] = children(readReceipt(sealed.receipt_id));
    expect(nested?.lineage.previous?.uri).toBe(`runx:receipt:${deferred!.id}`);
    expect(children(nested!).map((c) => [c.acts[0]?.id, c.seal.reason_code])).toEqual([
      ["act_approve", "approval_granted"],
      ["act_say", "step_closed"],
    ]);
    // The graph, the nested step, its two steps, and the step after it.
    const trees = await verifyTrees();
    expect(trees.find((t) => t.root_receipt_id === sealed.receipt_id)?.receipt_count).toBe(5);
  });

  it("seal the run declined when the nested approval is denied, running nothing after it", async () => {
    const paused = (
      await runx(ws, ["skill", "skills/outer-gated", "--message", "hi", "--json"])
    ).json<Envelope>();
    const denied = await runx(ws, ["resume", paused.run_id, "-", "--json"], {
      stdin: JSON.stringify({ approvals: { "inner.release": false } }),
    });
    expect(denied.code).toBe(1);
    const env = denied.json<Envelope>();
    expect(env.closure?.disposition).toBe("declined");
    const steps = children(readReceipt(env.receipt_id));
    expect(steps.map((s) => [s.acts[0]?.id, s.seal.disposition])).toEqual([
      ["act_nested", "declined"],
    ]);
  });

  it("fail the enclosing step and graph when a nested step fails, naming it", async () => {
    const r = await runx(ws, ["skill", "skills/outer-broken", "--message", "hi", "--json"]);
    expect(r.code).not.toBe(0);
    const env = r.json<Envelope>();
    expect(env.closure?.disposition).toBe("failed");
    expect(env.closure?.summary).toContain("step 'nested' failed");
    expect(env.closure?.summary).toContain("step 'fail' failed");
    const [nested] = children(readReceipt(env.receipt_id));
    expect(nested?.seal).toMatchObject({ disposition: "failed", reason_code: "step_failed" });
    expect(children(nested!).map((c) => c.seal.disposition)).toEqual(["failed"]);
    // The graph, the nested step and the failed step; nothing ran after it.
    expect((await verifyTrees())[0]?.receipt_count).toBe(3);
  });

  it("attenuate scopes: a nested step may not use a scope outside the enclosing step's grant", async () => {
    const r = await runx(ws, ["skill", "skills/outer-scoped", "--json"]);
    expect(r.code).not.toBe(0);
    const env = r.json<Envelope>();
    expect(env.closure?.disposition).toBe("blocked");
    const [nested] = children(readReceipt(env.receipt_id));
    const [compare] = children(nested!);
    expect(compare?.seal).toMatchObject({
      disposition: "blocked",
      reason_code: "preflight_refused",
    });
    expect(compare?.seal.summary).toContain("beta");
  });
});

describe("nested skills are contained by the workspace", () => {
  const deepGraph = (skill: string) =>
    [
      "runners:",
      "  default:",
      "    type: graph",
      "    graph:",
      "      name: deep",
      "      result_from: [say]",
      "      steps:",
      "        - id: say",
      `          skill: ${skill}`,
      "          inputs:",
      "            message: from a deep flow",
      "",
    ].join("\n");

  it("resolve a step that leaves the graph's package folder but stays in the workspace", async () => {
    ws.write("flows/team/deep/SKILL.md", "---\nname: deep\n---\nA flow far from skills/.\n");
    ws.write("flows/team/deep/X.yaml", deepGraph("../../../skills/echo"));
    const r = await runx(ws, ["skill", "flows/team/deep", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.json<Envelope>()).toMatchObject({ status: "sealed" });
    expect(r.stdout).toContain("from a deep flow");
  });

  it("refuse a step that leaves the workspace, naming the step", async () => {
    ws.write("flows/team/deep/SKILL.md", "---\nname: deep\n---\nA flow far from skills/.\n");
    ws.write("flows/team/deep/X.yaml", deepGraph("../../../../outside"));
    const r = await runx(ws, ["skill", "flows/team/deep", "--json"]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain(
      "step say: skill ../../../../outside is outside the workspace",
    );
  });
});
