/**
 * What the approval inbox shows a gate releases: the payload of a paused `provider.mutate`
 * step recovered from the run and checked against the gate's digests (refused when it does
 * not match), redacted like everything else the console shows, and the bound data of the
 * other gate kinds; an approval whose effect cannot be shown is refused.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime } from "../create-runtime.js";
import type { Runtime } from "../create-runtime.js";
import { makeWorkspace } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";
import { GATED_SKILL_YAML } from "../testing/console-fixture.js";
import type { Operator } from "./operators.js";

const PASSWORD = "correct horse battery";
const SECRET = "s3cr3t-delivered-token-value";
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const f of cleanups.splice(0)) f();
});

/** A graph paying `recipient` through the fixture provider after one approval. */
const PAY_YAML = [
  "runners:",
  "  default:",
  "    type: graph",
  "    inputs:",
  "      recipient: {type: string, required: true}",
  "      cents: {type: integer, required: true}",
  "      note: {type: string, required: true}",
  "    graph:",
  "      name: pay",
  "      result_from: [pay]",
  "      steps:",
  "        - id: leak",
  "          run:",
  "            type: cli-tool",
  "            command: sh",
  "            args: [./leak.sh]",
  "        - id: pay",
  "          tool: provider.mutate",
  "          inputs:",
  "            expected_provider: fixture",
  "            operation: payout.create",
  "            target: payouts",
  "            idempotency_key: pay-1",
  "            amount: {units: $input.cents, unit: usd_cents}",
  "            input:",
  "              recipient: $input.recipient",
  "              note: $input.note",
  "              memo: $steps.leak.memo",
  "              lines: [first, second]",
  "            approval:",
  "              reason: Pay the recipient.",
  "              type: payment",
  "",
].join("\n");

interface Fixture {
  ws: Workspace;
  runtime: Runtime;
  ops: { sam: Operator; grace: Operator };
}

async function fixture(): Promise<Fixture> {
  const ws = makeWorkspace("runx-preview-");
  ws.addBundledSkill("echo");
  ws.write("skills/pay/SKILL.md", "---\nname: pay\n---\nPay after approval.\n");
  ws.write("skills/pay/X.yaml", PAY_YAML);
  ws.write("skills/pay/leak.sh", `printf '{"memo":"token %s"}' "$PAY_TOKEN"\n`);
  // The same payment with a credential-named payload field written into the package.
  ws.write("skills/pay-keyed/SKILL.md", "---\nname: pay-keyed\n---\nPay with a key.\n");
  ws.write(
    "skills/pay-keyed/X.yaml",
    PAY_YAML.replace(
      "              lines:",
      "              api_key: literal-key-in-the-package\n              lines:",
    ),
  );
  ws.write("skills/pay-keyed/leak.sh", `printf '{"memo":"token %s"}' "$PAY_TOKEN"\n`);
  // A graph whose step runs the payment graph as a nested graph.
  ws.write("skills/outer/SKILL.md", "---\nname: outer\n---\nPays through a nested graph.\n");
  ws.write(
    "skills/outer/X.yaml",
    [
      "runners:",
      "  default:",
      "    type: graph",
      "    inputs:",
      "      recipient: {type: string, required: true}",
      "    graph:",
      "      name: outer",
      "      result_from: [inner]",
      "      steps:",
      "        - id: inner",
      "          skill: ../pay",
      "          inputs:",
      "            recipient: $input.recipient",
      "            cents: 99",
      "            note: nested",
      "",
    ].join("\n"),
  );
  ws.write("skills/gated-echo/SKILL.md", "---\nname: gated-echo\n---\nEcho after approval.\n");
  ws.write(
    "skills/gated-echo/X.yaml",
    GATED_SKILL_YAML.replace(
      "            gate_type: release\n",
      "            gate_type: release\n            summary: {change: $input.message}\n            ticket: OPS-7\n",
    ),
  );
  const runtime = createRuntime({
    workspaceRoot: ws.root,
    runxHome: ws.home,
    env: { PATH: process.env.PATH, HOME: ws.home, PAY_TOKEN: SECRET },
  });
  cleanups.push(() => {
    runtime.close();
    ws.cleanup();
  });
  const add = (username: string) =>
    runtime.console.operators.add({ username, role: "approver", password: PASSWORD });
  return { ws, runtime, ops: { sam: await add("sam"), grace: await add("grace") } };
}

