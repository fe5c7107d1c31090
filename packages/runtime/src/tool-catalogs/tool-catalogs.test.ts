import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UPSTREAM } from "../conformance/corpus.test-kit.js";
import { isRuntimeError } from "../errors.js";
import { runtimeToolCatalog } from "../run/tools.js";
import { buildTools } from "./build.js";
import { fixtureMcpCatalog } from "./fixture-mcp-catalog.js";
import { relativeImports, schemaHash, sourceHash, ToolSourceError } from "./hashes.js";
import { inspectTool } from "./inspect.js";
import { loadLocalTool, localCatalogSource } from "./local-tools.js";
import { validateManifest, type ToolManifest } from "./manifest.js";
import { searchTools } from "./search.js";
import { nativeCatalogSource } from "./sources.js";

const sha = (data: string | Buffer) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

function manifestFor(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema: "runx.tool.manifest.v1",
    name,
    description: "Demo tool.",
    source: { type: "cli-tool", command: "node", args: ["./run.mjs"] },
    inputs: { message: { type: "string", required: true, description: "Message." } },
    scopes: [name],
    ...extra,
  };
}

function valid(document: Record<string, unknown>): ToolManifest {
  const result = validateManifest(document);
  if (!result.ok) throw new Error(result.problem);
  return result.manifest;
}

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "runx-tool-catalogs-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(rel: string, contents: string): string {
  const path = join(root, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, contents);
  return path;
}

describe("tool manifests", () => {
  it("names the missing field of a cli-tool source without a command", () => {
    const doc = manifestFor("demo.echo", { source: { type: "cli-tool", args: ["./run.mjs"] } });
    expect(validateManifest(doc)).toEqual({ ok: false, problem: "source.command is required." });
  });

  it("rejects unknown fields, undotted names and unknown source types by field", () => {
    expect(validateManifest(manifestFor("demo.echo", { colour: "red" }))).toEqual({
      ok: false,
      problem: "colour is not a field of runx.tool.manifest.v1.",
    });
    expect(validateManifest(manifestFor("echo"))).toMatchObject({ ok: false, problem: /^name / });
    const other = manifestFor("demo.echo", { source: { type: "shell", command: "sh" } });
    expect(validateManifest(other)).toMatchObject({ ok: false, problem: /^source\.type must/ });
  });

  it("treats an input without `required` as optional", () => {
    const doc = manifestFor("demo.echo", { inputs: { note: { type: "string" } } });
    expect(valid(doc).inputs.note).toEqual({ type: "string", required: false });
  });
});

describe("tool digests", () => {
  it("reproduces upstream's schema_hash for the corpus build manifests", () => {
    for (const [fixture, tool] of [
      ["minimal", "minimal"],
      ["metadata-heavy", "metadata_heavy"],
    ] as const) {
      const base = join(UPSTREAM, "fixtures/tool-catalogs");
      const manifest = valid(
        JSON.parse(
          readFileSync(
            join(base, `build/${fixture}/workspace/tools/fixture/${tool}/manifest.json`),
            "utf8",
          ),
        ) as Record<string, unknown>,
      );
      const oracle = JSON.parse(
        readFileSync(join(base, `oracles/build-${fixture}.json`), "utf8"),
      ) as { built: Array<{ schema_hash: string }> };
      expect(schemaHash(manifest)).toBe(oracle.built[0]?.schema_hash);
    }
  });

  it("hashes each source file as path NUL bytes NUL, following relative imports", () => {
    const dir = join(root, "tools/demo/echo");
    write("tools/demo/echo/run.mjs", 'import { hi } from "./lib/hi.js";\nhi();\n');
    write("tools/demo/echo/lib/hi.js", "export const hi = () => 1;\n");
    const manifest = valid(manifestFor("demo.echo"));
    const expected = sha(
      Buffer.concat([
        Buffer.from("lib/hi.js\0export const hi = () => 1;\n\0"),
        Buffer.from('run.mjs\0import { hi } from "./lib/hi.js";\nhi();\n\0'),
      ]),
    );
    expect(sourceHash(dir, manifest)).toBe(expected);
    write("tools/demo/echo/lib/hi.js", "export const hi = () => 2;\n");
    expect(sourceHash(dir, manifest)).not.toBe(expected);
  });

  it("hashes `no-source` when the manifest names no local file", () => {
    const manifest = valid(
      manifestFor("demo.echo", { source: { type: "cli-tool", command: "echo" } }),
    );
    expect(sourceHash(join(root, "tools/demo/echo"), manifest)).toBe(sha("no-source"));
  });

  it("refuses an import that resolves to no file and uncompiled TypeScript under node", () => {
    write("tools/demo/echo/run.mjs", 'import "./missing.js";\n');
    const manifest = valid(manifestFor("demo.echo"));
    expect(() => sourceHash(join(root, "tools/demo/echo"), manifest)).toThrow(ToolSourceError);
    write("tools/demo/echo/run.mjs", 'import "./impl";\n');
    write("tools/demo/echo/impl.ts", "export {};\n");
    expect(() => sourceHash(join(root, "tools/demo/echo"), manifest)).toThrow(/TypeScript/);
  });

  it("finds static, re-exported, dynamic and required relative imports, not packages", () => {
    const source = [
      'import a from "./a.js";',
      'export * from "../b.mjs";',
      'const c = await import("./c.js");',
      'const d = require("./d.cjs");',
      'import fs from "node:fs";',
      '// import "./commented.js";',
    ].join("\n");
    expect(relativeImports(source).sort()).toEqual(["../b.mjs", "./a.js", "./c.js", "./d.cjs"]);
  });
});

