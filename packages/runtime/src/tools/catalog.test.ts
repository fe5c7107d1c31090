import { describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import { builtinTools, createToolCatalog } from "./catalog.js";

describe("the native tool catalog", () => {
  const catalog = createToolCatalog(builtinTools());

  it("lists the built-in tools by name with their scopes and effect", () => {
    expect(catalog.list().map((t) => t.name)).toEqual([
      "artifact.admit",
      "artifact.read",
      "cli.capture_help",
      "command.execute",
      "command.plan",
      "control.capture_harness_context",
      "control.prepare_handoff",
      "data.append_event",
      "data.compare",
      "data.digest",
      "data.list_stream_heads",
      "data.read_events",
      "data.read_projection",
      "evidence.index_sources",
      "evidence.verify_artifact",
      "external_receipt.verify",
      "fs.apply_bundle",
      "fs.read",
      "fs.read_bundle",
      "fs.write",
      "git.blob_digest",
      "git.current_branch",
      "git.diff_name_only",
      "git.status",
      "payment.charge_challenge",
      "payment.charge_plan",
      "payment.charge_price",
      "payment.charge_verification_request",
      "payment.invoice_plan",
      "payment.quote",
      "payment.refund_admit",
      "payment.refund_plan",
      "payment.reserve",
      "payment.x402_challenge",
      "payment.x402_pay",
      "payment.x402_quote",
      "payment.x402_reserve",
      "policy.lint",
      "receipt.attest",
      "receipt.prove",
      "receipt.query",
      "receipt.verify",
      "runx.skill.apply",
      "runx.skill.bind",
      "runx.skill.inspect",
      "runx.skill.plan",
      "runx.skill.validate",
      "sandbox.plan",
    ]);
    expect(catalog.list().find((t) => t.name === "fs.write")).toEqual({
      name: "fs.write",
      description: expect.any(String) as string,
      mutating: true,
      scopes: ["fs.write"],
    });
  });

  it("inspects a tool's input and output contracts", () => {
    const inspected = catalog.inspect("command.execute");
    expect(inspected).toMatchObject({
      name: "command.execute",
      mutating: true,
      scopes: ["process.exec"],
    });
    expect(inspected.input_schema.$id).toBe(
      "https://runx.dev/schemas/tools/command-execute.input.schema.json",
    );
    expect(inspected.output_schema.$id).toBe(
      "https://runx.dev/schemas/tools/command-execute.output.schema.json",
    );
    expect(catalog.get("command.execute")?.name).toBe("command.execute");
    expect(catalog.get("nope")).toBeUndefined();
  });

  it("refuses an unknown tool with TOOL_NOT_FOUND", () => {
    let error: unknown;
    try {
      catalog.inspect("fs.delete");
    } catch (e) {
      error = e;
    }
    expect(isRuntimeError(error) && error.code).toBe("TOOL_NOT_FOUND");
  });

  it("refuses two tools with one name", () => {
    const [first] = builtinTools();
    expect(() => createToolCatalog([first!, first!])).toThrow(/registered twice/);
  });

  it.each(builtinTools().map((t) => [t.name, t] as const))(
    "gives %s a closed input schema that rejects unknown fields",
    (_name, tool) => {
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(tool.outputSchema.additionalProperties).toBe(false);
      expect(tool.validateInput({ surprise: true })).toMatchObject({ ok: false });
    },
  );
});
