import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import { createRuntime } from "../create-runtime.js";
import type { Runtime } from "../create-runtime.js";

let base: string;
let runtime: Runtime;

function writePackage(dir: string, name: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: ${name}\n---\n`);
  writeFileSync(
    join(dir, "X.yaml"),
    `skill: ${name}\nrunners:\n  default:\n    default: true\n    type: cli-tool\n    command: "true"\n`,
  );
}

async function refusal(ref: string): Promise<string> {
  const error = await runtime.catalog.startRef(ref).catch((e: unknown) => e);
  if (!isRuntimeError(error)) throw new Error(`expected a refusal for ${ref}`);
  return `${error.code}: ${error.message}`;
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "runx-catalog-")));
  const ws = join(base, "ws");
  writePackage(join(ws, "skills", "echo"), "echo");
  writePackage(join(base, "outside", "evil"), "evil");
  writeFileSync(
    join(base, "outside", "graph.yaml"),
    "name: g\nsteps:\n  - id: a\n    tool: fs.read\n",
  );
  writeFileSync(join(ws, "graph.yaml"), "name: g\nsteps:\n  - id: a\n    tool: fs.read\n");
  symlinkSync(join(base, "outside", "evil"), join(ws, "skills", "linked"));
  runtime = createRuntime({ workspaceRoot: ws, runxHome: join(base, "home"), env: {} });
});

afterEach(() => {
  runtime.close();
  rmSync(base, { recursive: true, force: true });
});

describe("catalog.startRef", () => {
  it("gives the catalog ref of a workspace skill named by ref or name", async () => {
    expect(await runtime.catalog.startRef("skills/echo")).toBe("skills/echo");
    expect(await runtime.catalog.startRef("echo")).toBe("skills/echo");
  });

  it("refuses everything else with one answer, whether or not the path exists", async () => {
    const answers = new Set<string>();
    for (const ref of [
      join(base, "outside", "evil"),
      join(base, "outside", "missing"),
      "../outside/evil",
      "../outside/missing",
      "skills/../../outside/evil",
      "skills/linked",
      "graph.yaml",
      join(base, "outside", "graph.yaml"),
      "./skills/echo",
      "skills/echo/SKILL.md",
    ]) {
      answers.add(await refusal(ref));
    }
    expect([...answers]).toEqual([
      "PACKAGE_NOT_FOUND: skill is not in the catalog (a workspace skill under skills/ or a registry record owner/name@version)",
    ]);
  });

  it("pins a registry record to the version found, and that ref runs", async () => {
    await runtime.registry().publish(join(base, "ws", "skills", "echo"), {
      owner: "acme",
      version: "1.0.0",
    });
    expect(await runtime.catalog.startRef("acme/echo@1.0.0")).toBe("registry:acme/echo@1.0.0");
    expect(await runtime.catalog.startRef("acme/echo")).toBe("registry:acme/echo@1.0.0");
    const envelope = await runtime.runSkill({
      ref: await runtime.catalog.startRef("acme/echo"),
      inputs: {},
      secretEnv: [],
    });
    expect(envelope).toMatchObject({ status: "sealed", outcome: "completed" });
    expect(await refusal("acme/missing@1.0.0")).toMatch(/^PACKAGE_NOT_FOUND: skill is not in/);
  });
});

describe("catalog runners", () => {
  it("says which runners may hand work to an adapter, so the start form offers spawn only there", async () => {
    const ws = join(base, "ws");
    const write = (name: string, runners: string) => {
      mkdirSync(join(ws, "skills", name), { recursive: true });
      writeFileSync(
        join(ws, "skills", name, "SKILL.md"),
        `---\nname: ${name}\ndescription: d\n---\n`,
      );
      writeFileSync(join(ws, "skills", name, "X.yaml"), `skill: ${name}\nrunners:\n${runners}`);
    };
    write(
      "tools-only",
      "  default:\n    default: true\n    type: graph\n    graph:\n      name: g\n      steps:\n        - id: a\n          tool: fs.read\n          inputs: {path: README.md}\n",
    );
    write(
      "nested",
      "  default:\n    default: true\n    type: graph\n    graph:\n      name: g\n      steps:\n        - id: a\n          skill: ../echo\n",
    );
    const hits = await runtime.catalog.search({ query: "" });
    const dispatches = (name: string) =>
      hits.find((h) => h.name === name)?.runners.map((r) => r.dispatches);
    expect(dispatches("tools-only")).toEqual([false]);
    expect(dispatches("nested")).toEqual([true]);
    expect(dispatches("echo")).toEqual([false]);
  });
});
