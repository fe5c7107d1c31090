import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CliEnv } from "../env.js";
import type { CommandContext } from "../context.js";
import { run } from "./parser.js";

function context(stdin: string, json = true): { ctx: CommandContext; out: string[] } {
  const out: string[] = [];
  const env: CliEnv = {
    workspaceRoot: "/nonexistent-workspace",
    runxHome: "/nonexistent-home",
    receiptDir: undefined,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    color: false,
    processEnv: {},
    workspace: { env: {}, fromDotenv: new Set() },
  };
  const ctx: CommandContext = {
    env,
    signal: new AbortController().signal,
    json,
    stdin: Readable.from([Buffer.from(stdin)]),
    out: (text) => out.push(text),
    err: () => undefined,
    status: () => undefined,
  };
  return { ctx, out };
}

describe("runx parser eval", () => {
  it("answers a request read from stdin as one JSON document", async () => {
    const request = {
      inputs: [
        {
          kind: "parser.validateGraphYaml",
          yaml: "name: g\nsteps:\n  - id: a\n    tool: fs.read\n",
        },
      ],
      returnErrors: true,
    };
    const { ctx, out } = context(JSON.stringify(request));
    expect(await run(["eval", "--input", "-", "--json"], ctx)).toBe(0);
    expect(out).toHaveLength(1);
    const answer = JSON.parse(out[0] ?? "") as { result: { value: Array<{ status: string }> } };
    expect(answer.result.value[0]?.status).toBe("success");
  });

  it("exits 1 with the failure envelope for a malformed request", async () => {
    const { ctx, out } = context("not json");
    expect(await run(["eval", "--input", "-", "--json"], ctx)).toBe(1);
    expect(JSON.parse(out[0] ?? "")).toMatchObject({
      status: "failure",
      error: { code: "invalid_document" },
    });
  });

  it("is a usage error without --input or with an unknown action", async () => {
    expect(await run(["eval", "--json"], context("").ctx)).toBe(64);
    expect(await run(["check", "--input", "-"], context("").ctx)).toBe(64);
    const missing = context("");
    expect(await run(["eval", "--input", "missing.json", "--json"], missing.ctx)).toBe(1);
    expect(missing.out.join("")).toContain("cannot read the parser request file");
  });
});
