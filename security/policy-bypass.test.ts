/**
 * Policy bypass through another entry point: a gate policy set in the console (N distinct
 * approvals, initiator excluded) binds wherever the gate can be resolved. `runx resume` with
 * a decision under `approvals` is refused with the policy named for a gate the console
 * governs, and nothing past the gate runs; the console's decide flow releases the gate once,
 * with distinct operators other than the initiator; a run whose initiator runx cannot
 * establish (started by the CLI) is not approvable under a policy that excludes the initiator.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { data, mutate, query, runx, startApiProcess } from "./kit.js";
import type { Answer, ApiProcess, Session, Workspace } from "./kit.js";

/** A graph: a human gate `release`, then a step that appends one line to `<marker>`. */
function gatedSkill(name: string, marker: string): string {
  return [
    "runners:",
    "  default:",
    "    type: graph",
    "    graph:",
    `      name: ${name}`,
    "      result_from: [mark]",
    "      steps:",
    "        - id: release",
    "          run:",
    "            type: approval",
    "          inputs:",
    "            reason: Release the marker.",
    "            gate_type: release",
    "        - id: mark",
    "          skill: ../mark",
    "          inputs:",
    `            file: ${marker}`,
    "",
  ].join("\n");
}

const MARK_YAML = [
  "runners:",
  "  default:",
  "    type: cli-tool",
  "    command: sh",
  "    args: [mark.sh, '{{input.file}}']",
  "    input_mode: none",
  "    timeout_seconds: 10",
  "    inputs:",
  "      file: {type: string, required: true}",
  "    outputs:",
  "      marked: boolean",
  "",
].join("\n");

const MARK_SH = 'echo released >> "$RUNX_CWD/$1"\necho \'{"marked": true}\'\n';

function prepare(ws: Workspace): void {
  ws.write("skills/mark/SKILL.md", "---\nname: mark\n---\nAppend a line to a file.\n");
  ws.write("skills/mark/X.yaml", MARK_YAML);
  ws.write("skills/mark/mark.sh", MARK_SH);
  for (const name of ["two-key", "plain-gate"]) {
    ws.write(`skills/${name}/SKILL.md`, `---\nname: ${name}\n---\nMark after approval.\n`);
    ws.write(`skills/${name}/X.yaml`, gatedSkill(name, `${name}.log`));
  }
}

let api: ApiProcess;
let admin: Session;
let alice: Session;
let bob: Session;
let carol: Session;

beforeAll(async () => {
  api = await startApiProcess({ prepare });
  admin = await api.operator("root", "admin");
  alice = await api.operator("alice", "approver");
  bob = await api.operator("bob", "approver");
  carol = await api.operator("carol", "approver");
  const set = await mutate(
    api.url,
    "approvals.setPolicy",
    { skill: "two-key", gateId: "*", requiredApprovals: 2, forbidInitiator: true },
    api.headers(admin),
  );
  expect(data(set)).toEqual({ requiredApprovals: 2, forbidInitiator: true });
}, 120_000);
afterAll(() => api?.cleanup());

/** Lines the gated step appended so far (0 when it never ran). */
function marks(file: string): number {
  const path = join(api.ws.root, file);
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean).length : 0;
}

async function runStatus(runId: string, as: Session): Promise<string> {
  const detail = data<{ run: { status: string } }>(
    await query(api.url, "runs.get", { runId }, api.headers(as)),
  );
  return detail.run.status;
}

/** Polls the run until it has `status` (the release runs in the API's worker pool). */
async function settlesAs(runId: string, status: string, as: Session): Promise<void> {
  const deadline = Date.now() + 15_000;
  let seen = await runStatus(runId, as);
  while (seen !== status && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    seen = await runStatus(runId, as);
  }
  expect(seen).toBe(status);
}

/** `runx resume <run> -` with one approval of the `release` gate on stdin. */
function cliApprove(runId: string, json = true) {
  return runx(api.ws, ["resume", runId, "-", ...(json ? ["--json"] : [])], {
    stdin: JSON.stringify({ approvals: { release: { approved: true, reason: "cli" } } }),
  });
}

/** Starts `skill` from the console as `as`; returns the paused run's id. */
async function consoleStart(skill: string, as: Session): Promise<string> {
  const started = data<{ runId: string; envelope?: { status: string } }>(
    await mutate(api.url, "runs.start", { skill, inputs: {} }, api.headers(as)),
  );
  expect(started.envelope?.status).toBe("needs_approval");
  return started.runId;
}

/** Starts `skill` with the CLI; returns the paused run's id. */
async function cliStart(skill: string): Promise<string> {
  const paused = await runx(api.ws, ["skill", skill, "--json"]);
  expect(paused.code, paused.stderr).toBe(2);
  return paused.json<{ run_id: string }>().run_id;
}

function decide(runId: string, as: Session, decision: "approve" | "deny" = "approve") {
  return mutate(
    api.url,
    "approvals.decide",
    { runId, gateId: "release", decision, reason: "checked" },
    api.headers(as),
  );
}

function runtimeCode(answer: Answer): unknown {
  return (answer.body as { error?: { data?: { runtimeCode?: unknown } } }).error?.data?.runtimeCode;
}

