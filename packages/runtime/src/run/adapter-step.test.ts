/**
 * An adapter step inside a run, as the console and the CLI drive it: the run is recorded as
 * running while its dispatch works (and can be cancelled), a console approval names the
 * authenticated operator who gave it, and spawn authority granted from the console is recorded
 * with the operator who granted it.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Runtime } from "../create-runtime.js";
import type { SkillRunEnvelope } from "../contracts/envelope.js";
import {
  adapterRuntime,
  adapterWorkspace,
  goodInputs,
  writeAdapterSkill,
} from "../adapters/test-support.js";

const PASSWORD = "correct horse battery";
const roots: string[] = [];
const runtimes: Runtime[] = [];
afterEach(() => {
  for (const runtime of runtimes.splice(0)) runtime.close();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A trusted fake-local workspace with `dispatch` (read only) and `gated` (needs approval). */
function setup(): { root: string; runtime: Runtime; spawns: () => number } {
  const root = adapterWorkspace();
  roots.push(root);
  writeAdapterSkill(root, "gated", { authority: ["read_only", "human_approval_required"] });
  let spawns = 0;
  const runtime = adapterRuntime(root, { onAdapterSpawn: () => (spawns += 1) });
  runtimes.push(runtime);
  runtime.adapters.trust("fake-local");
  return { root, runtime, spawns: () => spawns };
}

interface Dispatch {
  status: string;
  invoked_by: string;
  spawn_authority: { granted: boolean; source: string | null; principal: string | null };
  approval: { approver: string; receipt_id: string } | null;
  failure: { code: string } | null;
}

async function dispatches(runtime: Runtime, runId: string): Promise<Dispatch[]> {
  return (await runtime.adapters.attempts(runId)).map((a) => a.dispatch as unknown as Dispatch);
}

interface AuthorityTerms {
  authority: {
    terms: Array<{ term_id: string; approvals: Array<{ approved_by_ref: { uri: string } }> }>;
  };
}

function storedReceipt(root: string, id: string): AuthorityTerms {
  const file = join(root, ".runx", "receipts", `sha256-${id.slice("sha256:".length)}.json`);
  return JSON.parse(readFileSync(file, "utf8")) as AuthorityTerms;
}

async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("timed out");
}

describe("an adapter run while its dispatch works", () => {
  it("is recorded as running, listed by the console and history, and cancellable", async () => {
    const { root, runtime } = setup();
    const runId = runtime.console.newRunId();
    const running = runtime.runSkill({
      ref: "dispatch",
      inputs: goodInputs({ fixture_mode: "sleep" }),
      secretEnv: [],
      allowSpawn: true,
      runId,
    });
    // Another process (the console's API, `runx history`) sees the run while it dispatches.
    const other = adapterRuntime(root);
    runtimes.push(other);
    await until(() =>
      other.console.runs.list({}).items.some((r) => r.id === runId && r.status === "running")
        ? true
        : undefined,
    );
    const detail = await other.historyDetail(runId);
    expect(detail.run?.status).toBe("running");
    expect(detail.steps).toEqual([
      expect.objectContaining({ stepId: "dispatch", status: "running", attempt: 1 }),
    ]);
    // The attempt is in flight (launched): cancel it as the console's button does.
    await until(async () =>
      (await other.adapters.state(runId)).running.length > 0 ? true : undefined,
    );
    expect(other.adapters.cancel(runId)).toEqual({ run_id: runId, requested: true });
    const envelope: SkillRunEnvelope = await running;
    expect(envelope.closure).toMatchObject({ disposition: "killed", reason_code: "cancelled" });
    const after = await other.historyDetail(runId);
    expect(after.run).toMatchObject({ status: "sealed", disposition: "killed" });
    expect(after.steps).toEqual([
      expect.objectContaining({ stepId: "dispatch", status: "killed", attempt: 1 }),
    ]);
  });

  it("marks its step deferred when the dispatch waits for approval", async () => {
    const { runtime } = setup();
    const paused = await runtime.runSkill({
      ref: "gated",
      inputs: goodInputs(),
      secretEnv: [],
      allowSpawn: true,
    });
    expect(paused.status).toBe("needs_approval");
    const detail = await runtime.historyDetail(paused.run_id);
    expect(detail.run?.status).toBe("needs_approval");
    expect(detail.steps).toEqual([
      expect.objectContaining({
        stepId: "dispatch",
        status: "deferred",
        receiptId: paused.receipt_id,
      }),
    ]);
  });
});