describe("runx tool build (runtime)", () => {
  it("reports every valid tool with its digests and writes nothing", () => {
    const manifestText = JSON.stringify(manifestFor("demo.echo"), null, 2);
    write("tools/demo/echo/manifest.json", manifestText);
    write("tools/demo/echo/run.mjs", "console.log(1);\n");
    write("tools/demo/other/manifest.json", JSON.stringify(manifestFor("demo.other")));
    const report = buildTools(root, { all: true });
    expect(report).toMatchObject({ schema: "runx.tool.build.v1", status: "success", errors: [] });
    expect(report.built.map((b) => [b.path, b.manifest])).toEqual([
      ["tools/demo/echo", "tools/demo/echo/manifest.json"],
      ["tools/demo/other", "tools/demo/other/manifest.json"],
    ]);
    expect(readFileSync(join(root, "tools/demo/echo/manifest.json"), "utf8")).toBe(manifestText);
  });

  it("fails a tool whose name does not match its directory or whose manifest is missing", () => {
    write("tools/demo/echo/manifest.json", JSON.stringify(manifestFor("demo.other")));
    expect(buildTools(root, { toolPath: "tools/demo/echo" })).toEqual({
      schema: "runx.tool.build.v1",
      status: "failure",
      built: [],
      errors: ['tools/demo/echo: name must be "demo.echo" to match the tool directory.'],
    });
    expect(buildTools(root, { toolPath: "tools/demo/none" }).errors).toEqual([
      "tools/demo/none: manifest.json is missing.",
    ]);
  });
});

describe("tool search and inspect (runtime)", () => {
  const native = runtimeToolCatalog();
  const sources = [nativeCatalogSource(native), fixtureMcpCatalog];

  it("matches name and summary case-insensitively in the sources asked for", () => {
    const report = searchTools(sources, "ECHO", "fixture-mcp");
    expect(report.results.map((r) => r.tool_id)).toEqual(["fixture-mcp/fixture.echo"]);
    expect(searchTools(sources, "mcp server", "fixture-mcp").results).toHaveLength(1);
    expect(searchTools(sources, "not-a-fixture-tool", "fixture-mcp").results).toEqual([]);
    const nativeHit = searchTools([nativeCatalogSource(native)], "fs.read").results[0];
    expect(nativeHit).toMatchObject({ tool_id: "native/fs.read", catalog_ref: "native:fs.read" });
  });

  it("refuses an unknown source as a usage error", () => {
    const fail = () => searchTools([nativeCatalogSource(native)], "echo", "fixture-mcp");
    expect(fail).toThrow(expect.objectContaining({ code: "USAGE" }) as Error);
  });

  it("inspects a local tool from a tool root, then the workspace tools/, then native", () => {
    write("roots/a/demo/echo/manifest.json", JSON.stringify(manifestFor("demo.echo")));
    write("tools/demo/local/manifest.json", JSON.stringify(manifestFor("demo.local")));
    const options = { workspaceRoot: root, toolRoots: ["roots/a"], native, sources };
    const fromRoot = inspectTool({ ...options, ref: "demo.echo" }).tool;
    expect(fromRoot).toMatchObject({
      ref: "demo.echo",
      execution_source_type: "cli-tool",
      runtime: { command: "node", args: ["./run.mjs"] },
      reference_path: join(root, "roots/a/demo/echo/manifest.json"),
      skill_directory: join(root, "roots/a/demo/echo"),
      provenance: { origin: "local" },
    });
    expect(inspectTool({ ...options, ref: "demo.local" }).tool).toMatchObject({
      reference_path: join(root, "tools/demo/local/manifest.json"),
    });
    expect(inspectTool({ ...options, ref: "fs.read" }).tool).toMatchObject({
      execution_source_type: "native",
      provenance: { origin: "native", tool_id: "native/fs.read" },
    });
  });

  it("inspects an imported catalog entry and fails unknown refs and bad manifests by code", () => {
    const options = { workspaceRoot: root, toolRoots: [], native, sources };
    expect(
      inspectTool({ ...options, ref: "fixture.echo", source: "fixture-mcp" }).tool,
    ).toMatchObject({
      execution_source_type: "catalog",
      reference_path: "catalog:fixture-mcp:fixture.echo",
      provenance: { origin: "imported", catalog_ref: "fixture-mcp:fixture.echo" },
    });
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return isRuntimeError(error) ? error.code : "not a RuntimeError";
      }
      return "no error";
    };
    expect(
      code(() => inspectTool({ ...options, ref: "fixture.missing", source: "fixture-mcp" })),
    ).toBe("TOOL_NOT_FOUND");
    write("tools/demo/bad/manifest.json", JSON.stringify({ schema: "runx.tool.manifest.v1" }));
    expect(code(() => inspectTool({ ...options, ref: "demo.bad" }))).toBe("TOOL_MANIFEST_INVALID");
  });
});

