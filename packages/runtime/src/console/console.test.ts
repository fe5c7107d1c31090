import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RUNX_BIN } from "../testing/cli.js";
import { consoleFixture } from "../testing/console-fixture.js";
import type { ConsoleFixture } from "../testing/console-fixture.js";

let fx: ConsoleFixture;
beforeEach(() => {
  fx = consoleFixture();
});
afterEach(() => fx.cleanup());

const PASSWORD = "correct horse battery";

async function pausedRun(initiator?: { id: string; username: string }) {
  const c = fx.runtime.console;
  const runId = c.newRunId();
  if (initiator !== undefined) c.recordInitiator(runId, initiator);
  const env = await fx.runtime.runSkill({
    ref: "skills/gated-echo",
    inputs: { message: { value: "hi" } },
    secretEnv: [],
    runId,
  });
  expect(env.status).toBe("needs_approval");
  return { runId, gateId: env.requests[0]!.id };
}

describe("console services", () => {
  it("hashes passwords with a per-user salt and refuses a wrong password or unknown user alike", async () => {
    const ops = fx.runtime.console.operators;
    await ops.add({ username: "alice", role: "admin", password: PASSWORD });
    await ops.add({ username: "bob", role: "admin", password: PASSWORD });
    const rows = await fx.runtime.console.operators.list();
    expect(rows.map((r) => r.username)).toEqual(["alice", "bob"]);
    expect(JSON.stringify(rows)).not.toContain("password");
    expect((await ops.authenticate("alice", PASSWORD)).role).toBe("admin");
    await expect(ops.authenticate("alice", "wrong password!!")).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
    });
    await expect(ops.authenticate("nobody", PASSWORD)).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
    });
    await expect(
      ops.add({ username: "alice", role: "viewer", password: PASSWORD }),
    ).rejects.toMatchObject({ code: "OPERATOR_EXISTS" });
  });

  it("stores only the hash of an API token and resolves it to its operator", async () => {
    const ops = fx.runtime.console.operators;
    const alice = await ops.add({ username: "alice", role: "approver", password: PASSWORD });
    const { token } = await ops.createToken(alice.id, "ci");
    expect((await ops.authenticateToken(token)).username).toBe("alice");
    await expect(ops.authenticateToken(`${token}x`)).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
    });
  });

  it("spends the bootstrap token once, and offers none once an operator exists", async () => {
    const ops = fx.runtime.console.operators;
    const token = await ops.bootstrapToken();
    expect(token).toEqual(expect.any(String));
    const admin = await ops.redeemBootstrap({
      token: token!,
      username: "root",
      password: PASSWORD,
    });
    expect(admin.role).toBe("admin");
    expect(await ops.bootstrapToken()).toBeNull();
    await expect(
      ops.redeemBootstrap({ token: token!, username: "again", password: PASSWORD }),
    ).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });

  it("seals the authenticated approver, reason and time into the run's receipts and resumes", async () => {
    const ops = fx.runtime.console.operators;
    const starter = await ops.add({ username: "sam", role: "approver", password: PASSWORD });
    const alice = await ops.add({ username: "alice", role: "approver", password: PASSWORD });
    const { runId, gateId } = await pausedRun(starter);

    const [pending] = await fx.runtime.console.approvals.pending();
    expect(pending).toMatchObject({ runId, gateId, stale: false, initiator: "sam" });
    expect(pending!.boundPackageDigest).toMatch(/^sha256:/);

    await expect(
      fx.runtime.console.approvals.decide(
        { runId, gateId, decision: "approve", reason: "mine" },
        starter,
      ),
    ).rejects.toMatchObject({ code: "POLICY_DENIED" });

    const decided = await fx.runtime.console.approvals.decide(
      { runId, gateId, decision: "approve", reason: "looks right" },
      alice,
    );
    expect(decided).toMatchObject({ approvals: 1, required: 1, releasable: true });
    const pauseReceipt = fx.runtime.console.runs.detail(runId).run.receiptId;
    const sealed = await fx.runtime.console.approvals.release({ runId, gateId });
    expect(sealed.status).toBe("sealed");
    expect(sealed.result).toEqual({ message: "hi" });

    const dag = await fx.runtime.console.evidence.dag(runId);
    const approvals = dag.nodes.flatMap((n) => n.approvals);
    expect(approvals).toContainEqual(
      expect.objectContaining({ approver: "alice", decision: "approve" }),
    );
    expect(dag.nodes.every((n) => n.status === "unverified")).toBe(true);
    expect(fx.runtime.console.runs.detail(runId).decisions).toEqual([
      expect.objectContaining({
        username: "alice",
        reason: "looks right",
        pauseReceiptId: pauseReceipt,
      }),
    ]);

    // The evidence bundle re-verifies offline with `runx verify --bundle`, and fails when edited.
    const bundle = await fx.runtime.console.evidence.bundle(runId);
    const file = join(fx.ws.root, "bundle.json");
    writeFileSync(file, JSON.stringify(bundle));
    const ok = JSON.parse(
      execFileSync(process.execPath, [RUNX_BIN, "verify", "--bundle", "bundle.json", "--json"], {
        cwd: fx.ws.root,
        env: { PATH: process.env.PATH, HOME: fx.ws.home, RUNX_HOME: fx.ws.home },
      }).toString(),
    ) as { valid: boolean; trees: Array<{ receipt_count: number }> };
    expect(ok.valid).toBe(true);
    const name = Object.keys(bundle.receipts).find((f) =>
      bundle.receipts[f]!.includes("runx:principal:operator:alice"),
    )!;
    bundle.receipts[name] = bundle.receipts[name]!.replace("looks right", "looks wrong");
    writeFileSync(file, JSON.stringify(bundle));
    let code = 0;
    try {
      execFileSync(process.execPath, [RUNX_BIN, "verify", "--bundle", "bundle.json", "--json"], {
        cwd: fx.ws.root,
        env: { PATH: process.env.PATH, HOME: fx.ws.home, RUNX_HOME: fx.ws.home },
      });
    } catch (error) {
      code = (error as { status: number }).status;
    }
    expect(code).toBe(3);
  });

  it("needs N distinct approvals when the gate policy says so, and a denial seals declined", async () => {
    const ops = fx.runtime.console.operators;
    const a = await ops.add({ username: "a", role: "approver", password: PASSWORD });
    const b = await ops.add({ username: "b", role: "admin", password: PASSWORD });
    const sam = await ops.add({ username: "sam", role: "approver", password: PASSWORD });
    fx.runtime.console.approvals.setPolicy({
      skill: "gated-echo",
      gateId: "*",
      requiredApprovals: 2,
      forbidInitiator: true,
    });
    // Started in the console: under an initiator-excluding policy a run whose initiator is
    // unknown is not approvable at all (approvals.test.ts).
    const { runId, gateId } = await pausedRun(sam);
    const first = await fx.runtime.console.approvals.decide(
      { runId, gateId, decision: "approve", reason: "ok" },
      a,
    );
    expect(first).toMatchObject({ approvals: 1, required: 2, releasable: false });
    await expect(fx.runtime.console.approvals.release({ runId, gateId })).rejects.toMatchObject({
      code: "RESUME_REFUSED",
    });
    await expect(
      fx.runtime.console.approvals.decide(
        { runId, gateId, decision: "approve", reason: "again" },
        a,
      ),
    ).rejects.toMatchObject({ code: "POLICY_DENIED" });
    const second = await fx.runtime.console.approvals.decide(
      { runId, gateId, decision: "deny", reason: "not today" },
      b,
    );
    expect(second.releasable).toBe(true);
    const env = await fx.runtime.console.approvals.release({ runId, gateId });
    expect(env.closure?.disposition).toBe("declined");
  });

  it("marks a gate stale and refuses the decision after the package changed", async () => {
    const ops = fx.runtime.console.operators;
    const a = await ops.add({ username: "a", role: "approver", password: PASSWORD });
    const { runId, gateId } = await pausedRun();
    fx.ws.write("skills/gated-echo/SKILL.md", "---\nname: gated-echo\n---\nChanged.\n");
    const [pending] = await fx.runtime.console.approvals.pending();
    expect(pending).toMatchObject({ stale: true });
    await expect(
      fx.runtime.console.approvals.decide({ runId, gateId, decision: "approve", reason: "ok" }, a),
    ).rejects.toMatchObject({ code: "APPROVAL_STALE" });
  });

  it("lists runs newest first with an opaque cursor and the waiting-for-approval filter", async () => {
    await pausedRun();
    await fx.runtime.runSkill({
      ref: "skills/echo",
      inputs: { message: { value: "x" } },
      secretEnv: [],
    });
    const all = fx.runtime.console.runs.list({ limit: 1 });
    expect(all.items).toHaveLength(1);
    expect(all.nextCursor).toEqual(expect.any(String));
    const next = fx.runtime.console.runs.list({ limit: 1, cursor: all.nextCursor });
    expect(next.items[0]!.id).not.toBe(all.items[0]!.id);
    expect(fx.runtime.console.runs.list({ waitingForApproval: true }).items).toHaveLength(1);
    expect(() => fx.runtime.console.runs.list({ cursor: "garbage" })).toThrow(
      expect.objectContaining({ code: "USAGE" }),
    );
  });
});