/** Starts `ref` as `initiator` from the console; the run pauses at its gate. */
async function paused(fx: Fixture, ref: string, inputs: Record<string, unknown>) {
  const runId = fx.runtime.console.newRunId();
  fx.runtime.console.recordInitiator(runId, fx.ops.sam);
  const env = await fx.runtime.runSkill({
    ref,
    inputs: Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, { value: v as never }])),
    secretEnv: ref.includes("pay") ? ["PAY_TOKEN"] : [],
    runId,
  });
  expect(env.status).toBe("needs_approval");
  const gateId = env.requests[0]!.id;
  const pending = (await fx.runtime.console.approvals.pending()).find((p) => p.runId === runId);
  return { runId, gateId, pending: pending! };
}

const PAY_INPUTS = { recipient: "acct_ada", cents: 1250, note: "June invoice" };

describe("the preview of a provider effect", () => {
  it("shows every field of the bound payload, the amount in dollars, and what approving and denying do", async () => {
    const fx = await fixture();
    const { pending } = await paused(fx, "skills/pay", PAY_INPUTS);
    expect(pending.previewUnavailable).toBeNull();
    const preview = pending.preview!;
    expect(preview.kind).toBe("provider_effect");
    expect(preview.amount).toEqual({ units: 1250, unit: "usd_cents", text: "$12.50" });
    expect(preview.headline).toBe("payout.create of $12.50 to payouts");
    expect(preview.fields).toEqual([
      { path: "recipient", label: "Recipient", value: "acct_ada" },
      { path: "note", label: "Note", value: "June invoice" },
      { path: "memo", label: "Memo", value: "token [redacted-credential]" },
      { path: "lines[0]", label: "Lines 1", value: "first" },
      { path: "lines[1]", label: "Lines 2", value: "second" },
    ]);
    expect(preview.onApprove).toContain("payout.create on payouts at fixture");
    expect(preview.onDeny).toMatch(/declined; nothing is sent to fixture/);
    expect(preview.verified).toContain(
      (pending.summary as { payload_digest: string }).payload_digest,
    );
    expect(pending).toMatchObject({ initiator: "sam", approversAvailable: 1 });
  });

  it("never shows a delivered secret or a credential-named field's value", async () => {
    const fx = await fixture();
    const { pending } = await paused(fx, "skills/pay-keyed", PAY_INPUTS);
    expect(pending.preview!.fields).toContainEqual({
      path: "api_key",
      label: "Api key",
      value: "[redacted-credential]",
    });
    const text = JSON.stringify(await fx.runtime.console.approvals.pending());
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("literal-key-in-the-package");
  });

  it("releases exactly the payload it showed", async () => {
    const fx = await fixture();
    const { runId, gateId, pending } = await paused(fx, "skills/pay", PAY_INPUTS);
    const approvals = fx.runtime.console.approvals;
    await approvals.decide({ runId, gateId, decision: "approve", reason: "ok" }, fx.ops.grace);
    const env = await approvals.release({ runId, gateId });
    expect(env).toMatchObject({ status: "sealed", outcome: "completed" });
    const world = JSON.parse(
      readFileSync(join(fx.ws.root, ".runx", "providers", "fixture.json"), "utf8"),
    ) as { effects: Record<string, { result: { payload: Record<string, unknown> } }> };
    const sent = Object.values(world.effects).map((e) => e.result.payload);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ recipient: "acct_ada", note: "June invoice" });
    const shown = Object.fromEntries(pending.preview!.fields.map((f) => [f.path, f.value]));
    expect(shown.recipient).toBe(sent[0]!.recipient);
    expect(shown.memo).toBe(sent[0]!.memo);
  });

  it("shows no preview and refuses the approval when the payload does not match the gate's digest", async () => {
    const fx = await fixture();
    const { runId, gateId } = await paused(fx, "skills/pay", PAY_INPUTS);
    // The gate as the run row keeps it now claims another payload digest.
    const db = new Database(join(fx.ws.root, ".runx", "state.sqlite"));
    const row = db.prepare("SELECT requests_json FROM runs WHERE id = ?").get(runId) as {
      requests_json: string;
    };
    const other = `sha256:${"0".repeat(64)}`;
    db.prepare("UPDATE runs SET requests_json = ? WHERE id = ?").run(
      row.requests_json.replace(
        /"payload_digest":"sha256:[0-9a-f]{64}"/,
        `"payload_digest":"${other}"`,
      ),
      runId,
    );
    db.close();
    const pending = (await fx.runtime.console.approvals.pending()).find((p) => p.runId === runId)!;
    expect(pending.preview).toBeNull();
    expect(pending.previewUnavailable).toContain(other);
    const approvals = fx.runtime.console.approvals;
    await expect(
      approvals.decide({ runId, gateId, decision: "approve", reason: "ok" }, fx.ops.grace),
    ).rejects.toMatchObject({ code: "APPROVAL_UNVERIFIED", details: { gateId } });
    // Denying releases nothing, so it needs no preview.
    const denied = await approvals.decide(
      { runId, gateId, decision: "deny", reason: "cannot read it" },
      fx.ops.grace,
    );
    expect(denied.releasable).toBe(true);
  });

  it("refuses the approval when the package changed the payload since the pause", async () => {
    const fx = await fixture();
    const { runId, gateId } = await paused(fx, "skills/pay", PAY_INPUTS);
    fx.ws.write("skills/pay/X.yaml", PAY_YAML.replace("note: $input.note", "note: changed"));
    const pending = (await fx.runtime.console.approvals.pending()).find((p) => p.runId === runId)!;
    expect(pending.stale).toBe(true);
    expect(pending.preview).toBeNull();
    expect(pending.previewUnavailable).toMatch(/digest/);
    await expect(
      fx.runtime.console.approvals.decide(
        { runId, gateId, decision: "approve", reason: "ok" },
        fx.ops.grace,
      ),
    ).rejects.toMatchObject({ code: "APPROVAL_STALE" });
  });

  it("finds the payload of a provider effect inside a nested graph", async () => {
    const fx = await fixture();
    const { pending } = await paused(fx, "skills/outer", { recipient: "acct_nested" });
    expect(pending.previewUnavailable).toBeNull();
    expect(pending.preview).toMatchObject({
      kind: "provider_effect",
      amount: { text: "$0.99" },
      fields: expect.arrayContaining([
        { path: "recipient", label: "Recipient", value: "acct_nested" },
        { path: "note", label: "Note", value: "nested" },
      ]),
    });
  });
});

