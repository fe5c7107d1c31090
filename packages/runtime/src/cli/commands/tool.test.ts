import { describe, expect, it } from "vitest";
import type { CliEnv } from "../env.js";
import type { CommandContext } from "../context.js";
import { run } from "./tool.js";

function context(json: boolean): { ctx: CommandContext; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const env: CliEnv = {
    workspaceRoot: "/nonexistent-workspace",
    runxHome: "/nonexistent-home",
    receiptDir: undefined,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    color: false,
    processEnv: {},
  };
  const ctx: CommandContext = {
    env,
    signal: new AbortController().signal,
    json,
    stdin: process.stdin,
    out: (text) => out.push(text),
    err: (text) => err.push(text),
  };
  return { ctx, out, err };
}

describe("runx tool", () => {
  it("lists the native tools as one JSON document", async () => {
    const { ctx, out } = context(true);
    expect(await run(["list", "--json"], ctx)).toBe(0);
    expect(out).toHaveLength(1);
    const doc = JSON.parse(out[0] ?? "") as { status: string; tools: Array<{ name: string }> };
    expect(doc.status).toBe("success");
    expect(doc.tools.map((t) => t.name)).toContain("fs.read");
  });

  it("lists the native tools as text", async () => {
    const { ctx, out } = context(false);
    expect(await run(["list"], ctx)).toBe(0);
    expect(out.join("")).toMatch(/^fs\.write\s+mutate\s+fs\.write$/m);
  });

  it("inspects one tool with its schemas as JSON", async () => {
    const { ctx, out } = context(true);
    expect(await run(["inspect", "artifact.read", "--json"], ctx)).toBe(0);
    const doc = JSON.parse(out[0] ?? "") as { tool: Record<string, unknown> };
    expect(doc.tool).toMatchObject({
      name: "artifact.read",
      scopes: ["fs.read"],
      mutating: false,
      execution_source_type: "native",
      reference_path: "native:artifact.read",
    });
    expect(doc.tool.input_schema).toHaveProperty("properties.artifact_ref");
  });

  it("inspects one tool as text with its fields and defaults", async () => {
    const { ctx, out } = context(false);
    expect(await run(["inspect", "fs.read"], ctx)).toBe(0);
    const text = out.join("");
    expect(text).toContain("scopes: fs.read");
    expect(text).toMatch(/max_bytes\s+integer \(default 1048576\)/);
    expect(text).toMatch(/path\s+string \(required\)/);
  });

  it("fails an unknown tool with exit 1 and the TOOL_NOT_FOUND reason", async () => {
    const { ctx, out } = context(true);
    expect(await run(["inspect", "fs.nope", "--json"], ctx)).toBe(1);
    expect(JSON.parse(out[0] ?? "")).toMatchObject({
      status: "failure",
      error: { reason: "TOOL_NOT_FOUND" },
    });
  });

  it("treats a missing or unknown action as a usage error", async () => {
    for (const tokens of [[], ["search"], ["inspect"], ["list", "extra"]]) {
      const { ctx } = context(false);
      expect(await run(tokens, ctx)).toBe(64);
    }
  });
});
