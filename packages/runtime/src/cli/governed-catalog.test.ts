import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import type { HarnessReport } from "../harness/index.js";
import type { HistoryEffect } from "../services/history-effects.js";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-governed-");
});
afterEach(() => ws.cleanup());

const json = <T>(stdout: string): T => JSON.parse(stdout) as T;

describe("the governed catalog skills", () => {
  it.each([
    [
      "send-as",
      [
        "approval-denied",
        "sends-after-one-approval",
        "skip-approval-refused",
        "unknown-channel-refused",
        "unnamed-audience-refused",
      ],
    ],
    [
      "weather-forecast",
      [
        "empty-forecast-fails",
        "forecast-packet",
        "invalid-location-refused",
        "life-safety-refused",
        "provider-error-fails",
      ],
    ],
    [
      "audit-receipt",
      [
        "malformed-id-fails",
        "refused-send-explained",
        "sent-message-tree-clean",
        "unknown-receipt-fails",
      ],
    ],
  ])("%s passes every harness fixture, refusals included", async (name, cases) => {
    ws.addBundledSkill(name);
    const r = await runx(ws, ["harness", `skills/${name}`, "--json"], { timeoutMs: 60_000 });
    const report = json<HarnessReport & { case_names: string[] }>(r.stdout);
    expect(report.assertion_errors).toEqual([]);
    expect(report.status).toBe("passed");
    expect(report.case_names).toEqual(cases);
    expect(r.code).toBe(0);
  });

  it("a harness fixture that expects the wrong outcome fails", async () => {
    ws.addBundledSkill("send-as");
    const file = join(ws.root, "skills/send-as/fixtures/skip-approval-refused.yaml");
    ws.write(
      "skills/send-as/fixtures/skip-approval-refused.yaml",
      readFileSync(file, "utf8").replace("status: policy_denied", "status: sealed"),
    );
    const r = await runx(ws, ["harness", "skills/send-as", "--json"], { timeoutMs: 60_000 });
    expect(json<HarnessReport>(r.stdout).status).toBe("failed");
    expect(r.code).toBe(1);
  });
});

describe("send-as on a live workspace", () => {
  const inputs = [
    "--principal",
    "acct_acme",
    "--channel",
    "email",
    "--input-json",
    'audience={"type":"list","ref":"list:june-subscribers"}',
    "--content",
    "June newsletter",
    "--consent-basis",
    "opted in at signup",
    "--idempotency-key",
    "june-1",
    "--json",
  ];
  interface Paused {
    status: string;
    run_id: string;
    requests: Array<{ id: string; gate: { summary: Record<string, unknown> } }>;
  }

  it("pauses once with audience, channel, content digest and consent basis, then writes one outbox message however often it is resent", async () => {
    ws.addBundledSkill("send-as");
    const first = json<Paused>((await runx(ws, ["skill", "skills/send-as", ...inputs])).stdout);
    expect(first.status).toBe("needs_approval");
    expect(first.requests).toHaveLength(1);
    const gate = first.requests[0]!;
    expect(gate.gate.summary).toMatchObject({
      provider: "outbox",
      operation: "message.send",
      target: "email",
      message: {
        channel: "email",
        audience: { type: "list", ref: "list:june-subscribers" },
        consent_basis: "opted in at signup",
      },
    });
    expect(String((gate.gate.summary.message as Record<string, unknown>).content_digest)).toMatch(
      /^sha256:[0-9a-f]{64}$/,
    );
    const answers = JSON.stringify({ approvals: { [gate.id]: { approved: true, reason: "ok" } } });
    const sealed = await runx(ws, ["resume", first.run_id, "-", "--json"], { stdin: answers });
    expect(json<{ status: string }>(sealed.stdout).status).toBe("sealed");
    expect(readdirSync(join(ws.root, "outbox", "email"))).toHaveLength(1);
    expect(ws.files(".runx").some((f) => f.includes("outbox"))).toBe(false);

    // history --detail shows the effect's evidence, checked against the signed receipt.
    const detail = await runx(ws, ["history", "--detail", first.run_id, "--json"]);
    const effects = json<{ effects: HistoryEffect[] }>(detail.stdout).effects;
    expect(effects).toHaveLength(1);
    expect(effects[0]!.step_id).toBe("send");
    expect(effects[0]!.evidence).toBe("signed");
    expect(Object.fromEntries(effects[0]!.facts.fields.map((f) => [f.label, f.value]))).toEqual({
      Provider: "outbox",
      Operation: "message.send",
      Target: "email",
      Amount: "none (not a payment)",
      "Idempotency key": "june-1",
      "Plan digest": String(gate.gate.summary.plan_digest),
      "Releasing approval": `approved by human (gate ${gate.id})`,
    });
    const text = await runx(ws, ["history", "--detail", first.run_id]);
    expect(text.stdout).toContain("covered by the step receipt's signed output commitment");
    expect(text.stdout).toContain('Idempotency key: "june-1"');

    // A state-store output edited after the seal is no longer what the receipt commits.
    const db = new Database(join(ws.root, ".runx", "state.sqlite"));
    const row = db
      .prepare("SELECT output_json FROM steps WHERE run_id = ? AND step_id = 'send'")
      .get(first.run_id) as { output_json: string };
    db.prepare("UPDATE steps SET output_json = ? WHERE run_id = ? AND step_id = 'send'").run(
      row.output_json.replace('"idempotency_key":"june-1"', '"idempotency_key":"june-2"'),
      first.run_id,
    );
    db.close();
    const edited = await runx(ws, ["history", "--detail", first.run_id, "--json"]);
    const after = json<{ effects: HistoryEffect[] }>(edited.stdout).effects[0]!;
    expect(after.evidence).toBe("not_committed");

    // The same key again replays the recorded effect: no second approval, no second file.
    const again = await runx(ws, ["skill", "skills/send-as", ...inputs]);
    expect(json<{ status: string }>(again.stdout).status).toBe("sealed");
    expect(readdirSync(join(ws.root, "outbox", "email"))).toHaveLength(1);
  });

  it("refuses a request to skip the approval, sealing blocked with its reason and writing nothing", async () => {
    ws.addBundledSkill("send-as");
    const r = await runx(ws, ["skill", "skills/send-as", ...inputs, "--skip-approval", "true"]);
    const out = json<{ status: string; closure: { disposition: string; summary: string } }>(
      r.stdout,
    );
    expect(r.code).toBe(1);
    expect(out.closure.disposition).toBe("blocked");
    expect(out.closure.summary).toContain("refuses to skip its approval");
    expect(ws.files().some((f) => f.startsWith("outbox/"))).toBe(false);
  });
});
