import { readdirSync, readFileSync, writeFileSync, appendFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../receipts/canonical.js";
import { cleanEnv, makeWorkspace, runx, RUNX_BIN } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
  ws.addBundledSkill("echo");
  ws.addBundledSkill("review-and-record");
  ws.write("doc.md", "# Access review\n\nAll grants confirmed.\n");
  ws.write("skills/two-step/SKILL.md", "---\nname: two-step\n---\nEcho twice.\n");
  ws.write(
    "skills/two-step/X.yaml",
    [
      "runners:",
      "  default:",
      "    type: graph",
      "    inputs:",
      "      message: {type: string, required: true}",
      "    graph:",
      "      name: two-step",
      "      result_from: [second]",
      "      steps:",
      "        - id: first",
      "          skill: ../echo",
      "          inputs:",
      "            message: $input.message",
      "        - id: second",
      "          skill: ../echo",
      "          inputs:",
      "            message: $steps.first.message",
      "",
    ].join("\n"),
  );
});
afterEach(() => ws.cleanup());

interface Envelope {
  status: string;
  run_id: string;
  receipt_id: string;
  result: Record<string, unknown> | null;
  requests: Array<{ id: string; kind: string; gate?: { summary?: Record<string, unknown> } }>;
  closure: { disposition: string } | null;
}

function receiptFile(id: string): string {
  return join(ws.root, ".runx", "receipts", `sha256-${id.slice(7)}.json`);
}

interface ReceiptView {
  subject: { kind: string };
  lineage: { children: Array<{ uri: string }> };
}

function readReceipt(id: string): ReceiptView {
  return JSON.parse(readFileSync(receiptFile(id), "utf8")) as ReceiptView;
}

async function toApproval(): Promise<{ runId: string; gate: string; env: Envelope }> {
  const first = await runx(ws, [
    "skill",
    "skills/review-and-record",
    "--path",
    "doc.md",
    "--idempotency-key",
    "k1",
    "--json",
  ]);
  expect(first.code).toBe(2);
  const paused = first.json<Envelope>();
  expect(paused.status).toBe("needs_agent");
  expect(paused.requests.map((r) => r.id)).toEqual(["agent_task.assess-document.output"]);
  const answers = {
    answers: { "agent_task.assess-document.output": { decision: "accept", note: "complete" } },
  };
  const second = await runx(ws, ["resume", paused.run_id, "-", "--json"], {
    stdin: JSON.stringify(answers),
  });
  expect(second.code).toBe(2);
  const env = second.json<Envelope>();
  expect(env.status).toBe("needs_approval");
  return { runId: paused.run_id, gate: env.requests[0]!.id, env };
}

