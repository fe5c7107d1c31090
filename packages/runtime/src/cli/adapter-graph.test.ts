import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FAKE_LOCAL_DIR, writeAdapterSkill } from "../adapters/test-support.js";
import { cleanEnv, makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
let env: Record<string, string>;

interface Envelope {
  status: string;
  run_id: string;
  receipt_id: string;
  result: Record<string, unknown> | null;
  requests: Array<{ id: string; kind: string; invocation?: Record<string, unknown> }>;
  closure: { disposition: string; reason_code: string } | null;
}

interface ReceiptView {
  id: string;
  acts: Array<{ id: string }>;
  seal: { disposition: string; reason_code: string };
  lineage: { children: Array<{ uri: string }>; previous?: { uri: string } };
  metadata?: { dispatch?: Record<string, unknown> };
}

function readReceipt(id: string): ReceiptView {
  return JSON.parse(
    readFileSync(join(ws.root, ".runx", "receipts", `sha256-${id.slice(7)}.json`), "utf8"),
  ) as ReceiptView;
}

function children(receipt: ReceiptView): ReceiptView[] {
  return receipt.lineage.children.map((c) => readReceipt(c.uri.replace("runx:receipt:", "")));
}

/** The dispatch-receipt.v1 documents a receipt's child dispatch receipts commit. */
function dispatchesOf(step: ReceiptView): Array<Record<string, unknown>> {
  return children(step).flatMap((c) =>
    c.metadata?.dispatch !== undefined ? [c.metadata.dispatch] : [],
  );
}

/** True when any adapter process of any run started (its first act writes a sentinel). */
function spawnedAny(): boolean {
  const runs = join(ws.root, ".runx", "runs");
  if (!existsSync(runs)) return false;
  const walk = (dir: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).some((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name === "sentinel",
    );
  return walk(runs);
}

async function verifyTrees(): Promise<Array<{ root_receipt_id: string; receipt_count: number }>> {
  const verify = await runx(ws, ["verify", "--json", "--allow-local-development-signatures"], {
    env,
  });
  expect(verify.code).toBe(0);
  return verify.json<{ trees: Array<{ root_receipt_id: string; receipt_count: number }> }>().trees;
}

const PACKET_INPUTS = [
  "            objective: Summarize the README",
  "            acceptance_criteria: [a summary exists]",
  "            verification: [test -f evidence.txt]",
];

function graphPackage(name: string, lines: string[]): void {
  ws.write(`skills/${name}/SKILL.md`, `---\nname: ${name}\n---\nTest graph ${name}.\n`);
  ws.write(`skills/${name}/X.yaml`, [...lines, ""].join("\n"));
}

beforeEach(async () => {
  ws = makeWorkspace("runx-adapter-graph-");
  ws.addBundledSkill("echo");
  cpSync(FAKE_LOCAL_DIR, join(ws.root, "adapters"), { recursive: true });
  writeAdapterSkill(ws.root, "dispatch");
  env = cleanEnv(ws, { RUNX_ADAPTER_FIXTURE_MODES: "1" });
  // A skill step whose runner is an adapter, feeding a later step.
  graphPackage("flow", [
    "runners:",
    "  default:",
    "    type: graph",
    "    inputs:",
    "      mode: {type: string, required: false, default: complete}",
    "    graph:",
    "      name: adapter-flow",
    "      result_from: [after]",
    "      steps:",
    "        - id: hand",
    "          skill: ../dispatch",
    "          inputs:",
    ...PACKET_INPUTS,
    "            fixture_mode: $input.mode",
    "            allow_spawn: true",
    "        - id: after",
    "          skill: ../echo",
    "          inputs:",
    "            message: $steps.hand.dispatch.status",
  ]);
  // An inline adapter source whose authority requires a human approval.
  graphPackage("gated", [
    "runners:",
    "  default:",
    "    type: graph",
    "    graph:",
    "      name: adapter-gated",
    "      result_from: [after]",
    "      steps:",
    "        - id: hand",
    "          run:",
    "            type: adapter",
    "            adapter:",
    "              id: fake-local",
    "              lane: plain-agent",
    "              authority: [read_only, human_approval_required]",
    "          inputs:",
    ...PACKET_INPUTS,
    "        - id: after",
    "          skill: ../echo",
    "          inputs:",
    "            message: $steps.hand.dispatch.status",
  ]);
  // The gated graph nested one level down.
  graphPackage("outer", [
    "runners:",
    "  default:",
    "    type: graph",
    "    graph:",
    "      name: adapter-outer",
    "      result_from: [inner]",
    "      steps:",
    "        - id: inner",
    "          skill: ../gated",
  ]);
  expect((await runx(ws, ["adapter", "trust", "fake-local"], { env })).code).toBe(0);
});
afterEach(() => ws.cleanup());

describe("graph steps whose runner is an adapter", () => {
  it("dry-run without --allow-spawn (graph inputs cannot grant it), dispatch with it, and seal the dispatch as a child of the step", async () => {
    const dry = await runx(ws, ["skill", "skills/flow", "--json"], { env });
    expect(dry.code).toBe(0);
    const dryEnv = dry.json<Envelope>();
    expect(dryEnv.result).toEqual({ message: "dry_run" });
    expect(spawnedAny()).toBe(false);
    const [dryStep] = children(readReceipt(dryEnv.receipt_id));
    expect(dispatchesOf(dryStep!)).toEqual([
      expect.objectContaining({
        status: "dry_run",
        step_id: "hand",
        graph_run_id: dryEnv.run_id,
        failure: expect.objectContaining({ code: "spawn_authority_missing" }),
        spawn_authority: { granted: false, source: null, principal: null },
      }),
    ]);

    const live = await runx(ws, ["skill", "skills/flow", "--allow-spawn", "--json"], { env });
    expect(live.code).toBe(0);
    const liveEnv = live.json<Envelope>();
    expect(liveEnv.result).toEqual({ message: "completed" });
    const [hand, after] = children(readReceipt(liveEnv.receipt_id));
    expect(hand?.seal).toMatchObject({ disposition: "closed", reason_code: "dispatch_completed" });
    expect(after?.acts[0]?.id).toBe("act_after");
    const [dispatch] = dispatchesOf(hand!);
    expect(dispatch).toMatchObject({
      status: "completed",
      spawn_authority: { granted: true, source: "cli" },
      process: expect.objectContaining({ spawned: true, exit_code: 0 }),
    });
    // The graph, its two steps, and the dispatch receipt under the first.
    const trees = await verifyTrees();
    expect(trees.find((t) => t.root_receipt_id === liveEnv.receipt_id)?.receipt_count).toBe(4);
    const attempts = await runx(ws, ["adapter", "attempts", liveEnv.run_id, "--json"], { env });
    expect(attempts.json<{ attempts: Array<{ verified: boolean }> }>().attempts).toEqual([
      expect.objectContaining({ verified: true }),
    ]);
  });

  it("refuse a retry policy on an adapter step: a dispatch is never retried automatically", async () => {
    graphPackage("retrying", [
      "runners:",
      "  default:",
      "    type: graph",
      "    graph:",
      "      name: adapter-retrying",
      "      steps:",
      "        - id: hand",
      "          skill: ../dispatch",
      "          retry: {max_attempts: 3}",
      "          inputs:",
      ...PACKET_INPUTS,
    ]);
    const r = await runx(ws, ["skill", "skills/retrying", "--allow-spawn", "--json"], { env });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("never retried automatically");
    expect(spawnedAny()).toBe(false);
  });

  it("a refused dispatch blocks the graph and runs nothing after it", async () => {
    writeAdapterSkill(ws.root, "dispatch", { lane: "omx-codex" });
    const r = await runx(ws, ["skill", "skills/flow", "--allow-spawn", "--json"], { env });
    expect(r.code).toBe(1);
    const envelope = r.json<Envelope>();
    expect(envelope.closure?.disposition).toBe("blocked");
    const steps = children(readReceipt(envelope.receipt_id));
    expect(steps.map((s) => [s.acts[0]?.id, s.seal.disposition, s.seal.reason_code])).toEqual([
      ["act_hand", "blocked", "unsupported_lane"],
    ]);
    expect(spawnedAny()).toBe(false);
    await verifyTrees();
  });

  it("pause for approval only with --allow-spawn, spawn nothing before the decision, then resume and dispatch", async () => {
    const dry = (await runx(ws, ["skill", "skills/gated", "--json"], { env })).json<Envelope>();
    expect(dry.status).toBe("sealed");
    expect(dry.result).toEqual({ message: "dry_run" });

    const first = await runx(ws, ["skill", "skills/gated", "--allow-spawn", "--json"], { env });
    expect(first.code).toBe(2);
    const paused = first.json<Envelope>();
    expect(paused.status).toBe("needs_approval");
    expect(paused.requests.map((r) => r.id)).toEqual(["adapter.hand.approval"]);
    expect(spawnedAny()).toBe(false);
    const [deferred] = children(readReceipt(paused.receipt_id));
    expect(deferred?.seal).toMatchObject({
      disposition: "deferred",
      reason_code: "approval_required",
    });

    const done = await runx(ws, ["resume", paused.run_id, "-", "--allow-spawn", "--json"], {
      env,
      stdin: JSON.stringify({ approvals: { "adapter.hand.approval": true } }),
    });
    expect(done.code).toBe(0);
    const sealed = done.json<Envelope>();
    expect(sealed.result).toEqual({ message: "completed" });
    const [hand] = children(readReceipt(sealed.receipt_id));
    expect(hand?.lineage.previous?.uri).toBe(`runx:receipt:${deferred!.id}`);
    const [dispatch] = dispatchesOf(hand!);
    expect(dispatch).toMatchObject({
      status: "completed",
      authority: expect.objectContaining({ approval_policy: "required" }),
      approval: expect.objectContaining({ receipt_id: deferred!.id }),
    });
    const trees = await verifyTrees();
    expect(trees.find((t) => t.root_receipt_id === sealed.receipt_id)?.receipt_count).toBe(4);
  });

  it("pause and resume an adapter step inside a nested graph", async () => {
    const first = await runx(ws, ["skill", "skills/outer", "--allow-spawn", "--json"], { env });
    const paused = first.json<Envelope>();
    expect(paused.status).toBe("needs_approval");
    expect(paused.requests.map((r) => r.id)).toEqual(["adapter.inner/hand.approval"]);
    // Resuming without --allow-spawn records a dry run: the approval alone grants no spawn.
    const done = await runx(ws, ["resume", paused.run_id, "-", "--json"], {
      env,
      stdin: JSON.stringify({ approvals: { "adapter.inner/hand.approval": true } }),
    });
    expect(done.code).toBe(0);
    expect(done.json<Envelope>().result).toEqual({ message: "dry_run" });
    expect(spawnedAny()).toBe(false);
    await verifyTrees();
  });

  it("route an adapter's questions to the caller and resume with answers as a new packet", async () => {
    const first = await runx(
      ws,
      ["skill", "skills/flow", "--mode", "needs_input", "--allow-spawn", "--json"],
      { env },
    );
    expect(first.code).toBe(2);
    const paused = first.json<Envelope>();
    expect(paused.status).toBe("needs_agent");
    const [request] = paused.requests;
    expect(request).toMatchObject({
      id: "adapter.hand.input",
      kind: "agent_act",
      invocation: expect.objectContaining({
        questions: [
          { question_id: "q_scope", prompt: "Which module?", answer_schema: { type: "string" } },
        ],
      }),
    });
    // A wrong answer leaves the run paused.
    const bad = await runx(ws, ["resume", paused.run_id, "-", "--allow-spawn", "--json"], {
      env,
      stdin: JSON.stringify({ answers: { "adapter.hand.input": { q_other: "x" } } }),
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr + bad.stdout).toContain("q_other");

    const done = await runx(ws, ["resume", paused.run_id, "-", "--allow-spawn", "--json"], {
      env,
      stdin: JSON.stringify({ answers: { "adapter.hand.input": { q_scope: "lib" } } }),
    });
    expect(done.code).toBe(0);
    const sealed = done.json<Envelope>();
    expect(sealed.result).toEqual({ message: "completed" });
    const attempts = (
      await runx(ws, ["adapter", "attempts", paused.run_id, "--json"], { env })
    ).json<{
      attempts: Array<{
        verified: boolean;
        dispatch: { packet_id: string; retry_of: string | null; status: string };
      }>;
    }>().attempts;
    expect(attempts.map((a) => [a.dispatch.status, a.verified])).toEqual([
      ["blocked", true],
      ["completed", true],
    ]);
    expect(attempts[1]?.dispatch.retry_of).toBe(attempts[0]?.dispatch.packet_id);
    expect(attempts[1]?.dispatch.packet_id).not.toBe(attempts[0]?.dispatch.packet_id);
    await verifyTrees();
  });
});
