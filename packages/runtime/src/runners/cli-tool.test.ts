import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import { isGone, readPid, waitFor } from "../process/test-support.js";
import { runCliTool, type CliToolSpec, type RunCliToolOptions } from "./cli-tool.js";

const BASE_ENV = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  SECRET_X: "hunter2",
  SERVICE_URL: "https://svc.invalid",
};
let workspace: string;
let pkg: string;

beforeEach(() => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), "runx-cli-")));
  pkg = join(workspace, "skills", "demo");
  mkdirSync(pkg, { recursive: true });
});
afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
});

function file(name: string, body: string): void {
  writeFileSync(join(pkg, name), body);
}

function run(
  spec: CliToolSpec,
  extra: Partial<RunCliToolOptions> = {},
): ReturnType<typeof runCliTool> {
  return runCliTool({
    spec,
    packageDir: pkg,
    workspaceRoot: workspace,
    inputs: {},
    baseEnv: BASE_ENV,
    policy: { strictInlineCode: false },
    ...extra,
  });
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return isRuntimeError(error) ? error.code : "NOT_A_RUNTIME_ERROR";
  }
  return undefined;
}

describe("runCliTool", () => {
  it("runs sh ./run.sh in the package directory and wraps plain stdout as {stdout}", async () => {
    file("run.sh", 'printf "%s @ %s" "$RUNX_INPUT_MESSAGE" "$(pwd)"\n');
    const result = await run(
      { command: "sh", args: ["./run.sh"] },
      { inputs: { message: "alpha" } },
    );
    expect(result.disposition).toBe("closed");
    expect(result.reasonCode).toBe("process_closed");
    expect(result.exitCode).toBe(0);
    expect(result.output).toEqual({ stdout: `alpha @ ${pkg}` });
    expect(result.stdoutSha256).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("turns stdout that is a JSON object into the output", async () => {
    file("run.sh", 'printf "%s" "$RUNX_INPUTS_JSON"\n');
    const inputs = { message: "hi", confidence: 0.5 };
    const result = await run({ command: "sh", args: ["./run.sh"] }, { inputs });
    expect(result.disposition).toBe("closed");
    expect(result.output).toEqual(inputs);
  });

  it("fails a nonzero exit with the stderr tail as the summary", async () => {
    file("run.sh", `printf '%s' "${"x".repeat(3000)}" >&2\necho "the real reason" >&2\nexit 1\n`);
    const result = await run({ command: "sh", args: ["./run.sh"] });
    expect(result.disposition).toBe("failed");
    expect(result.reasonCode).toBe("process_failed");
    expect(result.exitCode).toBe(1);
    expect(result.summary).toMatch(/the real reason$/);
    expect(Buffer.byteLength(result.summary!)).toBeLessThanOrEqual(2048);
    expect(result.output).toEqual({});
  });

  it("fails when the runner declares outputs and stdout is not a JSON object", async () => {
    file("run.sh", "echo not json\n");
    const result = await run({ command: "sh", args: ["./run.sh"], outputs: { message: "string" } });
    expect(result.disposition).toBe("failed");
    expect(result.summary).toMatch(/not a JSON object/);
  });

  it("fails when the runner declares outputs and stdout was truncated", async () => {
    file("run.sh", `printf '{"a":"%s"}' "$(head -c 2000 /dev/zero | tr '\\0' x)"\n`);
    const result = await run(
      { command: "sh", args: ["./run.sh"], outputs: { a: "string" } },
      { maxBytesPerStream: 100 },
    );
    expect(result.stdoutTruncated).toBe(true);
    expect(result.disposition).toBe("failed");
  });

  it("writes the inputs JSON to stdin in stdin mode", async () => {
    const result = await run(
      { command: "cat", input_mode: "stdin" },
      { inputs: { a: 1, b: "two" } },
    );
    expect(result.output).toEqual({ a: 1, b: "two" });
  });

  it("keeps the child environment deny-by-default", async () => {
    const result = await run(
      { command: "/usr/bin/env", environment: { optional: ["SERVICE_URL"] } },
      { baseEnv: { ...BASE_ENV, RUNX_RECEIPT_SIGN_ED25519_PRIVATE_KEY: "k" } },
    );
    const names = result.stdout
      .trim()
      .split("\n")
      .map((line) => line.slice(0, line.indexOf("=")));
    expect(names.sort()).toEqual(["PATH", "RUNX_CWD", "RUNX_INPUTS_JSON", "SERVICE_URL"]);
    expect(result.stdout).not.toContain("hunter2");
  });

  it("expands $input and {{input.…}} args without a shell", async () => {
    const result = await run(
      {
        command: "printf",
        args: ["%s|%s|%s|%s", "$input.who", "n={{input.n}}", "$(touch pwned)", "{{.Name}}"],
      },
      { inputs: { who: "a b", n: 3 } },
    );
    expect(result.stdout).toBe("a b|n=3|$(touch pwned)|{{.Name}}");
    expect(existsSync(join(pkg, "pwned"))).toBe(false);
  });

  it("fails with INPUT_INVALID when an arg references an input that was not supplied", async () => {
    expect(await codeOf(run({ command: "echo", args: ["$input.missing"] }))).toBe("INPUT_INVALID");
  });

  it("refuses inline code under the strict policy before spawning anything", async () => {
    const sentinel = join(workspace, "sentinel");
    const spec = { command: "sh", args: ["-c", `touch ${sentinel}`] };
    let caught: unknown;
    try {
      await run(spec, { policy: { strictInlineCode: true } });
    } catch (error) {
      caught = error;
    }
    expect(isRuntimeError(caught) && caught.code).toBe("POLICY_DENIED");
    expect(isRuntimeError(caught) && caught.details).toMatchObject({
      interpreter: "sh",
      flag: "-c",
    });
    expect(existsSync(sentinel)).toBe(false);
    // The same runner is allowed by default, which proves the sentinel would have appeared.
    await run(spec);
    expect(existsSync(sentinel)).toBe(true);
  });

  it("refuses inline-code flags that arrive through inputs under the strict policy", async () => {
    const spec = { command: "sh", args: ["$input.flag", "$input.code"] };
    const denied = run(spec, {
      policy: { strictInlineCode: true },
      inputs: { flag: "-c", code: "true" },
    });
    expect(await codeOf(denied)).toBe("POLICY_DENIED");
  });

  it("refuses a cwd that escapes the package and the workspace", async () => {
    expect(await codeOf(run({ command: "true", cwd: "../../.." }))).toBe("PATH_ESCAPE");
    symlinkSync(tmpdir(), join(pkg, "out"));
    expect(await codeOf(run({ command: "true", cwd: "out" }))).toBe("PATH_ESCAPE");
  });

  it("refuses a cwd inside runx's own state, also through a symlink", async () => {
    mkdirSync(join(workspace, ".runx", "keys"), { recursive: true });
    expect(await codeOf(run({ command: "true", cwd: "../../.runx" }))).toBe("POLICY_DENIED");
    symlinkSync(join(workspace, ".runx", "keys"), join(pkg, "k"));
    expect(await codeOf(run({ command: "true", cwd: "k" }))).toBe("POLICY_DENIED");
  });

  it("runs in the workspace root for the exact {{env.RUNX_CWD}} token and in a package subdirectory", async () => {
    const atRoot = await run({ command: "pwd", cwd: "{{env.RUNX_CWD}}" });
    expect(atRoot.stdout.trim()).toBe(workspace);
    mkdirSync(join(pkg, "sub"));
    const inSub = await run({ command: "pwd", cwd: "sub" });
    expect(inSub.stdout.trim()).toBe(join(pkg, "sub"));
  });

  it("times out, kills the process group and reports timed_out", async () => {
    const pidFile = join(workspace, "sleeper.pid");
    file("run.sh", `sleep 30 &\necho $! > ${pidFile}\nwait\n`);
    const result = await run({ command: "sh", args: ["./run.sh"], timeout_seconds: 1 });
    expect(result.disposition).toBe("timed_out");
    expect(result.reasonCode).toBe("process_timed_out");
    expect(result.durationMs).toBeLessThan(5000);
    await waitFor(() => isGone(readPid(pidFile)!), 10_000, "the sleeper to be gone");
  });

  it("reports killed when the abort signal fires", async () => {
    const ready = join(workspace, "ready");
    file("run.sh", `: > ${ready}\nsleep 30\n`);
    const controller = new AbortController();
    const running = run({ command: "sh", args: ["./run.sh"] }, { signal: controller.signal });
    await waitFor(() => existsSync(ready), 5000, "the script to start");
    controller.abort();
    const result = await running;
    expect(result.disposition).toBe("killed");
    expect(result.reasonCode).toBe("process_killed");
  });

  it("rejects timeout_seconds outside 1–3600", async () => {
    expect(await codeOf(run({ command: "true", timeout_seconds: 0 }))).toBe("PACKAGE_INVALID");
    expect(await codeOf(run({ command: "true", timeout_seconds: 3601 }))).toBe("PACKAGE_INVALID");
  });

  it("fails with SPAWN_FAILED for a command that does not exist", async () => {
    expect(await codeOf(run({ command: "runx-no-such-tool" }))).toBe("SPAWN_FAILED");
  });
});
