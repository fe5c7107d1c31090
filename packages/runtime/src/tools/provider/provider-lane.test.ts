import { describe, expect, it } from "vitest";
import { validateToolsProviderMutateOutput } from "../../generated/validate-tools-provider-mutate.output.js";
import { validateToolsProviderReadOutput } from "../../generated/validate-tools-provider-read.output.js";
import { sha256Prefixed } from "../../receipts/canonical.js";
import { createMemoryEffectLedger } from "../effect-ledger.js";
import { providerTools } from "./provider.js";
import { createProviderLaneDrivers } from "./provider-lane.js";
import type { ProviderLane } from "./provider-lane.js";
import { failureCode, makeToolContext, successData } from "../../testing/tool-context.js";
import type {
  ApprovalDecision,
  JsonRecord,
  NativeTool,
  ToolContext,
  ToolResult,
} from "../types.js";

const [readTool, mutateTool] = providerTools() as [NativeTool, NativeTool];

const LANE: ProviderLane = {
  principal_id: "operator-fixture",
  grants: [
    { grant_id: "slack-read", provider: "slack", scopes: ["messages.search"] },
    { grant_id: "hook", provider: "n8n", scopes: ["workflow.invoke", "workflow.read"] },
  ],
  operations: [
    {
      grant_id: "slack-read",
      operation: "messages.search",
      target: "slack://messages",
      access: "read",
      result: { external_tenant_ref: "slack:workspace:T1", messages: [{ text: "green" }] },
    },
    {
      grant_id: "hook",
      operation: "workflow.invoke",
      target: "n8n.example.com",
      access: "mutate",
      result: { status: "accepted", idempotency_key: "$request.idempotency_key" },
    },
    {
      grant_id: "hook",
      operation: "workflow.invocation.read",
      target: "n8n.example.com",
      access: "read",
      result: { status: "accepted", idempotency_key: "$previous.idempotency_key" },
    },
  ],
};

/** Every provider effect gate decided yes by a human (the lane, not the gate, is under test). */
const APPROVE_EVERY_GATE = {
  get: (id: string) => (id.startsWith("provider-effect:") ? { approved: true } : undefined),
} as unknown as ReadonlyMap<string, ApprovalDecision>;

function context(scopes: string[], lane: ProviderLane = LANE): ToolContext {
  return makeToolContext({
    workspaceRoot: "/nonexistent-workspace",
    scopes,
    providers: createProviderLaneDrivers(lane),
    effects: createMemoryEffectLedger(),
    approvals: APPROVE_EVERY_GATE,
  });
}

const summary = (result: ToolResult): string =>
  result.status === "failure" ? result.summary : `(${result.status})`;

describe("provider response lane", () => {
  it("answers provider.read from the declared operation, screened and projected", async () => {
    const input = {
      expected_provider: "slack",
      operation: "messages.search",
      target: "slack://messages",
      input: { keywords: "release" },
      result_fields: ["external_tenant_ref", "messages"],
    };
    const output = successData(await readTool.execute(input, context(["messages.search"])));
    expect(validateToolsProviderReadOutput(output)).toBe(true);
    expect(output).toMatchObject({
      status: "success",
      provider: "slack",
      access: "read",
      result: { external_tenant_ref: "slack:workspace:T1", messages: [{ text: "green" }] },
    });
  });

  it("needs exactly one grant covering the step's scopes", async () => {
    const input = {
      expected_provider: "slack",
      operation: "messages.search",
      target: "slack://messages",
    };
    expect(failureCode(await readTool.execute(input, context(["thread.read"])))).toBe(
      "PROVIDER_MISMATCH",
    );
    const twice: ProviderLane = {
      ...LANE,
      grants: [...LANE.grants, { grant_id: "again", provider: "slack", scopes: [] }],
    };
    expect(failureCode(await readTool.execute(input, context([], twice)))).toBe(
      "PROVIDER_MISMATCH",
    );
  });

  it("fails an undeclared call with the call named, and a call of the wrong access", async () => {
    const other = await readTool.execute(
      { expected_provider: "slack", operation: "thread.read", target: "slack://T1/C1/1.2" },
      context(["messages.search"]),
    );
    expect(failureCode(other)).toBe("FIXTURE_UNMATCHED");
    expect(summary(other)).toContain("slack thread.read on slack://T1/C1/1.2");
    const wrongAccess = await mutateTool.execute(
      {
        expected_provider: "slack",
        operation: "messages.search",
        target: "slack://messages",
        idempotency_key: "k",
      },
      context(["messages.search"]),
    );
    expect(failureCode(wrongAccess)).toBe("FIXTURE_UNMATCHED");
    expect(summary(wrongAccess)).toContain("declares messages.search on slack://messages as read");
  });

  it("fills $request and $previous from the calls it answered; a mutation answers once", async () => {
    const ctx = context(["workflow.invoke", "workflow.read"]);
    const invoke = {
      expected_provider: "n8n",
      operation: "workflow.invoke",
      target: "n8n.example.com",
      idempotency_key: "evt-1",
      input: { workflow_slug: "demo" },
    };
    const output = successData(await mutateTool.execute(invoke, ctx));
    expect(validateToolsProviderMutateOutput(output)).toBe(true);
    const providerKey = sha256Prefixed("runx.provider.idempotency.v1\nn8n\nevt-1");
    expect(output.result).toEqual({ status: "accepted", idempotency_key: providerKey });

    const readback = successData(
      await readTool.execute(
        {
          expected_provider: "n8n",
          operation: "workflow.invocation.read",
          target: "n8n.example.com",
        },
        ctx,
      ),
    );
    expect((readback.result as JsonRecord).idempotency_key).toBe(providerKey);

    // Same key: the ledger replays, the lane is not asked again.
    const replay = successData(await mutateTool.execute(invoke, ctx));
    expect(replay.replayed).toBe(true);
    // Another key: the declared mutation has already answered.
    const second = await mutateTool.execute({ ...invoke, idempotency_key: "evt-2" }, ctx);
    expect(failureCode(second)).toBe("FIXTURE_UNMATCHED");
  });

  it("refuses $previous when no call came before", async () => {
    const result = await readTool.execute(
      {
        expected_provider: "n8n",
        operation: "workflow.invocation.read",
        target: "n8n.example.com",
      },
      context(["workflow.read"]),
    );
    expect(failureCode(result)).toBe("FIXTURE_UNMATCHED");
    expect(summary(result)).toContain("operations[2].result.idempotency_key");
  });

  it("exposes only the granted providers", async () => {
    const result = await readTool.execute(
      { expected_provider: "fixture", operation: "record.list", target: "t" },
      context([]),
    );
    expect(failureCode(result)).toBe("PROVIDER_MISMATCH");
  });
});
