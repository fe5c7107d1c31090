import { describe, expect, it } from "vitest";
import { createTaintSet } from "../../redaction.js";
import { controlPrepareHandoffTool } from "./control-prepare-handoff.js";
import { failureCode, makeToolContext, successOutput } from "../../testing/tool-context.js";
import type { JsonRecord, ToolContext } from "../types.js";

const ctx = (overrides: Partial<ToolContext> = {}): ToolContext =>
  makeToolContext({ workspaceRoot: "/nonexistent-workspace", ...overrides });

function input(overrides: JsonRecord = {}): JsonRecord {
  return {
    platform: "n8n",
    event_id: "evt_demo_001",
    handoff_scope: "orchestrator.n8n.workflow.invoke",
    handoff_audience: "n8n:workflow:governed",
    execution_context: { caller: "runx-cli", environment: "test" },
    payload: { hello: "workflow" },
    ...overrides,
  };
}

async function prepare(value: JsonRecord, context = ctx()) {
  return controlPrepareHandoffTool.execute(value, context);
}

async function data(value: JsonRecord): Promise<JsonRecord> {
  const envelope = successOutput(await prepare(value)).handoff_context as JsonRecord;
  expect(Object.keys(envelope)).toEqual(["data"]);
  return envelope.data as JsonRecord;
}

describe("control.prepare_handoff", () => {
  it("binds scope, audience, idempotency and origin into the delivery envelope", async () => {
    const out = await data(input());
    expect(out).toMatchObject({
      status: "ready",
      platform: "n8n",
      event_id: "evt_demo_001",
      idempotency: { key: "evt_demo_001", receiver_should_dedupe: true },
      handoff: {
        scope: "orchestrator.n8n.workflow.invoke",
        audience: "n8n:workflow:governed",
        source: "runx",
      },
      receiver_validation: {
        require_bearer: true,
        require_scope: "orchestrator.n8n.workflow.invoke",
        require_audience: "n8n:workflow:governed",
        require_event_id: "evt_demo_001",
        reject_duplicate_event_id: true,
      },
      receipt_expectations: {
        outbound_effect_must_be_receipted: true,
        delivered_credential_material_absent: true,
      },
      stop_conditions: [],
    });
    const delivery = out.delivery as JsonRecord;
    expect(delivery.payload).toEqual({ hello: "workflow" });
    expect(delivery.idempotency_key).toBe("evt_demo_001");
    // The context keeps its extensions and gains the bound facts.
    expect(delivery.execution_context).toEqual({
      caller: "runx-cli",
      environment: "test",
      platform: "n8n",
      event_id: "evt_demo_001",
      idempotency_key: "evt_demo_001",
      handoff_scope: "orchestrator.n8n.workflow.invoke",
      handoff_audience: "n8n:workflow:governed",
    });
    expect(out.requests).toBeUndefined();
  });

  it("builds the exact webhook request when a template is given", async () => {
    const out = await data(
      input({ source: "ops", request: { id: "hook", url: "https://n8n.example.com/webhook/x" } }),
    );
    const [request] = out.requests as JsonRecord[];
    expect(request).toMatchObject({
      id: "hook",
      method: "POST",
      url: "https://n8n.example.com/webhook/x",
      headers: {
        "content-type": "application/json",
        "x-runx-event-id": "evt_demo_001",
        "x-runx-handoff-scope": "orchestrator.n8n.workflow.invoke",
        "x-runx-handoff-audience": "n8n:workflow:governed",
      },
    });
    expect((request?.body as JsonRecord).source).toBe("ops");
  });

  it.each([
    ["a scope of another platform", { handoff_scope: "orchestrator.zapier.workflow.invoke" }],
    ["a scope with a template", { handoff_scope: "orchestrator.n8n.{action}" }],
    ["an audience without receiver", { handoff_audience: "n8n:" }],
    ["an audience of another platform", { handoff_audience: "zapier:zap:x" }],
    ["a context without origin", { execution_context: { environment: "test" } }],
    [
      "a context bound to another event",
      { execution_context: { caller: "x", event_id: "evt_other_002" } },
    ],
    [
      "a context with another idempotency key",
      { execution_context: { caller: "x", idempotency_key: "other-key" } },
    ],
    ["a null payload", { payload: null }],
    ["an empty payload", { payload: {} }],
    ["a blank payload", { payload: "  " }],
    ["a plain-HTTP receiver", { receiver: { url: "http://hooks.example.com/x" } }],
    ["a loopback receiver", { receiver: { url: "https://127.0.0.1/x" } }],
    ["a localhost receiver", { receiver: { url: "https://localhost/x" } }],
    ["a private receiver", { receiver: { url: "https://10.1.2.3/x" } }],
    ["a receiver URL with credentials", { receiver: { url: "https://u:p@hooks.example.com/" } }],
    ["a non-HTTPS request", { request: { id: "r", url: "http://hooks.example.com/x" } }],
    ["a malformed event id", { event_id: "a b" }],
    ["an unknown field", { extra: true }],
  ])("refuses %s", async (_label, overrides) => {
    expect(failureCode(await prepare(input(overrides)))).toBe("INPUT_INVALID");
  });

  it("refuses credential material Runx delivered, wherever it sits", async () => {
    const taint = createTaintSet(["tok_live_0123456789abcdef"]);
    const places: JsonRecord[] = [
      { payload: { nested: ["x", { note: "Bearer tok_live_0123456789abcdef" }] } },
      { payload: { tok_live_0123456789abcdef: 1 } },
      { execution_context: { caller: "x", extra: "tok_live_0123456789abcdef" } },
      { receiver: { label: "tok_live_0123456789abcdef" } },
      { source: "tok_live_0123456789abcdef" },
    ];
    for (const overrides of places) {
      const result = await prepare(input(overrides), ctx({ taint }));
      expect(failureCode(result)).toBe("INPUT_INVALID");
      expect(JSON.stringify(result)).not.toContain("tok_live_0123456789abcdef");
    }
    // Without delivered credentials the same shapes are admitted.
    expect((await prepare(input({ payload: { note: "Bearer abc" } }))).status).toBe("success");
  });

  it("accepts a public HTTPS receiver and keeps its metadata", async () => {
    const out = await data(
      input({ receiver: { url: "https://hooks.example.com/x", team: "ops" } }),
    );
    expect(out.receiver).toEqual({ url: "https://hooks.example.com/x", team: "ops" });
  });
});
