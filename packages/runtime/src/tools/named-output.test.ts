import { describe, expect, it } from "vitest";
import { runtimeToolCatalog } from "../run/tools.js";
import { namedOutputSchema, withNamedOutput } from "./packet.js";
import { makeToolContext } from "../testing/tool-context.js";
import type { NativeTool, ToolResult } from "./types.js";

/** Every native tool's named (or wrapped) output and the packet it carries. */
const NAMED_OUTPUTS: Record<string, [string, string]> = {
  "fs.read": ["file_read", "runx.fs.file_read.v1"],
  "fs.read_bundle": ["file_read_bundle", "runx.fs.file_read_bundle.v1"],
  "fs.write": ["file_write", "runx.fs.file_write.v1"],
  "fs.apply_bundle": ["file_bundle_apply", "runx.fs.apply_bundle.v1"],
  "command.execute": ["command_execution", "runx.command.execution.v1"],
  "http.read": ["http_execution", "runx.http.execution.v1"],
  "http.query": ["http_execution", "runx.http.execution.v1"],
  "http.execute": ["http_execution", "runx.http.execution.v1"],
  "web.fetch": ["fetch_result", "runx.fetch.v1"],
  "artifact.admit": ["local_artifact", "runx.local_artifact.v1"],
  "artifact.read": ["artifact_page", "runx.local_artifact.page.v1"],
  "provider.read": ["provider_operation", "runx.provider.operation.v1"],
  "provider.mutate": ["provider_operation", "runx.provider.operation.v1"],
  "command.plan": ["command_plan", "runx.command.plan.v1"],
  "cli.capture_help": ["cli_help", "runx.cli.help.v1"],
  "git.current_branch": ["git_branch", "runx.git.branch.v1"],
  "git.status": ["git_status", "runx.git.status.v1"],
  "git.diff_name_only": ["git_diff", "runx.git.diff.v1"],
  "git.blob_digest": ["git_blob_digest", "runx.git.blob_digest.v1"],
  "sandbox.plan": ["hardening_profile", "runx.hardening.v1"],
};

describe("named tool outputs", () => {
  const catalog = runtimeToolCatalog();

  it.each(Object.entries(NAMED_OUTPUTS))(
    "%s declares its output as one packet envelope",
    (name, [output, packet]) => {
      const schema = catalog.inspect(name).output_schema;
      expect(schema.required).toEqual([output]);
      const properties = schema.properties as Record<string, Record<string, unknown>>;
      const envelope = properties[output] as {
        required: string[];
        description: string;
        properties: Record<string, unknown>;
      };
      expect(envelope.required).toEqual(["data"]);
      expect(Object.keys(envelope.properties)).toEqual(["data"]);
      expect(envelope.description).toBe(`${packet} packet`);
      expect(envelope.properties.data).toMatchObject({ type: "object" });
    },
  );

  it("wraps only success: failures, declines and approval requests pass unchanged", async () => {
    const results: ToolResult[] = [
      { status: "success", output: { ok: true }, summary: "done" },
      { status: "failure", code: "X", summary: "no", output: { code: "X" } },
      { status: "declined", summary: "no" },
    ];
    let next = 0;
    const inner: NativeTool = {
      name: "t.x",
      description: "",
      mutating: false,
      scopes: [],
      inputSchema: {},
      outputSchema: { $id: "urn:x", title: "x", type: "object", properties: { ok: {} } },
      validateInput: () => ({ ok: true }),
      execute: () => Promise.resolve(results[next++] as ToolResult),
    };
    const tool = withNamedOutput(inner, { name: "x_result", packet: "runx.x.v1" });
    const ctx = makeToolContext();
    expect(await tool.execute({}, ctx)).toEqual({
      status: "success",
      output: { x_result: { data: { ok: true } } },
      summary: "done",
    });
    expect(await tool.execute({}, ctx)).toBe(results[1]);
    expect(await tool.execute({}, ctx)).toBe(results[2]);
    expect(tool.outputSchema.$id).toBe("urn:x");
    expect(
      namedOutputSchema({ name: "x_result", packet: "runx.x.v1" }, inner.outputSchema),
    ).toMatchObject({
      required: ["x_result"],
      properties: { x_result: { properties: { data: { type: "object" } } } },
    });
  });
});
