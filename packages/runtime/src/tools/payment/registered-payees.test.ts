/**
 * A workspace's registered payees (`.runx/config.json` `payments.payees`) reach
 * `payment.invoice_plan` in a real run through the built CLI: a payee that resolves plans, one
 * that does not is blocked, and a malformed registry is refused naming the file and field.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx, type Workspace } from "../../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-payees-");
  ws.write(
    "skills/invoice/SKILL.md",
    "---\nname: invoice\ndescription: Plan one invoice settlement.\n---\n\n# invoice\n",
  );
  ws.write(
    "skills/invoice/X.yaml",
    `skill: invoice
runners:
  plan:
    default: true
    type: graph
    inputs:
      payee:
        type: json
        required: true
    graph:
      name: invoice-plan
      result_from: [prepare]
      steps:
        - id: prepare
          tool: payment.invoice_plan
          inputs:
            invoice_ref: INV-1
            amount_minor: 900
            currency: USD
            payee: $input.payee
            rail: mock
            rail_profile_ref: rail-profile:mock:test
            idempotency_seed: invoice-1
            realm: test
            parent_payment_authority:
              term_id: authority:ap:test
              principal_ref: { type: principal, uri: principal:operator:test }
              resource_ref: { type: surface, uri: merchant:acme }
              resource_family: effect
              verbs: [prepare, commit]
              bounds:
                effect_limits:
                  - family: payment
                    unit: USD
                    max_per_call_units: 1000
                    max_per_run_units: 1000
                    channels: [mock]
                    realm: test
                    peer: merchant:acme
                    operation: invoice.settle
                    authorization_form: single_use_capability
                    idempotency_required: true
                    recovery_required: true
                    receipt_before_success: true
                    single_use_capability: true
              conditions: []
              approvals: []
              capabilities: [effect_single_use_capability]
              issued_by_ref: { type: host, uri: authority:payment:test }
`,
  );
});
afterEach(() => ws.cleanup());

const acme = { name: "Acme", party_ref: "merchant:acme", settlement_ref: "payee-account:acme" };

async function planFor(payee: object) {
  const r = await runx(ws, ["skill", "skills/invoice", "--payee", JSON.stringify(payee), "--json"]);
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

function registry(payees: object[]): void {
  ws.write(".runx/config.json", JSON.stringify({ payments: { payees } }));
}

const decisionOf = (stdout: string): unknown => {
  const envelope = JSON.parse(stdout) as {
    result?: { settlement_plan?: { data?: { decision?: string; findings?: { code: string }[] } } };
  };
  const data = envelope.result?.settlement_plan?.data;
  return { decision: data?.decision, codes: data?.findings?.map((f) => f.code) };
};

describe("registered payees", () => {
  it("plans a payee that resolves to its registration", async () => {
    registry([acme]);
    const r = await planFor(acme);
    expect(decisionOf(r.stdout)).toEqual({ decision: "ready_for_spend", codes: [] });
  }, 30_000);

  it("blocks a payee reference no registration resolves, and one at another account", async () => {
    registry([{ ...acme, party_ref: "merchant:someone-else" }]);
    expect(decisionOf((await planFor(acme)).stdout)).toEqual({
      decision: "blocked",
      codes: ["payee.unregistered"],
    });
    registry([{ ...acme, settlement_ref: "payee-account:acme-old" }]);
    expect(decisionOf((await planFor(acme)).stdout)).toEqual({
      decision: "blocked",
      codes: ["payee.registration_mismatch"],
    });
  }, 30_000);

  it("refuses a registry entry with two settlement identities, naming the field", async () => {
    registry([{ ...acme, settlement_digest: `sha256:${"a".repeat(64)}` }]);
    const r = await planFor(acme);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain(".runx/config.json");
    expect(r.stdout + r.stderr).toContain("payments.payees.0");
    expect(r.stdout + r.stderr).not.toMatch(/\n\s+at /);
  }, 30_000);
});
