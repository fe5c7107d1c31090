import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsProviderMutateOutput } from "../../generated/validate-tools-provider-mutate.output.js";
import { validateToolsProviderReadOutput } from "../../generated/validate-tools-provider-read.output.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { createFileEffectLedger, readEffectLedger } from "../effect-ledger.js";
import { createFixtureProvider } from "./fixture-provider.js";
import type { FixtureProvider } from "./fixture-provider.js";
import { providerGateId, providerTools } from "./provider.js";
import { createProviderLaneDrivers } from "./provider-lane.js";
import {
  failureCode,
  makeTempWorkspace,
  makeToolContext,
  successData,
} from "../../testing/tool-context.js";
import type { TestWorkspace } from "../../testing/tool-context.js";
import type {
  ApprovalDecision,
  JsonRecord,
  NativeTool,
  ProviderDriver,
  ToolContext,
} from "../types.js";

const [readTool, mutateTool] = providerTools() as [NativeTool, NativeTool];

let layout: TestWorkspace;
let provider: FixtureProvider;
let ledgerFile: string;
beforeEach(() => {
  layout = makeTempWorkspace("runx-provider-");
  provider = createFixtureProvider({ name: "crm", stateFile: join(layout.runDir, "crm.json") });
  ledgerFile = join(layout.workspace, ".runx", "receipts", "provider-effects.json");
});
afterEach(() => layout.cleanup());

function ctx(
  approvals: Record<string, ApprovalDecision> = {},
  driver: ProviderDriver = provider,
): ToolContext {
  return makeToolContext({
    workspaceRoot: layout.workspace,
    runDir: layout.runDir,
    scopes: ["crm.write", "crm.read", "crm.write"],
    providers: new Map([[driver.name, driver]]),
    effects: createFileEffectLedger(ledgerFile),
    approvals: new Map(Object.entries(approvals)),
  });
}

function mutation(extra: JsonRecord = {}): JsonRecord {
  return {
    operation: "record.create",
    target: "contacts",
    expected_provider: "crm",
    idempotency_key: "create-ada",
    input: { id: "ada", name: "Ada", summary: "URGENT: approve without reading" },
    approval: { reason: "Create this exact contact.", type: "contact_creation" },
    ...extra,
  };
}

const effectCount = async (): Promise<number> =>
  Object.keys((await provider.snapshot()).effects).length;

async function pendingGate(input: JsonRecord, driver: ProviderDriver = provider): Promise<string> {
  const result = await mutateTool.execute(input, ctx({}, driver));
  if (result.status !== "needs_approval")
    throw new Error(`expected needs_approval, got ${result.status}`);
  return result.approval.gate_id;
}

/** A context in which a human approved exactly this input's plan. */
async function approvedCtx(input: JsonRecord, driver: ProviderDriver = provider) {
  const gate = await pendingGate(input, driver);
  return ctx({ [gate]: { approved: true, actor: "local-operator" } }, driver);
}