describe("graph runs", () => {
  it("seals one receipt per step plus the graph receipt, and verify walks the DAG", async () => {
    const r = await runx(ws, ["skill", "skills/two-step", "--message", "hi", "--json"]);
    expect(r.code).toBe(0);
    const env = r.json<Envelope>();
    expect(env.result).toEqual({ message: "hi" });
    const graph = readReceipt(env.receipt_id);
    expect(graph.subject.kind).toBe("graph");
    expect(graph.lineage.children).toHaveLength(2);
    expect(
      readdirSync(join(ws.root, ".runx", "receipts")).filter((f) => f.startsWith("sha256-")),
    ).toHaveLength(3);
    const verify = await runx(ws, ["verify", "--json"]);
    expect(verify.code).toBe(0);
    const tree = verify.json<{ trees: Array<{ root_receipt_id: string; receipt_count: number }> }>()
      .trees;
    expect(tree).toEqual([
      expect.objectContaining({ root_receipt_id: env.receipt_id, receipt_count: 3 }),
    ]);
  });

  it("makes the parent invalid, naming the finding, when a child receipt is edited", async () => {
    const env = (
      await runx(ws, ["skill", "skills/two-step", "--message", "hi", "--json"])
    ).json<Envelope>();
    const child = String(readReceipt(env.receipt_id).lineage.children[0]?.uri).replace(
      "runx:receipt:",
      "",
    );
    const file = receiptFile(child);
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace("step first completed", "step first completeD"),
    );
    const verify = await runx(ws, ["verify", "--json"]);
    expect(verify.code).toBe(3);
    const trees = verify.json<{
      trees: Array<{
        root_receipt_id: string;
        valid: boolean;
        findings: Array<{ code: string; path: string }>;
      }>;
    }>().trees;
    const parent = trees.find((t) => t.root_receipt_id === env.receipt_id);
    expect(parent?.valid).toBe(false);
    const finding = parent?.findings.find((f) => f.path.includes(child));
    expect(finding?.code).toBe("seal_digest_mismatch");
  });

  it("pauses for a human approval whose summary the runtime built, and seals after approval", async () => {
    const { runId, gate, env } = await toApproval();
    expect(gate).toMatch(/^provider-effect:sha256:[0-9a-f]{64}$/);
    expect(Object.keys(env.requests[0]!.gate!.summary!).sort()).toEqual(
      [
        "grant_ref",
        "operation",
        "payload_digest",
        "plan_digest",
        "principal_ref",
        "provider",
        "required_scopes",
        "scopes",
        "target",
      ].sort(),
    );
    const done = await runx(ws, ["resume", runId, "-", "--json"], {
      stdin: JSON.stringify({ approvals: { [gate]: { approved: true, reason: "verified" } } }),
    });
    expect(done.code).toBe(0);
    const sealed = done.json<Envelope>();
    expect(sealed.status).toBe("sealed");
    expect(sealed.result).toMatchObject({
      provider_operation: {
        data: { status: "success", result: { status: "created" }, replayed: false },
      },
    });
    const graph = readReceipt(sealed.receipt_id);
    expect(graph.lineage.children).toHaveLength(3);
    expect((await runx(ws, ["verify", "--json"])).code).toBe(0);
    const provider = JSON.parse(ws.read(".runx/providers/fixture.json"));
    expect(Object.keys(provider.records["review-decisions"])).toHaveLength(1);
  });

  it("refuses the decision when it is placed under answers, and keeps the run paused", async () => {
    const { runId, gate } = await toApproval();
    const wrong = await runx(ws, ["resume", runId, "-", "--json"], {
      stdin: JSON.stringify({ answers: { [gate]: { approved: true } } }),
    });
    expect(wrong.code).toBe(1);
    expect(wrong.json().error).toMatchObject({ reason: "APPROVAL_NOT_ANSWERABLE" });
    const history = (await runx(ws, ["history", "--json"])).json<{
      pendingRuns: Array<{ id: string; status: string }>;
    }>();
    expect(history.pendingRuns).toEqual([
      expect.objectContaining({ id: runId, status: "needs_approval" }),
    ]);
  });

  it("seals declined (exit 1) when the approver denies, and moves nothing", async () => {
    const { runId, gate } = await toApproval();
    const denied = await runx(ws, ["resume", runId, "-", "--json"], {
      stdin: JSON.stringify({ approvals: { [gate]: false } }),
    });
    expect(denied.code).toBe(1);
    expect(denied.json<Envelope>().closure?.disposition).toBe("declined");
    expect(() => ws.read(".runx/providers/fixture.json")).toThrow();
  });

  it("refuses to resume after the package was edited between pause and resume", async () => {
    const { runId, gate } = await toApproval();
    appendFileSync(join(ws.root, "skills", "review-and-record", "SKILL.md"), "\nchanged\n");
    const r = await runx(ws, ["resume", runId, "-", "--json"], {
      stdin: JSON.stringify({ approvals: { [gate]: true } }),
    });
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({ reason: "RESUME_REFUSED" });
  });

  it("refuses to resume after a nested child package changed (the closure digest binds it)", async () => {
    const first = await runx(ws, ["skill", "skills/two-step", "--json"]);
    expect(first.code).toBe(2);
    const paused = first.json<Envelope>();
    appendFileSync(join(ws.root, "skills", "echo", "SKILL.md"), "\nchild changed\n");
    const r = await runx(ws, ["resume", paused.run_id, "-", "--json"], {
      stdin: JSON.stringify({ answers: { [paused.requests[0]!.id]: { message: "x" } } }),
    });
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({ reason: "RESUME_REFUSED" });
  });

  it("resumes from a new process after the pausing process was killed with SIGKILL, without re-running or duplicating steps", async () => {
    // Start the run and kill -9 the process as soon as it has printed its paused envelope.
    const stdout = await new Promise<string>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          RUNX_BIN,
          "skill",
          "skills/review-and-record",
          "--path",
          "doc.md",
          "--idempotency-key",
          "k9",
          "--json",
        ],
        { cwd: ws.root, env: cleanEnv(ws) },
      );
      let out = "";
      child.stdout.on("data", (b: Buffer) => {
        out += b.toString();
        if (out.includes("\n")) child.kill("SIGKILL");
      });
      child.on("close", () => resolve(out));
    });
    const paused = JSON.parse(stdout.trim()) as Envelope;
    expect(paused.status).toBe("needs_agent");
    const readReceiptId = String(readReceipt(paused.receipt_id).lineage.children[0]?.uri);
    const answers = {
      answers: { "agent_task.assess-document.output": { decision: "reject", note: "thin" } },
    };
    const approval = await runx(ws, ["resume", paused.run_id, "-", "--json"], {
      stdin: JSON.stringify(answers),
    });
    const gate = approval.json<Envelope>().requests[0]!.id;
    const done = await runx(ws, ["resume", paused.run_id, "-", "--json"], {
      stdin: JSON.stringify({ approvals: { [gate]: true } }),
    });
    expect(done.code).toBe(0);
    const graph = readReceipt(done.json<Envelope>().receipt_id);
    const childIds: string[] = graph.lineage.children.map((c: { uri: string }) => c.uri);
    expect(childIds).toHaveLength(3);
    expect(new Set(childIds).size).toBe(3);
    expect(childIds[0]).toBe(readReceiptId);
  });
});

