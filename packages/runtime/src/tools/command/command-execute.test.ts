import { createHash } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsCommandExecuteOutput } from "../../generated/validate-tools-command-execute.output.js";
import { pidsWithArgv, waitFor } from "../../process/test-support.js";
import { createTaintSet } from "../../redaction.js";
import { commandExecuteTool } from "./command-execute.js";
import {
  TEST_PATH,
  failureCode,
  makeToolContext,
  successData,
  type TestWorkspace,
  makeLayoutContext,
} from "../../testing/tool-context.js";
import type { JsonRecord, ToolContext } from "../types.js";

let layout: TestWorkspace;
let ctx: ToolContext;

const sha = (data: string): string => `sha256:${createHash("sha256").update(data).digest("hex")}`;

function script(name: string, body: string): string {
  const file = join(layout.workspace, name);
  writeFileSync(file, body);
  return name;
}

async function run(input: JsonRecord, context: ToolContext = ctx): Promise<JsonRecord> {
  return successData(await commandExecuteTool.execute(input, context));
}

beforeEach(() => {
  ({ layout, ctx } = makeLayoutContext());
});
afterEach(() => layout.cleanup());

describe("command.execute", () => {
  it("runs the exact argv without a shell and returns the execution packet", async () => {
    const file = script("args.sh", 'printf "%s|" "$@"; echo oops >&2\n');
    const out = await run({
      command: "/bin/sh",
      args: [file, "$HOME", "a b", "$(touch pwned)"],
      output_mode: "text",
    });
    expect(out).toMatchObject({
      schema: "runx.command.execution.v1",
      decision: "completed",
      cwd: ".",
      exit_code: 0,
      timed_out: false,
      stdout: "$HOME|a b|$(touch pwned)|",
      stderr: "oops\n",
      stdout_digest: sha("$HOME|a b|$(touch pwned)|"),
      stdout_bytes: 25,
      errors: [],
    });
    expect(validateToolsCommandExecuteOutput(out)).toBe(true);
  });

  it("keeps only digests and sizes in digest mode", async () => {
    const out = await run({ command: "echo", args: ["hidden"] });
    expect(out).toMatchObject({ stdout: "", stdout_digest: sha("hidden\n"), stdout_bytes: 7 });
  });

  it("parses stdout as one JSON object in json mode and fails the decision otherwise", async () => {
    const ok = await run({ command: "printf", args: ['{"status":"ready"}'], output_mode: "json" });
    expect(ok).toMatchObject({ decision: "completed", json: { status: "ready" } });
    const list = await run({ command: "printf", args: ["[1]"], output_mode: "json" });
    expect(list).toMatchObject({
      decision: "failed",
      json: null,
      errors: [{ code: "command.output" }],
    });
  });

  it("reports a nonzero exit as a failed decision, not a failed call", async () => {
    const out = await run({ command: "/bin/sh", args: [script("exit.sh", "exit 3\n")] });
    expect(out).toMatchObject({
      decision: "failed",
      exit_code: 3,
      errors: [{ code: "command.exit", exit_code: 3 }],
    });
  });

  it("runs in a contained cwd and reports it relative", async () => {
    mkdirSync(join(layout.workspace, "sub"));
    const out = await run({ command: "pwd", cwd: "sub", output_mode: "text" });
    expect(out).toMatchObject({ cwd: "sub", stdout: `${join(layout.workspace, "sub")}\n` });
  });

  it("passes only the baseline, runx-provided and explicit variables", async () => {
    const context = makeToolContext({
      ...ctx,
      baseEnv: { PATH: TEST_PATH, HOME: "/home/x", SECRET_TOKEN: "s", RUNX_RECEIPT_SIGN_KEY: "k" },
    });
    const out = await run(
      { command: "env", env: { GREETING: "hi" }, output_mode: "text" },
      context,
    );
    const names = (out.stdout as string)
      .trim()
      .split("\n")
      .map((line) => line.split("=")[0])
      .sort();
    expect(names).toEqual(["GREETING", "HOME", "PATH", "RUNX_CWD"]);
  });

  it("refuses secret, reserved and tainted variables with POLICY_DENIED", async () => {
    const tainted = makeToolContext({ ...ctx, taint: createTaintSet(["hunter2-secret"]) });
    const cases: Array<[JsonRecord, ToolContext]> = [
      [{ command: "true", env: { RUNX_RECEIPT_SIGN_ED25519_PRIVATE_KEY: "k" } }, ctx],
      [{ command: "true", env: { RUNX_CWD: "/" } }, ctx],
      [{ command: "true", env: { TOKEN: "hunter2-secret" } }, tainted],
    ];
    for (const [input, context] of cases) {
      expect(failureCode(await commandExecuteTool.execute(input, context))).toBe("POLICY_DENIED");
    }
  });

  it("redacts delivered secrets from captured text", async () => {
    const context = makeToolContext({ ...ctx, taint: createTaintSet(["hunter2-secret"]) });
    const out = await run(
      { command: "printf", args: ["token=%s", "hunter2-secret"], output_mode: "text" },
      context,
    );
    expect(out.stdout).toBe("token=[redacted-credential]");
  });

  it("refuses inline code under the strict policy and allows it otherwise", async () => {
    const input = { command: "sh", args: ["-c", "exit 0"] };
    const strict = makeToolContext({ ...ctx, policy: { strictInlineCode: true } });
    expect(failureCode(await commandExecuteTool.execute(input, strict))).toBe("POLICY_DENIED");
    expect(await run(input)).toMatchObject({ decision: "completed" });
  });

  it("runs only when expected_command_digest matches the normalized command", async () => {
    const input = { command: "true", args: ["x"] };
    const first = await run(input);
    const digest = first.command_digest as string;
    const again = await run({ ...input, expected_command_digest: digest });
    expect(again.command_digest).toBe(first.command_digest);
    const drift = { ...input, args: ["y"], expected_command_digest: digest };
    expect(failureCode(await commandExecuteTool.execute(drift, ctx))).toBe("INPUT_INVALID");
  });

  it("refuses more than 128 args and timeouts outside 1000-3600000 ms", async () => {
    const many = { command: "true", args: Array.from({ length: 129 }, () => "a") };
    expect(commandExecuteTool.validateInput(many)).toMatchObject({ ok: false, path: "args" });
    for (const timeout_ms of [999, 3_600_001]) {
      const result = await commandExecuteTool.execute({ command: "true", timeout_ms }, ctx);
      expect(failureCode(result)).toBe("INPUT_INVALID");
    }
  });

  it("fails with SPAWN_FAILED when the command does not exist", async () => {
    const result = await commandExecuteTool.execute({ command: "no-such-command-runx" }, ctx);
    expect(failureCode(result)).toBe("SPAWN_FAILED");
  });

  it("kills the whole process group when the timeout expires", async () => {
    // Found by its command line: under a state cover its own `$!` is a pid of another namespace.
    const mark = `3031${process.pid % 10_000}`;
    const file = script("spawn.sh", `sleep ${mark} &\necho started > started\nsleep 30\n`);
    const running = run({ command: "/bin/sh", args: [file], timeout_ms: 1000 });
    // Seen alive first, so its absence below means it was killed.
    await waitFor(() => pidsWithArgv(["sleep", mark]).length === 1, 5000, "the background child");
    const out = await running;
    expect(out).toMatchObject({ decision: "failed", timed_out: true });
    expect(out.errors).toContainEqual({
      code: "command.timeout",
      message: "command exceeded timeout_ms",
    });
    expect(existsSync(join(layout.workspace, "started"))).toBe(true);
    await waitFor(
      () => pidsWithArgv(["sleep", mark]).length === 0,
      5000,
      "the background child to die",
    );
  });

  it("fails with INTERRUPTED when the run is aborted", async () => {
    const controller = new AbortController();
    const context = makeToolContext({ ...ctx, signal: controller.signal });
    const pending = commandExecuteTool.execute({ command: "sleep", args: ["30"] }, context);
    setTimeout(() => controller.abort(), 100);
    expect(failureCode(await pending)).toBe("INTERRUPTED");
  });
});