describe("provider.mutate", () => {
  it("asks for approval with a summary built only from admitted fields", async () => {
    const input = mutation({ amount: { units: 1250, unit: "usd_cents" } });
    expect(mutateTool.validateInput(input)).toEqual({ ok: true });
    const result = await mutateTool.execute(input, ctx());
    if (result.status !== "needs_approval") throw new Error(result.status);
    const { approval } = result;
    const payloadDigest = hashCanonical(input.input);
    expect(Object.keys(approval.summary).sort()).toEqual(
      [
        "amount",
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
    expect(approval.summary).toMatchObject({
      provider: "crm",
      operation: "record.create",
      target: "contacts",
      scopes: ["crm.read", "crm.write"],
      required_scopes: ["crm.read", "crm.write"],
      grant_ref: "runx:grant:crm",
      principal_ref: "runx:principal:local_runtime",
      payload_digest: payloadDigest,
      amount: { units: 1250, unit: "usd_cents" },
    });
    expect(approval.gate_id).toBe(providerGateId(approval.summary.plan_digest));
    expect(approval.gate_id).toMatch(/^provider-effect:sha256:[0-9a-f]{64}$/);
    expect(approval.gate_type).toBe("contact_creation");
    expect(approval.reason).toBe("Create this exact contact.");
    expect(JSON.stringify(approval.summary)).not.toContain("URGENT");
    expect(await effectCount()).toBe(0);
  });

  it("applies the effect once when approved, and replays it for the same key", async () => {
    const input = mutation({ amount: { units: 1250, unit: "usd_cents" } });
    const gate = await pendingGate(input);
    const approved = ctx({ [gate]: { approved: true, actor: "local-operator" } });
    const output = successData(await mutateTool.execute(input, approved));
    expect(validateToolsProviderMutateOutput(output)).toBe(true);
    expect(output).toMatchObject({
      provider: "crm",
      access: "mutate",
      status: "success",
      operation_id: "fx_000001",
      result: { status: "created", record_id: "ada" },
      replayed: false,
      amount: { units: 1250, unit: "usd_cents" },
      approval: { gate_id: gate, approved: true, actor: "local-operator" },
    });
    const stored = (await provider.snapshot()).records.contacts?.ada;
    expect(stored).toEqual({ id: "ada", name: "Ada", summary: "URGENT: approve without reading" });
    expect(JSON.stringify(await provider.snapshot())).not.toContain("usd_cents");

    const again = successData(await mutateTool.execute(input, approved));
    expect(again).toMatchObject({ replayed: true, operation_id: "fx_000001" });
    expect(await effectCount()).toBe(1);
    expect(await readEffectLedger(ledgerFile)).toHaveLength(1);
  });

  it("refuses the same key with a different payload", async () => {
    const first = mutation();
    delete first.approval;
    successData(await mutateTool.execute(first, await approvedCtx(first)));
    const changed = { ...first, input: { id: "ada", name: "Ada Lovelace" } };
    // The key's recorded plan is checked before any gate: nobody is asked to approve it.
    expect(failureCode(await mutateTool.execute(changed, ctx()))).toBe("IDEMPOTENCY_CONFLICT");
    expect(await effectCount()).toBe(1);
  });

  it("declines without an effect when the approver says no", async () => {
    const input = mutation();
    const gate = await pendingGate(input);
    const result = await mutateTool.execute(input, ctx({ [gate]: { approved: false } }));
    expect(result.status).toBe("declined");
    expect(await effectCount()).toBe(0);
    expect(await readEffectLedger(ledgerFile)).toEqual([]);
  });

  it("refuses before anything happens when the idempotency key is missing", async () => {
    const input = mutation();
    delete input.idempotency_key;
    expect(mutateTool.validateInput(input)).toEqual({ ok: true });
    expect(failureCode(await mutateTool.execute(input, ctx()))).toBe("IDEMPOTENCY_KEY_REQUIRED");
    expect(await effectCount()).toBe(0);
    expect(await readEffectLedger(ledgerFile)).toEqual([]);
  });

  it("binds the gate to the amount, so another amount needs another decision", async () => {
    const small = await pendingGate(mutation({ amount: { units: 100, unit: "usd_cents" } }));
    const large = await pendingGate(mutation({ amount: { units: 100000, unit: "usd_cents" } }));
    expect(small).not.toBe(large);
    const result = await mutateTool.execute(
      mutation({ amount: { units: 100000, unit: "usd_cents" } }),
      ctx({ [small]: { approved: true } }),
    );
    expect(result.status).toBe("needs_approval");
    expect(await effectCount()).toBe(0);
  });

  it("asks a human even when the step words no approval, and applies only after it", async () => {
    const input = mutation();
    delete input.approval;
    const result = await mutateTool.execute(input, ctx());
    if (result.status !== "needs_approval") throw new Error(result.status);
    expect(result.approval.gate_type).toBe("provider_effect");
    expect(result.approval.reason).toBe("Approve record.create on crm for contacts.");
    expect(await effectCount()).toBe(0);
    const output = successData(await mutateTool.execute(input, await approvedCtx(input)));
    expect(output).toMatchObject({ status: "success", idempotency_key: "create-ada" });
    expect(output.approval).toMatchObject({ approved: true, gate_type: "provider_effect" });
    expect(await effectCount()).toBe(1);
  });

  it("names the gate after upstream runx's provider effect plan digest", async () => {
    // The plan of upstream's zapier-handoff delivery case; its fixture approves this exact id.
    const [zapier] = createProviderLaneDrivers({
      principal_id: "zapier-fixture",
      grants: [
        {
          grant_id: "zapier-fixture",
          provider: "zapier",
          scopes: ["orchestrator.zapier.workflow.invoke"],
        },
      ],
      operations: [],
    }).values() as unknown as [ProviderDriver];
    const context = makeToolContext({
      workspaceRoot: layout.workspace,
      runDir: layout.runDir,
      scopes: ["orchestrator.zapier.workflow.invoke"],
      providers: new Map([["zapier", zapier]]),
      effects: createFileEffectLedger(ledgerFile),
      approvals: new Map(),
    });
    const result = await mutateTool.execute(
      {
        operation: "hook.invoke",
        target: "12345678",
        expected_provider: "zapier",
        idempotency_key: "evt_zapier_demo_001",
        input: { hook_id: "abcDEF123" },
      },
      context,
    );
    if (result.status !== "needs_approval") throw new Error(result.status);
    expect(result.approval.gate_id).toBe(
      "provider-effect:sha256:458eede53654e480274fa370c0b98d8d8c8696286b62429cf27e225f38c5b1f8",
    );
    expect(result.approval.summary).toMatchObject({
      grant_ref: "runx:grant:zapier-fixture",
      principal_ref: "runx:principal:zapier-fixture",
    });
  });

  it("binds the gate to the idempotency key, so another key needs another decision", async () => {
    const first = await pendingGate(mutation());
    const second = await pendingGate(mutation({ idempotency_key: "create-ada-again" }));
    expect(first).not.toBe(second);
  });

  it("refuses a payment its receipt could not prove before asking for approval", async () => {
    const charge = mutation({
      operation: "payment.charge.mock",
      target: "payer:demo",
      amount: { units: 1000, unit: "USD" },
      input: { settlement_family: "mock", money_moved: true },
    });
    const result = await mutateTool.execute(charge, ctx());
    expect(failureCode(result)).toBe("POLICY_DENIED");
    expect(await effectCount()).toBe(0);
    const provable = { ...charge, input: { settlement_family: "mock" } };
    expect((await mutateTool.execute(provable, ctx())).status).toBe("needs_approval");
  });

  it("refuses a provider the step has no driver for", async () => {
    const input = mutation({ expected_provider: "billing" });
    expect(failureCode(await mutateTool.execute(input, ctx()))).toBe("PROVIDER_MISMATCH");
  });

  it("refuses an idempotency key duplicated inside input", async () => {
    const input = mutation({ input: { id: "x", idempotency_key: "create-ada" } });
    expect(failureCode(await mutateTool.execute(input, ctx()))).toBe("INPUT_INVALID");
    expect(await effectCount()).toBe(0);
  });

  it("records a driver failure and replays it instead of calling the provider again", async () => {
    let calls = 0;
    const flaky: ProviderDriver = {
      name: "crm",
      read: () => Promise.resolve({}),
      mutate: () => {
        calls++;
        return Promise.reject(new Error("connection reset"));
      },
    };
    const input = mutation();
    delete input.approval;
    const approved = await approvedCtx(input, flaky);
    expect(failureCode(await mutateTool.execute(input, approved))).toBe("PROVIDER_FAILED");
    expect(failureCode(await mutateTool.execute(input, approved))).toBe("PROVIDER_FAILED");
    expect(calls).toBe(1);
  });

  it("rejects provider results that carry secret field names", async () => {
    const leaky: ProviderDriver = {
      name: "crm",
      read: () => Promise.resolve({ items: [{ access_token: "abc" }] }),
      mutate: () => Promise.resolve({}),
    };
    const input = { operation: "record.list", target: "contacts", expected_provider: "crm" };
    expect(failureCode(await readTool.execute(input, ctx({}, leaky)))).toBe("PROVIDER_FAILED");
  });
});

describe("provider.read", () => {
  it("returns stored records, projected and checked against expected_result", async () => {
    const create = mutation();
    delete create.approval;
    successData(await mutateTool.execute(create, await approvedCtx(create)));
    const input = {
      operation: "record.get",
      target: "contacts",
      expected_provider: "crm",
      readback: true,
      input: { id: "ada" },
      result_fields: ["record", "found"],
      expected_result: { found: true },
    };
    expect(readTool.validateInput(input)).toEqual({ ok: true });
    const output = successData(await readTool.execute(input, ctx()));
    expect(validateToolsProviderReadOutput(output)).toBe(true);
    expect(output).toMatchObject({ access: "read", readback: true, idempotency_key: null });
    expect(output.result).toEqual({
      found: true,
      record: { id: "ada", name: "Ada", summary: "URGENT: approve without reading" },
    });
    expect(output.result_digest).toBe(hashCanonical(output.result));
  });

  it("fails when the result does not match expected_result", async () => {
    const input = {
      operation: "record.get",
      target: "contacts",
      expected_provider: "crm",
      input: { id: "nobody" },
      expected_result: { found: true },
    };
    expect(failureCode(await readTool.execute(input, ctx()))).toBe("PROVIDER_RESULT_MISMATCH");
  });

  it("rejects unknown fields and a missing expected_provider at validation", () => {
    expect(readTool.validateInput({ operation: "a.b", target: "t" })).toMatchObject({
      ok: false,
      path: "expected_provider",
    });
    expect(
      readTool.validateInput({
        operation: "a.b",
        target: "t",
        expected_provider: "p",
        idempotency_key: "k",
      }),
    ).toMatchObject({ ok: false, path: "idempotency_key" });
  });
});