describe("artifact envelopes and runtime digests in graphs", () => {
  it("wraps an agent step's wrap_as output as a packet that a data.digest step reads by .data", async () => {
    ws.write("skills/plan/SKILL.md", "---\nname: plan\n---\nDraft a plan, then digest it.\n");
    ws.write(
      "skills/plan/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: graph",
        "    graph:",
        "      name: plan",
        "      result_from: [draft, digest]",
        "      steps:",
        "        - id: draft",
        "          run:",
        "            type: agent-task",
        "            agent: builder",
        "            task: plan",
        "            outputs:",
        "              plan: object",
        "          artifacts:",
        "            wrap_as: plan",
        "            packet: example.plan.v1",
        "        - id: digest",
        "          tool: data.digest",
        "          context:",
        "            value: draft.plan.data",
        "",
      ].join("\n"),
    );
    const paused = await runx(ws, ["skill", "skills/plan", "--json"]);
    expect(paused.code).toBe(2);
    const { run_id, requests } = paused.json<Envelope>();
    expect(requests.map((r) => r.id)).toEqual(["agent_task.plan.output"]);
    const answer = { plan: { steps: ["b", "a"], ready: true } };
    ws.write("answers.json", JSON.stringify({ answers: { "agent_task.plan.output": answer } }));
    const sealed = await runx(ws, ["resume", run_id, "answers.json", "--json"]);
    expect(sealed.code).toBe(0);
    const digest = `sha256:${createHash("sha256").update(canonicalJson(answer)).digest("hex")}`;
    expect(sealed.json<Envelope>().result).toEqual({
      plan: { data: answer },
      digest_result: { data: { algorithm: "sha256", digest } },
    });
  });
});

describe("standalone graph documents", () => {
  function pairGraph(skillRef: string): void {
    ws.write("skills/wrap/SKILL.md", "---\nname: wrap\n---\nWraps its input as an artifact.\n");
    ws.write(
      "skills/wrap/X.yaml",
      "skill: wrap\nrunners:\n  default:\n    type: cli-tool\n    command: cat\n    input_mode: stdin\n    inputs:\n      message: {type: string, required: true}\n    artifacts:\n      wrap_as: result\n",
    );
    ws.write(
      "graphs/pair.yaml",
      [
        "name: pair",
        "owner: me",
        "steps:",
        "  - id: first",
        `    skill: ${skillRef}`,
        "    inputs:",
        "      message: from the first step",
        "  - id: second",
        "    skill: ../skills/echo",
        "    context:",
        "      message: first.result.data.message",
        "",
      ].join("\n"),
    );
  }

  it("run through runx skill in the older dialect, reading a wrapped output by context", async () => {
    pairGraph("../skills/wrap");
    const r = await runx(ws, ["skill", "graphs/pair.yaml", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({
      status: "sealed",
      skill_name: "pair",
      closure: { disposition: "closed", reason_code: "graph_closed" },
      result: { message: "from the first step" },
    });
  });

  it("replay as a kind: graph harness fixture, steps and graph receipt name included", async () => {
    pairGraph("../skills/wrap");
    ws.write(
      "cases/pair.yaml",
      "name: pair-case\nkind: graph\ntarget: ../graphs/pair.yaml\nexpect:\n  status: sealed\n  steps: [first, second]\n  receipt:\n    harness_id: hrn_pair_graph\n    child_receipt_count: 2\n",
    );
    const r = await runx(ws, ["harness", "cases/pair.yaml", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ schema: "runx.receipt.v1" });
    expect(r.code).toBe(0);
  });

  it("may not reach packages outside the workspace", async () => {
    pairGraph("../../outside");
    const r = await runx(ws, ["skill", "graphs/pair.yaml", "--json"]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("outside the workspace");
  });

  it("refuse a YAML file that is not a graph", async () => {
    ws.write("notes.yaml", "title: not a graph\n");
    const r = await runx(ws, ["skill", "notes.yaml", "--json"]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("not a skill package or graph document");
  });
});
