import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Receipt } from "../receipts/index.js";
import type { HistoryEffect } from "../services/history-effects.js";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";
import { refundParentAuthority } from "../testing/payment-receipts.test-kit.js";

// The bundled charge and refund skills through the built CLI, on one workspace receipt store:
// every refund our own refund skill seals must lower what the next refund of the charge may take.

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-refund-ledger-");
  ws.addBundledSkill("charge");
  ws.addBundledSkill("refund");
});
afterEach(() => ws.cleanup());

interface Envelope {
  status: string;
  outcome: string;
  run_id: string;
  requests: Array<{ id: string }>;
}

const json = <T>(stdout: string): T => JSON.parse(stdout) as T;

async function approveOnce(paused: Envelope): Promise<Envelope> {
  expect(paused.status).toBe("needs_approval");
  expect(paused.requests).toHaveLength(1);
  const answers = { approvals: { [paused.requests[0]!.id]: { approved: true, reason: "ok" } } };
  const r = await runx(ws, ["resume", paused.run_id, "-", "--json"], {
    stdin: JSON.stringify(answers),
  });
  return json<Envelope>(r.stdout);
}

interface Detail {
  effects: HistoryEffect[];
  steps: Array<{ stepId: string; receiptId: string }>;
}

async function detail(runId: string): Promise<Detail> {
  return json<Detail>((await runx(ws, ["history", "--detail", runId, "--json"])).stdout);
}

function receipt(id: string): Receipt {
  const file = join(ws.root, ".runx", "receipts", `${id.replace(":", "-")}.json`);
  return JSON.parse(readFileSync(file, "utf8")) as Receipt;
}

async function charge(units: number): Promise<string> {
  const r = await runx(ws, [
    "skill",
    "skills/charge",
    "--input-json",
    'mcp_tool_call={"tool":"search.paid","arguments":{"query":"runx"}}',
    "--input-json",
    `provider_policy=${JSON.stringify({
      policy_ref: "policy:provider-demo",
      price_minor: units,
      currency: "USD",
      accepted_settlement_families: ["mock"],
      counterparty: "payer:demo",
      realm: "test",
    })}`,
    "--input-json",
    'returned_credential={"family":"mock","credential_ref":"credential:mock:order-1"}',
    "--verify-capability-ref",
    "capability:charge-verify:order-1",
    "--idempotency-seed",
    "order-1",
    "--json",
  ]);
  const sealed = await approveOnce(json<Envelope>(r.stdout));
  expect(sealed.status).toBe("sealed");
  const [settle] = (await detail(sealed.run_id)).effects;
  expect(settle?.step_id).toBe("settle");
  return settle!.receipt_id!;
}

async function refund(chargeId: string, units: number, seed: string): Promise<Envelope> {
  const r = await runx(ws, [
    "skill",
    "skills/refund",
    "--original-receipt-ref",
    chargeId,
    "--input-json",
    `refund_request=${JSON.stringify({ amount_minor: units, reason: "operator_refund" })}`,
    "--input-json",
    `parent_payment_authority=${JSON.stringify(refundParentAuthority({ max_per_call_units: 1000, max_per_run_units: 1000 }))}`,
    "--idempotency-seed",
    seed,
    "--json",
  ]);
  return json<Envelope>(r.stdout);
}

/** The refusal rule the admit step's receipt records, with its failure code. */
async function refusal(run: Envelope): Promise<[string, unknown, unknown]> {
  const admit = (await detail(run.run_id)).steps.find((s) => s.stepId === "admit");
  const metadata = receipt(admit!.receiptId).metadata ?? {};
  return [run.outcome, metadata.failure_code, metadata.failure_reason];
}

describe("refunds sealed by the refund skill bound the next refund of the same charge", () => {
  it("charges 10.00, refunds 6.00, then refuses 6.00 under another seed, seals 4.00 and refuses 0.01", async () => {
    const chargeId = await charge(1000);

    const first = await approveOnce(await refund(chargeId, 600, "ticket-1"));
    expect(first.status).toBe("sealed");
    expect(first.outcome).toBe("completed");

    const again = await refund(chargeId, 600, "ticket-2");
    expect(await refusal(again)).toEqual(["blocked", "POLICY_DENIED", "refund_over_remaining"]);

    const rest = await approveOnce(await refund(chargeId, 400, "ticket-3"));
    expect(rest.status).toBe("sealed");
    expect(rest.outcome).toBe("completed");

    const cent = await refund(chargeId, 1, "ticket-4");
    expect(await refusal(cent)).toEqual(["blocked", "POLICY_DENIED", "refund_over_remaining"]);
  });

  it("records in the charge and refund receipts the term, proof and link the refund bound reads", async () => {
    const chargeId = await charge(1000);
    const done = await approveOnce(await refund(chargeId, 600, "ticket-1"));
    const refundStep = (await detail(done.run_id)).effects.find((e) => e.step_id === "refund");

    const limitOf = (r: Receipt) => r.authority.terms[0]?.bounds.effect_limits?.[0];
    const charged = receipt(chargeId);
    expect(charged.authority.terms.map((t) => t.verbs)).toEqual([["commit"]]);
    expect(limitOf(charged)).toMatchObject({
      family: "payment",
      unit: "USD",
      max_per_call_units: 1000,
      channels: ["mock"],
      realm: "test",
      peer: "payer:demo",
      operation: "charge",
      single_use_capability: true,
    });
    const refunded = receipt(refundStep!.receipt_id!);
    expect(refunded.authority.terms.map((t) => t.verbs)).toEqual([["reverse"]]);
    expect(limitOf(refunded)).toMatchObject({
      unit: "USD",
      max_per_call_units: 600,
      channels: ["mock"],
      realm: "test",
      peer: "payer:demo",
      operation: "refund",
    });
    expect(refunded.acts[0]?.source_refs).toEqual([
      { type: "receipt", uri: `runx:receipt:${chargeId}`, label: "original charge receipt" },
    ]);
    const kinds = refunded.acts[0]?.criterion_bindings[0]?.verification_refs.map(
      (r) => r.proof_kind,
    );
    expect(kinds).toEqual(["effect_evidence", "effect_finality"]);
    // The mock family moves no money, and the receipt says so.
    expect((refunded.metadata?.effect as Record<string, unknown>).money_moved).toBe(false);
    expect((charged.metadata?.effect as Record<string, unknown>).money_moved).toBe(false);
  });

  it("refuses the same seed again as a duplicate before it reaches the provider", async () => {
    const chargeId = await charge(1000);
    await approveOnce(await refund(chargeId, 300, "ticket-1"));
    const again = await refund(chargeId, 300, "ticket-1");
    expect(await refusal(again)).toEqual(["blocked", "POLICY_DENIED", "duplicate_refund"]);
  });
});