describe("the preview of other gates", () => {
  it("shows an approval step's summary and the inputs it binds, and the steps it lets run", async () => {
    const fx = await fixture();
    const { pending } = await paused(fx, "skills/gated-echo", { message: "ship it" });
    expect(pending.previewUnavailable).toBeNull();
    expect(pending.preview).toMatchObject({
      kind: "approval_step",
      headline: "the release gate of step release",
      amount: null,
      fields: [
        { path: "summary.change", label: "Summary › Change", value: "ship it" },
        { path: "ticket", label: "Ticket", value: "OPS-7" },
      ],
    });
    expect(pending.preview!.onApprove).toContain("(say)");
    expect(pending.preview!.onDeny).toContain("declined");
  });

  it("counts no available approver for a run its only approver started", async () => {
    const fx = await fixture();
    await fx.runtime.console.operators.setDisabled("grace", true);
    const { pending } = await paused(fx, "skills/gated-echo", { message: "alone" });
    expect(pending.policy.forbidInitiator).toBe(true);
    expect(pending.approversAvailable).toBe(0);
  });
});

describe("formatAmount", () => {
  it("formats minor units of a currency and leaves other units as they are", async () => {
    const { formatAmount } = await import("./effect-preview.js");
    expect(formatAmount(1250, "usd_cents")).toBe("$12.50");
    expect(formatAmount(1250, "USD")).toBe("$12.50");
    expect(formatAmount(1250, "eur_minor")).toBe("€12.50");
    expect(formatAmount(1250, "JPY")).toBe("¥1,250");
    expect(formatAmount(1250, "jpy_cents")).toBe("1250 jpy_cents");
    expect(formatAmount(1250, "tokens")).toBe("1250 tokens");
    expect(formatAmount(1250, "ABC")).toBe("1250 ABC");
  });
});
