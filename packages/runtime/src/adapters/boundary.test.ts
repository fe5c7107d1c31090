/**
 * Static boundary tests. The runtime has one module that imports
 * child-process APIs (the process supervisor); everything that starts a process goes through
 * it, from an explicit list of callers, and the adapter subsystem's only caller is its launch
 * module. No provider SDK is imported anywhere, and the fake-local adapter's whole payload
 * uses no network module and reads no home directory.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { scanAdapterSource } from "../testing/adapter-conformance.js";
import { REPO_ROOT } from "../testing/cli.js";
import { loadAdapter } from "./trust.js";
import { adapterWorkspace } from "./test-support.js";

const SRC = join(REPO_ROOT, "packages", "runtime", "src");

/** Every TypeScript/JavaScript source file under `dir`, relative to `base`, with its text. */
function sources(dir: string, base = dir, withTests = false): Array<[string, string]> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry): Array<[string, string]> => {
    const abs = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === "node_modules" ? [] : sources(abs, base, withTests);
    if (!/\.(ts|tsx|mjs|cjs|js)$/.test(entry.name)) return [];
    if (!withTests && /\.test\.tsx?$/.test(entry.name)) return [];
    return [[relative(base, abs).split(sep).join("/"), readFileSync(abs, "utf8")]];
  });
}

/** Static, dynamic and CommonJS imports of `module` (with or without `node:`). */
function importsModule(text: string, module: string): boolean {
  const name = `(?:node:)?${module.replace(/[/.]/g, "\\$&")}`;
  return new RegExp(
    `(?:\\bfrom\\s*|\\brequire\\(\\s*|\\bimport\\(\\s*|\\bimport\\s+)["']${name}["']`,
  ).test(text);
}

