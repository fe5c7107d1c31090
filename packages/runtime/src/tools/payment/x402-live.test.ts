/**
 * The x402 rail end to end through the built CLI against a real paid endpoint on loopback
 * that counts the requests carrying a payment. Refused payments never carry one to it; an
 * approved payment reaches it exactly once, also when the paused run is resumed by two
 * `runx resume` processes at the same time.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx, type Workspace } from "../../testing/cli.js";
import { paymentAuthority as authority, startX402Endpoint } from "../../testing/x402-endpoint.js";
import type { X402Endpoint as Endpoint } from "../../testing/x402-endpoint.js";

interface Envelope {
  status: string;
  run_id: string;
  result: Record<string, unknown> | null;
  requests: Array<{ id: string; kind: string; gate?: { summary?: Record<string, unknown> } }>;
  closure: { disposition: string; reason_code?: string; summary?: string } | null;
}

let ws: Workspace;
let endpoint: Endpoint;
beforeEach(async () => {
  ws = makeWorkspace();
  ws.addBundledSkill("spend");
  // The bundled skill pays public resources only; this copy may reach the loopback endpoint.
  const manifest = ws.read("skills/spend/X.yaml");
  ws.write(
    "skills/spend/X.yaml",
    manifest.replace("    type: graph\n", "    type: graph\n    allow_private_network: true\n"),
  );
  // Answers slowly, so that two concurrent resumes overlap while the payment is in flight.
  endpoint = await startX402Endpoint({ answerDelayMs: 400 });
});
afterEach(async () => {
  await endpoint.server.close();
  ws.cleanup();
});

async function start(overrides: Record<string, unknown> = {}): Promise<Envelope> {
  ws.write(
    "inputs.json",
    JSON.stringify({
      resource_url: `${endpoint.server.origin}/search`,
      parent_payment_authority: authority(125),
      idempotency_seed: "live-001",
      realm: "test",
      ...overrides,
    }),
  );
  const first = await runx(ws, ["skill", "skills/spend", "--inputs", "inputs.json", "--json"]);
  return first.json<Envelope>();
}

function resume(runId: string, gate: string, approved: boolean): Promise<Envelope> {
  return runx(ws, ["resume", runId, "-", "--json"], {
    stdin: JSON.stringify({ approvals: { [gate]: approved } }),
  }).then((r) => r.json<Envelope>());
}

function gateOf(paused: Envelope): string {
  expect(paused.status).toBe("needs_approval");
  const gate = paused.requests.find((r) => r.kind === "approval");
  expect(gate?.id).toMatch(/^provider-effect:sha256:[0-9a-f]{64}$/);
  expect(gate?.gate?.summary).toMatchObject({
    provider: "x402",
    operation: "search.paid",
    target: "merchant:demo",
    amount: { units: 125, unit: "USD" },
  });
  return gate?.id ?? "";
}

describe("x402 rail against a live loopback endpoint", () => {
  it("pays an approved payment exactly once when the paused run is resumed twice at once", async () => {
    const paused = await start();
    const gate = gateOf(paused);
    expect(endpoint.paid).toHaveLength(0);
    const both = await Promise.all([
      resume(paused.run_id, gate, true),
      resume(paused.run_id, gate, true),
    ]);
    // The run store lets one resume take the paused run; the other is refused.
    expect(both.map((env) => env.status).sort()).toEqual(["failure", "sealed"]);
    expect(endpoint.paid).toHaveLength(1);
    const sealed = both.filter((env) => env.status === "sealed");
    expect(sealed.length).toBeGreaterThanOrEqual(1);
    expect(sealed[0]?.result).toMatchObject({
      x402_payment: {
        provider: "x402",
        status: "settled",
        money_moved: true,
        amount: { units: 125, unit: "USD" },
        approval: { gate_id: gate, approved: true },
      },
    });
    // The endpoint saw sealed references only: no authority, no credential material.
    const header = String(endpoint.paid[0]?.headers["x-payment"]);
    const sent = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as {
      payload: Record<string, unknown>;
    };
    expect(Object.keys(sent.payload).sort()).toEqual([
      "idempotency_key",
      "payment_ref",
      "reservation_ref",
    ]);
    expect(JSON.stringify(endpoint.paid[0]?.headers)).not.toContain("authority-term");
    // The pay step's receipt records the effect and the approval that released it.
    const effects = ws
      .files(".runx/receipts")
      .filter((f) => f.endsWith(".json") && f.includes("sha256-"))
      .map((f) => JSON.parse(ws.read(f)) as { metadata?: { effect?: Record<string, unknown> } })
      .flatMap((r) => (r.metadata?.effect !== undefined ? [r.metadata.effect] : []));
    expect(effects).toEqual([
      expect.objectContaining({
        provider: "x402",
        operation: "search.paid",
        target: "merchant:demo",
        amount: { units: 125, unit: "USD" },
        idempotency_key: expect.stringMatching(/^payment:[0-9a-f]{64}$/),
        plan_digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        approval: expect.objectContaining({ gate_id: gate, approved: true }),
        money_moved: true,
      }),
    ]);
    // history --detail shows the payment's evidence from the same function as the card.
    const detail = (await runx(ws, ["history", "--detail", paused.run_id, "--json"])).json<{
      effects: Array<{
        step_id: string;
        facts: { fields: Array<{ label: string; value: string }> };
      }>;
    }>();
    const pay = detail.effects.find((e) => e.step_id === "pay");
    const lines = new Map(pay?.facts.fields.map((f) => [f.label, f.value]));
    expect(lines.get("Provider")).toBe("x402");
    expect(lines.get("Operation")).toBe("search.paid");
    expect(lines.get("Target")).toBe("merchant:demo");
    expect(lines.get("Idempotency key")).toMatch(/^payment:[0-9a-f]{64}$/);
    expect(lines.get("Releasing approval")).toContain(gate);
    // A third resume after sealing replays nothing to the endpoint either.
    await resume(paused.run_id, gate, true);
    expect(endpoint.paid).toHaveLength(1);
  }, 60_000);

  it("pays once for two runs of the same intent approved at once: the ledger claim decides", async () => {
    const first = await start();
    const second = await start();
    expect(second.run_id).not.toBe(first.run_id);
    const gate = gateOf(first);
    expect(gateOf(second)).toBe(gate);
    const both = await Promise.all([
      resume(first.run_id, gate, true),
      resume(second.run_id, gate, true),
    ]);
    expect(endpoint.paid).toHaveLength(1);
    const payments = both.map(
      (env) => (env.result as { x402_payment: Record<string, unknown> }).x402_payment,
    );
    expect(payments.map((p) => p.money_moved)).toEqual([true, true]);
    expect(payments.map((p) => p.replayed).sort()).toEqual([false, true]);
    expect(payments[0]?.payment_ref).toBe(payments[1]?.payment_ref);
  }, 60_000);

  it("refuses, as a ledger refusal, the same intent sent to another resource after it paid", async () => {
    const paused = await start();
    await resume(paused.run_id, gateOf(paused), true);
    expect(endpoint.paid).toHaveLength(1);
    const env = await start({ resource_url: `${endpoint.server.origin}/search?again=1` });
    expect(env.closure?.disposition).toBe("blocked");
    expect(env.closure?.summary).toContain("already paid another plan");
    expect(endpoint.paid).toHaveLength(1);
  }, 60_000);

  it.each([
    ["amount over the cap", { parent_payment_authority: authority(100) }],
    [
      "a child authority broader than its parent",
      { requested_payment_authority: { ...authority(500), term_id: "authority-term:wide" } },
    ],
  ])("refuses %s before any approval, and no payment reaches the endpoint", async (_, input) => {
    const env = await start(input);
    expect(env.closure?.disposition).toBe("blocked");
    expect(endpoint.paid).toHaveLength(0);
  });

  it("refuses a rail without proof, and no payment reaches the endpoint", async () => {
    endpoint.proof = false;
    const env = await start();
    expect(env.closure?.disposition).toBe("blocked");
    expect(endpoint.paid).toHaveLength(0);
  });

  it("refuses a price that drifted between quote and payment, after approval", async () => {
    const paused = await start();
    const gate = gateOf(paused);
    endpoint.price = "150";
    const env = await resume(paused.run_id, gate, true);
    expect(env.closure?.disposition).toBe("blocked");
    expect(endpoint.paid).toHaveLength(0);
  }, 30_000);

  it("moves no money when the approval is declined", async () => {
    const paused = await start();
    const env = await resume(paused.run_id, gateOf(paused), false);
    expect(env.closure?.disposition).toBe("declined");
    expect(endpoint.paid).toHaveLength(0);
  });
});
