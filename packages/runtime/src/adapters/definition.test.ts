import { describe, expect, it } from "vitest";
import { DefinitionProblem, isProtectedBranch, parseAdapterDefinition } from "./definition.js";

const base = {
  schema: "adapter.v1",
  id: "tool",
  version: "1",
  command: { argv: ["node", "./run.mjs"] },
  lanes: ["plain-agent"],
};

function problem(doc: Record<string, unknown>): DefinitionProblem {
  try {
    parseAdapterDefinition(doc as never);
  } catch (error) {
    if (error instanceof DefinitionProblem) return error;
    throw error;
  }
  throw new Error("accepted");
}

describe("adapter definitions", () => {
  it.each([
    [{ ...base, extra: 1 }, "extra"],
    [{ ...base, id: "Bad..Id" }, "id"],
    [{ ...base, env: { allow: ["1BAD"] } }, "env.allow[0]"],
    [{ ...base, env: { values: { X: "a\u0007b" } } }, "env.values.X"],
    [{ ...base, limits: { timeout_ms: 31 * 60_000 } }, "limits.timeout_ms"],
  ])("rejects an invalid definition (%#) at %s", (doc, field) => {
    const p = problem(doc);
    expect(p.code).toBe("adapter_config_invalid");
    expect(p.field).toBe(field);
  });

  it.each([["/bin/BASH.exe"], ["npx"], ["curl"], ["env"], ["PwSh.EXE"]])(
    "refuses %s as argv[0]",
    (exe) => {
      expect(problem({ ...base, command: { argv: [exe, "x"] } }).code).toBe("forbidden_executable");
    },
  );

  it("refuses inline interpreter code but accepts a script", () => {
    expect(problem({ ...base, command: { argv: ["node", "-e", "1"] } }).code).toBe(
      "forbidden_executable",
    );
    expect(parseAdapterDefinition(base as never).limits.hard_output_bytes).toBe(4 * 2 * 256 * 1024);
  });

  it("treats refs/heads/ and origin/ forms of protected branches alike", () => {
    const list = ["main", "release*"];
    expect(isProtectedBranch("refs/heads/main", list)).toBe(true);
    expect(isProtectedBranch("origin/release-2", list)).toBe(true);
    expect(isProtectedBranch("feature/x", list)).toBe(false);
  });
});