describe("a console gate policy binds the CLI", () => {
  it("refuses runx resume with one approval, names the policy, and runs nothing", async () => {
    const runId = await consoleStart("skills/two-key", alice);
    const refused = await cliApprove(runId);
    expect(refused.code).not.toBe(0);
    expect(refused.code).not.toBe(2);
    const failure = refused.json<{ error: { reason: string; message: string } }>();
    expect(failure.error.reason).toBe("POLICY_DENIED");
    expect(failure.error.message).toContain("two-key");
    expect(failure.error.message).toContain("release");
    expect(failure.error.message).toContain(
      "requires 2 approvals from distinct operators, initiator excluded",
    );
    expect(failure.error.message).toContain("console");
    const human = await cliApprove(runId, false);
    expect(human.code).toBe(refused.code);
    expect(human.stderr).toContain("requires 2 approvals from distinct operators");
    expect(human.stderr).not.toMatch(/\n\s+at /);
    expect(marks("two-key.log")).toBe(0);
    expect(await runStatus(runId, bob)).toBe("needs_approval");
  });

  it("releases exactly once with two distinct approvers other than the initiator", async () => {
    const runId = await consoleStart("skills/two-key", alice);
    const before = marks("two-key.log");
    const own = await decide(runId, alice);
    expect(runtimeCode(own)).toBe("POLICY_DENIED");
    const first = data<{ approvals: number; required: number; releasable: boolean }>(
      await decide(runId, bob),
    );
    expect(first).toMatchObject({ approvals: 1, required: 2, releasable: false });
    const twice = await decide(runId, bob);
    expect(runtimeCode(twice)).toBe("POLICY_DENIED");
    expect(marks("two-key.log")).toBe(before);
    expect(await runStatus(runId, bob)).toBe("needs_approval");
    // The CLI cannot add the second approval either.
    expect((await cliApprove(runId)).json<{ error: { reason: string } }>().error.reason).toBe(
      "POLICY_DENIED",
    );
    const second = data<{ releasable: boolean; run: { state: string } | null }>(
      await decide(runId, carol),
    );
    expect(second.releasable).toBe(true);
    await settlesAs(runId, "sealed", bob);
    expect(marks("two-key.log")).toBe(before + 1);
    // Sealed is terminal: neither entry point runs the gated step again.
    expect(runtimeCode(await decide(runId, admin))).toBe("APPROVAL_NOT_FOUND");
    expect((await cliApprove(runId)).code).not.toBe(0);
    expect(marks("two-key.log")).toBe(before + 1);
  });

  it("refuses the CLI for a console-started run under the default policy (initiator excluded)", async () => {
    const runId = await consoleStart("skills/plain-gate", alice);
    const refused = await cliApprove(runId);
    const failure = refused.json<{ error: { reason: string; message: string } }>();
    expect(failure.error.reason).toBe("POLICY_DENIED");
    expect(failure.error.message).toContain("alice");
    expect(marks("plain-gate.log")).toBe(0);
    expect(await runStatus(runId, bob)).toBe("needs_approval");
    expect(data<{ releasable: boolean }>(await decide(runId, bob)).releasable).toBe(true);
    await settlesAs(runId, "sealed", bob);
    expect(marks("plain-gate.log")).toBe(1);
  });

  it("a CLI-started run under the policy: the CLI refuses, and so does the console (initiator unknown)", async () => {
    const runId = await cliStart("skills/two-key");
    const before = marks("two-key.log");
    const refused = await cliApprove(runId);
    expect(refused.json<{ error: { reason: string } }>().error.reason).toBe("POLICY_DENIED");
    const console1 = await decide(runId, bob);
    expect(runtimeCode(console1)).toBe("POLICY_DENIED");
    expect(JSON.stringify(console1.body)).toContain("initiator");
    expect(marks("two-key.log")).toBe(before);
    expect(await runStatus(runId, bob)).toBe("needs_approval");
  });

  it("a CLI-started run of a gate with no console policy still resumes from the CLI", async () => {
    const runId = await cliStart("skills/plain-gate");
    const before = marks("plain-gate.log");
    const resumed = await cliApprove(runId);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(marks("plain-gate.log")).toBe(before + 1);
  });
});

describe("the API's other ways to a gate", () => {
  it("runs.resume does not release a gate short of its quorum, and runs.answer never resolves one", async () => {
    const runId = await consoleStart("skills/two-key", alice);
    const before = marks("two-key.log");
    data(await decide(runId, bob));
    const resumed = await mutate(api.url, "runs.resume", { runId }, api.headers(carol));
    expect(resumed.status).toBe(409);
    expect(runtimeCode(resumed)).toBe("RESUME_REFUSED");
    const asAnswer = await mutate(
      api.url,
      "runs.answer",
      { runId, answers: { release: { approved: true } } },
      api.headers(carol),
    );
    expect(runtimeCode(asAnswer)).toBe("APPROVAL_NOT_ANSWERABLE");
    const smuggled = await mutate(
      api.url,
      "runs.answer",
      { runId, answers: {}, approvals: { release: true } },
      api.headers(carol),
    );
    expect(smuggled.status).toBe(400);
    expect(marks("two-key.log")).toBe(before);
    expect(await runStatus(runId, bob)).toBe("needs_approval");
  });

  it("does not count an approval of an operator disabled before the quorum was reached", async () => {
    const dave = await api.operator("dave", "approver");
    const runId = await consoleStart("skills/two-key", alice);
    const before = marks("two-key.log");
    data(await decide(runId, dave));
    data(
      await mutate(
        api.url,
        "auth.setOperatorDisabled",
        { username: "dave", disabled: true },
        api.headers(admin),
      ),
    );
    const next = data<{ approvals: number; releasable: boolean }>(await decide(runId, bob));
    expect(next).toMatchObject({ approvals: 1, releasable: false });
    expect(marks("two-key.log")).toBe(before);
    expect(await runStatus(runId, bob)).toBe("needs_approval");
  });
});