describe("who approved and who granted spawn authority", () => {
  it("signs a console approval as the authenticated operator, and a CLI resume as the local operator", async () => {
    const { root, runtime, spawns } = setup();
    const ops = runtime.console.operators;
    const starter = await ops.add({ username: "sam", role: "approver", password: PASSWORD });
    const alice = await ops.add({ username: "alice", role: "approver", password: PASSWORD });

    // Started from the console with spawn authority: it pauses for its approval.
    const runId = runtime.console.newRunId();
    runtime.console.recordInitiator(runId, starter, { allowSpawn: true });
    const paused = await runtime.console.runJob({
      kind: "start",
      runId,
      ref: "gated",
      inputs: { objective: "o", acceptance_criteria: ["a"], verification: ["v"] },
    });
    expect(paused.status).toBe("needs_approval");
    const gateId = paused.requests[0]!.id;
    const [pending] = await runtime.console.approvals.pending();
    expect(pending).toMatchObject({ gateId, spawnGrantedBy: "sam", gateType: "adapter_dispatch" });
    await runtime.console.approvals.decide(
      { runId, gateId, decision: "approve", reason: "scope is read only" },
      alice,
    );
    const sealed = await runtime.console.runJob({ kind: "release", runId, gateId });
    expect(sealed.closure?.disposition).toBe("closed");
    expect(spawns()).toBe(1);
    const [attempt] = await dispatches(runtime, runId);
    expect(attempt).toMatchObject({
      status: "completed",
      spawn_authority: {
        granted: true,
        source: "console",
        principal: "runx:principal:operator:sam",
      },
      invoked_by: "runx:principal:operator:sam",
      approval: { approver: "runx:principal:operator:alice", receipt_id: paused.receipt_id },
    });
    // The sealed receipt and its dispatch child carry the console's attested approval.
    const parent = storedReceipt(root, sealed.receipt_id!);
    const term = parent.authority.terms.find((t) => t.term_id === `approval:${gateId}`);
    expect(term?.approvals.map((a) => a.approved_by_ref.uri)).toEqual([
      "runx:principal:operator:alice",
    ]);
    const childId = (sealed.result as { dispatch: { receipt_id: string } }).dispatch.receipt_id;
    expect(storedReceipt(root, childId).authority.terms.map((t) => t.term_id)).toEqual([
      `approval:${gateId}`,
    ]);

    // The same skill approved through `runx resume` keeps the local operator.
    const cli = await runtime.runSkill({
      ref: "gated",
      inputs: goodInputs(),
      secretEnv: [],
      allowSpawn: true,
    });
    const done = await runtime.resumeWith({
      runId: cli.run_id,
      document: { approvals: { [cli.requests[0]!.id]: true } },
      allowSpawn: true,
    });
    expect(done.closure?.disposition).toBe("closed");
    const [local] = await dispatches(runtime, cli.run_id);
    expect(local).toMatchObject({
      spawn_authority: { granted: true, source: "cli", principal: "runx:principal:local_operator" },
      approval: { approver: "runx:principal:local_operator" },
    });
    expect(storedReceipt(root, done.receipt_id!).authority.terms).toEqual([]);
  });

  it("grants no spawn from the console by default, and never from a viewer", async () => {
    const { runtime, spawns } = setup();
    const ops = runtime.console.operators;
    const approver = await ops.add({ username: "alice", role: "approver", password: PASSWORD });
    const viewer = await ops.add({ username: "victor", role: "viewer", password: PASSWORD });
    expect(() =>
      runtime.console.recordInitiator(runtime.console.newRunId(), viewer, { allowSpawn: true }),
    ).toThrow(expect.objectContaining({ code: "FORBIDDEN" }));
    expect(() =>
      runtime.console.recordInitiator(
        runtime.console.newRunId(),
        { id: approver.id, username: approver.username },
        { allowSpawn: true },
      ),
    ).toThrow(expect.objectContaining({ code: "FORBIDDEN" }));

    const runId = runtime.console.newRunId();
    runtime.console.recordInitiator(runId, approver);
    expect(runtime.console.spawnGrant(runId)).toBeNull();
    const envelope = await runtime.console.runJob({
      kind: "start",
      runId,
      ref: "dispatch",
      inputs: { objective: "o", acceptance_criteria: ["a"], verification: ["v"] },
    });
    expect(envelope.status).toBe("sealed");
    expect(spawns()).toBe(0);
    const [attempt] = await dispatches(runtime, runId);
    expect(attempt).toMatchObject({
      status: "dry_run",
      failure: { code: "spawn_authority_missing" },
      spawn_authority: { granted: false, source: null, principal: null },
    });
  });
});
