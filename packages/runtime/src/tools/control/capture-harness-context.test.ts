import { describe, expect, it } from "vitest";
import { validateToolsControlCaptureHarnessContextOutput } from "../../generated/validate-tools-control-capture-harness-context.output.js";
import { failureCode, makeToolContext, successOutput } from "../../testing/tool-context.js";
import { controlCaptureHarnessContextTool } from "./capture-harness-context.js";

const ctx = makeToolContext({ scopes: ["runx:control:read"] });

describe("control.capture_harness_context", () => {
  it("captures the supplied packets at the top level and in the harness_context envelope", async () => {
    const signal = { schema: "runx.signal.v1", kind: "alert" };
    const decision = { schema: "runx.decision.v1", action: "triage" };
    const output = successOutput(
      await controlCaptureHarnessContextTool.execute({ signal, decision }, ctx),
    );
    expect(validateToolsControlCaptureHarnessContextOutput(output)).toBe(true);
    expect(output).toEqual({
      present: true,
      signal,
      decision,
      harness_context: { data: { captured: true, signal, decision } },
    });
  });

  it("reports nothing captured when no packet is supplied", async () => {
    const output = successOutput(await controlCaptureHarnessContextTool.execute({}, ctx));
    expect(output).toEqual({ present: false, harness_context: { data: { captured: false } } });
  });

  it("refuses a packet that is not an object and unknown fields", async () => {
    expect(failureCode(await controlCaptureHarnessContextTool.execute({ harness: "h" }, ctx))).toBe(
      "INPUT_INVALID",
    );
    expect(failureCode(await controlCaptureHarnessContextTool.execute({ extra: {} }, ctx))).toBe(
      "INPUT_INVALID",
    );
    expect(controlCaptureHarnessContextTool.scopes).toEqual(["runx:control:read"]);
  });
});
