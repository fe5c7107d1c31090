import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliEnv } from "../env.js";
import type { CommandContext } from "../context.js";
import { run } from "./tool.js";

function context(
  json: boolean,
  overrides: Partial<CliEnv> = {},
): { ctx: CommandContext; out: string[]; err: string[] } {
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
    workspace: { env: {}, fromDotenv: new Set() },
    ...overrides,
  };
  const ctx: CommandContext = {
    env,
    signal: new AbortController().signal,
    json,
    stdin: process.stdin,
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    status: () => undefined,
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

describe("runx tool search, inspect and build", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "runx-tool-cli-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function write(rel: string, document: unknown): void {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), JSON.stringify(document));
  }

  it("offers the fixture MCP catalog only when RUNX_ENABLE_FIXTURE_TOOL_CATALOG=1", async () => {
    const off = context(true);
    expect(await run(["search", "echo", "--source", "fixture-mcp", "--json"], off.ctx)).toBe(64);
    const on = context(true, { processEnv: { RUNX_ENABLE_FIXTURE_TOOL_CATALOG: "1" } });
    expect(await run(["search", "echo", "--source", "fixture-mcp", "--json"], on.ctx)).toBe(0);
    const doc = JSON.parse(on.out[0] ?? "") as { source: string; results: Array<{ name: string }> };
    expect(doc.source).toBe("fixture-mcp");
    expect(doc.results.map((r) => r.name)).toEqual(["fixture.echo"]);
  });

  it("inspects a local tool found under RUNX_TOOL_ROOTS", async () => {
    write("roots/demo/echo/manifest.json", {
      schema: "runx.tool.manifest.v1",
      name: "demo.echo",
      source: { type: "cli-tool", command: "node", args: ["./run.mjs"] },
    });
    const { ctx, out } = context(true, {
      workspaceRoot: root,
      processEnv: { RUNX_TOOL_ROOTS: join(root, "roots") },
    });
    expect(await run(["inspect", "demo.echo", "--json"], ctx)).toBe(0);
    expect(JSON.parse(out[0] ?? "")).toMatchObject({
      status: "success",
      tool: { name: "demo.echo", provenance: { origin: "local" } },
    });
  });

  it("builds a workspace tool read-only and exits 1 with the field named when it is invalid", async () => {
    write("tools/demo/echo/manifest.json", {
      schema: "runx.tool.manifest.v1",
      name: "demo.echo",
      source: { type: "cli-tool", args: ["./run.mjs"] },
    });
    const { ctx, out } = context(true, { workspaceRoot: root });
    expect(await run(["build", "tools/demo/echo", "--json"], ctx)).toBe(1);
    expect(JSON.parse(out[0] ?? "")).toEqual({
      schema: "runx.tool.build.v1",
      status: "failure",
      built: [],
      errors: ["tools/demo/echo: source.command is required."],
    });
    const text = context(false, { workspaceRoot: root });
    expect(await run(["build", "--all"], text.ctx)).toBe(1);
    expect(text.out.join("")).toContain("source.command is required.");
  });

  it("treats build without a target, or with both a target and --all, as a usage error", async () => {
    for (const tokens of [["build"], ["build", "tools/x/y", "--all"], ["list", "--all"]]) {
      expect(await run(tokens, context(false, { workspaceRoot: root }).ctx)).toBe(64);
    }
  });
});