describe("local tools as catalog tools (runtime)", () => {
  const roots = () => ({ workspaceRoot: root, toolRoots: [] as string[] });

  it("projects a manifest's inputs, scopes and wrap_as onto the tool contract", () => {
    write(
      "tools/demo/echo/manifest.json",
      JSON.stringify(
        manifestFor("demo.echo", { mutating: true, artifacts: { wrap_as: "echoed" } }),
      ),
    );
    const tool = loadLocalTool("demo.echo", roots());
    expect(tool).toMatchObject({ name: "demo.echo", mutating: true, scopes: ["demo.echo"] });
    expect(tool?.outputSchema).toEqual({
      type: "object",
      properties: { echoed: { type: "object" } },
    });
    expect(tool?.validateInput({ message: "hi" })).toEqual({ ok: true });
    expect(tool?.validateInput({ message: 3 })).toMatchObject({ ok: false, path: "message" });
    expect(tool?.validateInput({ message: "hi", extra: 1 })).toMatchObject({ ok: false });
    expect(loadLocalTool("demo.absent", roots())).toBeUndefined();
  });

  it("refuses a bad manifest naming the file and field, and a symlinked tool directory out", () => {
    write(
      "tools/demo/bad/manifest.json",
      JSON.stringify(manifestFor("demo.bad", { inputs: { n: { type: "path" } } })),
    );
    try {
      loadLocalTool("demo.bad", roots());
      expect.unreachable("an unknown input type must be refused");
    } catch (error) {
      expect(isRuntimeError(error) && error.code).toBe("TOOL_MANIFEST_INVALID");
      expect((error as Error).message).toContain("tools/demo/bad/manifest.json: inputs.n.type");
    }
    const outside = mkdtempSync(join(tmpdir(), "runx-tool-outside-"));
    try {
      writeFileSync(join(outside, "manifest.json"), JSON.stringify(manifestFor("demo.out")));
      symlinkSync(outside, join(root, "tools", "demo", "out"));
      expect(() => loadLocalTool("demo.out", roots())).toThrow(/PATH_ESCAPE|tool root/);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("searches local tools by description and tag next to the native ones", () => {
    write("tools/demo/echo/manifest.json", JSON.stringify(manifestFor("demo.echo")));
    write("tools/demo/broken/manifest.json", "{");
    const sources = [nativeCatalogSource(runtimeToolCatalog()), localCatalogSource(roots())];
    expect(searchTools(sources, "demo tool").results.map((r) => r.tool_id)).toEqual([
      "local/demo.echo",
    ]);
    expect(searchTools(sources, "cli-tool").results.map((r) => r.name)).toEqual(["demo.echo"]);
    expect(searchTools([fixtureMcpCatalog], "mcp").results.map((r) => r.name)).toEqual([
      "fixture.echo",
    ]);
    const inspected = inspectTool({
      ref: "demo.echo",
      source: "local",
      workspaceRoot: root,
      toolRoots: [],
      native: runtimeToolCatalog(),
      sources,
    });
    expect(inspected.tool).toMatchObject({
      name: "demo.echo",
      execution_source_type: "cli-tool",
      provenance: { origin: "local" },
    });
  });
});
