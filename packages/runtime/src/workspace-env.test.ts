import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "./errors.js";
import { parseDotenv, readWorkspaceEnv } from "./workspace-env.js";

function errorOf(run: () => unknown): Record<string, unknown> {
  try {
    run();
  } catch (error) {
    if (isRuntimeError(error))
      return { code: error.code, message: error.message, ...error.details };
    throw error;
  }
  throw new Error("expected a RuntimeError");
}

describe("parseDotenv", () => {
  it("reads KEY=VALUE lines, export prefixes, comments and both quote styles as data", () => {
    const text = [
      "\uFEFF# a comment",
      "",
      "PLAIN=value with spaces   # trailing comment",
      "export EXPORTED=yes",
      "HASH=no#comment-here",
      "SINGLE='literal $HOME \\n # kept'",
      'DOUBLE="line\\nnext \\"quoted\\" \\\\ \\$HOME" # after',
      "EMPTY=",
      "EQUALS=a=b=c",
      "REPEAT=first",
      "REPEAT=second",
      "  INDENTED = padded  ",
      "WINDOWS=crlf\r",
    ].join("\n");
    expect(parseDotenv(text)).toEqual({
      PLAIN: "value with spaces",
      EXPORTED: "yes",
      HASH: "no#comment-here",
      SINGLE: "literal $HOME \\n # kept",
      DOUBLE: 'line\nnext "quoted" \\ $HOME',
      EMPTY: "",
      EQUALS: "a=b=c",
      REPEAT: "second",
      INDENTED: "padded",
      WINDOWS: "crlf",
    });
  });

  it("fails by line for malformed lines and never repeats the line", () => {
    expect(errorOf(() => parseDotenv("OK=1\nsecret_material_no_equals\n"))).toMatchObject({
      code: "CONFIG_INVALID",
      file: ".env",
      line: 2,
    });
    const unclosed = errorOf(() => parseDotenv('A="open secret_value_77\n'));
    expect(unclosed).toMatchObject({ line: 1 });
    expect(String(unclosed.message)).not.toContain("secret_value_77");
    expect(errorOf(() => parseDotenv("1BAD=x"))).toMatchObject({ line: 1 });
    expect(errorOf(() => parseDotenv("A='x' trailing"))).toMatchObject({ line: 1 });
    expect(errorOf(() => parseDotenv('A="bad \\q escape"'))).toMatchObject({ line: 1 });
  });
});

describe("readWorkspaceEnv", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("lets exported values win and records which names .env supplied", () => {
    dir = mkdtempSync(join(tmpdir(), "runx-dotenv-"));
    writeFileSync(join(dir, ".env"), "A=from_file\nB=from_file\n");
    const snapshot = readWorkspaceEnv(dir, { A: "exported" });
    expect(snapshot.env).toMatchObject({ A: "exported", B: "from_file" });
    expect([...snapshot.fromDotenv]).toEqual(["B"]);
    expect(Object.isFrozen(snapshot.env)).toBe(true);
  });

  it("treats a missing .env as empty", () => {
    dir = mkdtempSync(join(tmpdir(), "runx-dotenv-"));
    const processEnv = { A: "1" };
    const snapshot = readWorkspaceEnv(dir, processEnv);
    expect(snapshot.env).toEqual({ A: "1" });
    expect(snapshot.fromDotenv.size).toBe(0);
  });
});