/** Files importing the process supervisor (any relative path ending in process/supervise). */
function importsSupervisor(text: string): boolean {
  return /["'](?:\.\.?\/)+(?:[\w-]+\/)*process\/supervise(?:\.js)?["']/.test(text);
}

/** Runtime code: tests, generated validators and test kits excluded. */
const runtime = sources(SRC).filter(
  ([file]) =>
    !file.startsWith("generated/") &&
    !file.startsWith("testing/") &&
    !file.endsWith("/test-support.ts") &&
    !file.includes("/test-support/"),
);

describe("I.53 one module imports child-process APIs; adapters start processes only through launch.ts", () => {
  it("the detector sees every import form (so the checks below can fail)", () => {
    for (const text of [
      'import { spawn } from "node:child_process";',
      "import * as cp from 'child_process';",
      'const cp = require("child_process");',
      'const cp = await import("node:child_process");',
      'import "child_process";',
    ])
      expect(importsModule(text, "child_process")).toBe(true);
    expect(importsModule('import x from "./child_process_notes.js";', "child_process")).toBe(false);
    expect(importsSupervisor('import { superviseProcess } from "../process/supervise.js";')).toBe(
      true,
    );
  });

  it("only process/supervise.ts imports child_process (or worker spawning APIs) in the runtime", () => {
    expect(runtime.length).toBeGreaterThan(100);
    const offenders = runtime
      .filter(([, text]) => importsModule(text, "child_process") || importsModule(text, "cluster"))
      .map(([file]) => file);
    expect(offenders).toEqual(["process/supervise.ts"]);
  });

  it("the supervisor's callers are an explicit list; the adapter subsystem's only one is its launch module", () => {
    const callers = runtime.filter(([, text]) => importsSupervisor(text)).map(([file]) => file);
    expect(callers.sort()).toEqual([
      "adapters/launch.ts",
      "runners/cli-tool.ts",
      "runners/javascript.ts",
      "tools/cli/capture-help.ts",
      "tools/command/command-execute.ts",
      "tools/git/run-git.ts",
      "tools/receipt/external-receipt.ts",
    ]);
    // Within the adapter subsystem (adapters/ and the run steps that drive it).
    const subsystem = runtime.filter(
      ([file]) => file.startsWith("adapters/") || /^run\/adapter-[\w-]+\.ts$/.test(file),
    );
    expect(subsystem.length).toBeGreaterThan(10);
    expect(subsystem.filter(([, text]) => importsSupervisor(text)).map(([f]) => f)).toEqual([
      "adapters/launch.ts",
    ]);
    // And the launch itself is called from the dispatch attempt alone.
    expect(
      runtime
        .filter(([, text]) => /\blaunchAdapterProcess\(/.test(text))
        .map(([f]) => f)
        .sort(),
    ).toEqual(["adapters/dispatch.ts", "adapters/launch.ts"]);
  });
});

/** Provider SDK packages: an adapter wraps a runtime's CLI, never a model provider's SDK. */
const PROVIDER_SDKS = [
  "openai",
  "@openai/*",
  "@anthropic-ai/*",
  "@google/generative-ai",
  "@google/genai",
  "@google-cloud/vertexai",
  "@aws-sdk/client-bedrock*",
  "@azure/openai",
  "cohere-ai",
  "@mistralai/*",
  "groq-sdk",
  "ai",
  "@ai-sdk/*",
  "langchain",
  "@langchain/*",
  "llamaindex",
  "ollama",
  "replicate",
  "together-ai",
  "@huggingface/inference",
];

function isProviderSdk(specifier: string): boolean {
  return PROVIDER_SDKS.some((pattern) =>
    pattern.endsWith("*")
      ? specifier.startsWith(pattern.slice(0, -1))
      : specifier === pattern || specifier.startsWith(`${pattern}/`),
  );
}

function specifiers(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(
    /(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*|\bimport\s+)["']([^"']+)["']/g,
  ))
    out.push(m[1] ?? "");
  return out;
}

describe("I.54 no provider SDK anywhere in the runtime", () => {
  it("the detector knows the SDKs", () => {
    for (const s of ["openai", "openai/resources", "@anthropic-ai/sdk", "@ai-sdk/openai", "ai"])
      expect(isProviderSdk(s)).toBe(true);
    for (const s of ["ajv", "yaml", "aiohttp-free", "@modelcontextprotocol/sdk"])
      expect(isProviderSdk(s)).toBe(false);
  });

  it("no source file (tests included) imports one, and no package manifest depends on one", () => {
    const offenders = sources(SRC, SRC, true).flatMap(([file, text]) =>
      specifiers(text)
        .filter(isProviderSdk)
        .map((s) => `${file}: ${s}`),
    );
    expect(offenders).toEqual([]);
    for (const manifest of [
      "package.json",
      "packages/runtime/package.json",
      "apps/api/package.json",
    ]) {
      const pkg = JSON.parse(readFileSync(join(REPO_ROOT, manifest), "utf8")) as Record<
        string,
        Record<string, string> | undefined
      >;
      const deps = Object.keys({
        ...pkg.dependencies,
        ...pkg.devDependencies,
        ...pkg.optionalDependencies,
      });
      expect(deps.filter(isProviderSdk), manifest).toEqual([]);
    }
  });
});

describe("I.55 the fake-local adapter uses no network and reads no home directory", () => {
  it("the scanner flags each forbidden use (so the check below can fail)", () => {
    const samples: Array<[string, string]> = [
      ['import http from "node:http";', "a network module"],
      ['const net = require("net");', "a network module"],
      ['await import("undici");', "a network module"],
      ["await fetch(url);", "fetch"],
      ["new WebSocket(url);", "a socket API"],
      ['import { homedir } from "node:os";', "the os module (home directory)"],
      ["const h = process.env.HOME;", "a home-directory lookup"],
      ['readFileSync("~/.netrc")', "a home-directory lookup"],
      ['args.push("--dangerously-bypass-approvals-and-sandbox")', "a sandbox bypass flag"],
    ];
    for (const [text, what] of samples)
      expect(scanAdapterSource("x.mjs", text)).toContain(`x.mjs uses ${what}`);
    expect(scanAdapterSource("x.mjs", 'import { join } from "node:path";')).toEqual([]);
  });

  it("its definition and every file of its payload closure scan clean", () => {
    const root = adapterWorkspace();
    try {
      const loaded = loadAdapter(root, "fake-local");
      expect(loaded.payloadFiles).toEqual([
        "adapters/fake-local/evidence.mjs",
        "adapters/fake-local/fake-local.mjs",
      ]);
      const problems = [loaded.file, ...loaded.payloadFiles].flatMap((file) =>
        scanAdapterSource(file, readFileSync(join(root, file), "utf8")),
      );
      expect(problems).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
