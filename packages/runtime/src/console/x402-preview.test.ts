/**
 * The approval inbox's preview of an x402 payment gate: the plan rebuilt from the paused
 * `payment.x402_pay` step must be the plan the gate binds; the card then shows payee,
 * amount and the sealed payment reference.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime } from "../create-runtime.js";
import { makeWorkspace } from "../testing/cli.js";
import { startTestServer } from "../testing/http-server.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0)) await f();
});

describe("the preview of an x402 payment gate", () => {
  it("shows the payee, the amount in dollars and the payment reference the gate binds", async () => {
    const server = await startTestServer((req, res) => {
      res.writeHead(402, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          x402Version: 1,
          accepts: [
            {
              scheme: "exact",
              network: "runx-local",
              maxAmountRequired: "1250",
              asset: "USD",
              payTo: "merchant:demo",
              resource: `${server.origin}${req.url}`,
              extra: { operation: "search.paid", settlement_proof: "x-payment-response" },
            },
          ],
        }),
      );
    });
    const ws = makeWorkspace("runx-x402-preview-");
    ws.addBundledSkill("spend");
    const manifest = ws.read("skills/spend/X.yaml");
    ws.write(
      "skills/spend/X.yaml",
      manifest.replace("    type: graph\n", "    type: graph\n    allow_private_network: true\n"),
    );
    const runtime = createRuntime({
      workspaceRoot: ws.root,
      runxHome: ws.home,
      env: { PATH: process.env.PATH, HOME: ws.home },
    });
    cleanups.push(async () => {
      runtime.close();
      ws.cleanup();
      await server.close();
    });
    const limit = {
      family: "payment",
      unit: "USD",
      max_per_call_units: 2000,
      max_per_run_units: 2000,
      channels: ["x402"],
      realm: "test",
      peer: "merchant:demo",
      operation: "search.paid",
      single_use_capability: true,
      authorization_form: "single_use_capability",
    };
    const inputs = {
      resource_url: `${server.origin}/search`,
      realm: "test",
      idempotency_seed: "preview-001",
      parent_payment_authority: {
        term_id: "authority-term:payment:preview",
        principal_ref: { type: "host", uri: "principal:operator:test" },
        resource_ref: { type: "surface", uri: "merchant:demo" },
        resource_family: "effect",
        verbs: ["prepare", "commit"],
        bounds: { effect_limits: [limit] },
        conditions: [],
        approvals: [],
        capabilities: ["effect_single_use_capability"],
        issued_by_ref: { type: "host", uri: "authority:payment:test" },
      },
    };
    const runId = runtime.console.newRunId();
    const env = await runtime.runSkill({
      ref: "skills/spend",
      inputs: Object.fromEntries(
        Object.entries(inputs).map(([k, v]) => [k, { value: v as never }]),
      ),
      secretEnv: [],
      runId,
    });
    expect(env.status).toBe("needs_approval");
    const pending = (await runtime.console.approvals.pending()).find((p) => p.runId === runId);
    expect(pending?.previewUnavailable).toBeNull();
    const preview = pending!.preview!;
    expect(preview.kind).toBe("provider_effect");
    expect(preview.headline).toBe("search.paid of $12.50 to merchant:demo");
    expect(preview.amount).toEqual({ units: 1250, unit: "USD", text: "$12.50" });
    expect(preview.fields.map((f) => f.path)).toEqual([
      "resource",
      "payee",
      "operation",
      "payment_ref",
      "idempotency_key",
    ]);
    expect(preview.onDeny).toMatch(/no payment is sent/);
  });
});
