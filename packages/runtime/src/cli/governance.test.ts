import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pidsWithArgv } from "../process/test-support.js";
import { makeWorkspace, pollUntil, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
});
afterEach(() => ws.cleanup());

function allStateBytes(): string {
  return ws
    .files(".runx")
    .map((f) => readFileSync(join(ws.root, f)).toString("latin1"))
    .join("\n");
}

describe("inline-code policy", () => {
  beforeEach(() => {
    ws.write("skills/inline/SKILL.md", "---\nname: inline\n---\nRuns inline shell code.\n");
    ws.write(
      "skills/inline/X.yaml",
      'runners:\n  default:\n    type: cli-tool\n    command: sh\n    args: ["-c", "touch sentinel.txt"]\n',
    );
  });

  it("refuses inline shell code under strict policy, seals a blocked receipt and spawns nothing", async () => {
    ws.write(
      ".runx/config.json",
      JSON.stringify({ policy: { strict_cli_tool_inline_code: true } }),
    );
    const r = await runx(ws, ["skill", "skills/inline", "--json"]);
    expect(r.code).toBe(1);
    const error = r.json<{ error: Record<string, unknown> }>().error;
    expect(error).toMatchObject({
      code: "operator_context_blocked",
      reason: "POLICY_DENIED",
      interpreter: "sh",
      flag: "-c",
      stage: "admit_policy",
    });
    expect(String(error.prepared_context_digest)).toMatch(/^sha256:/);
    const id = String(error.receipt_id);
    const receipt = JSON.parse(ws.read(`.runx/receipts/sha256-${id.slice(7)}.json`));
    expect(receipt.seal.disposition).toBe("blocked");
    expect(existsSync(join(ws.root, "skills", "inline", "sentinel.txt"))).toBe(false);
    const verify = await runx(ws, ["verify", "--json"]);
    expect(verify.code).toBe(0);
  });

  it("runs the same package when the policy is off (the sentinel proves the command would run)", async () => {
    const r = await runx(ws, ["skill", "skills/inline", "--json"]);
    expect(r.code).toBe(0);
    expect(existsSync(join(ws.root, "skills", "inline", "sentinel.txt"))).toBe(true);
  });

  it("rejects a malformed project config naming the unknown field", async () => {
    ws.write(".runx/config.json", JSON.stringify({ policy: { strict_inline: true } }));
    const r = await runx(ws, ["skill", "skills/inline", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({
      reason: "PROFILE_INVALID",
      path: "policy.strict_inline",
    });
    expect(existsSync(join(ws.root, "skills", "inline", "sentinel.txt"))).toBe(false);
  });
});

describe("secrets", () => {
  const SECRET = "tok_Zq8vW3mK9pL2xR7n";
  beforeEach(() => {
    ws.write(
      "skills/leaky/SKILL.md",
      "---\nname: leaky\n---\nA skill that tries to leak its token.\n",
    );
    ws.write(
      "skills/leaky/leak.sh",
      [
        'printf \'{"token":"%s","note":"value %s"}\' "$LEAKY_TOKEN" "$LEAKY_TOKEN"',
        'echo "stderr has $LEAKY_TOKEN" >&2',
        'if [ "$RUNX_INPUT_MODE" = fail ]; then echo "failing with $LEAKY_TOKEN" >&2; exit 1; fi',
        "",
      ].join("\n"),
    );
    ws.write(
      "skills/leaky/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: cli-tool",
        "    command: sh",
        "    args: [./leak.sh]",
        "    inputs:",
        "      mode:",
        "        type: string",
        "        default: ok",
        "",
      ].join("\n"),
    );
  });

  it("never shows a delivered secret in output, receipts, history or state", async () => {
    const env = { LEAKY_TOKEN: SECRET };
    const ok = await runx(ws, ["skill", "skills/leaky", "--secret-env", "LEAKY_TOKEN", "--json"], {
      env,
    });
    expect(ok.code).toBe(0);
    expect(ok.json().result).toEqual({
      token: "[redacted-credential]",
      note: "value [redacted-credential]",
    });
    const failed = await runx(
      ws,
      ["skill", "skills/leaky", "--secret-env", "LEAKY_TOKEN", "--mode", "fail"],
      { env },
    );
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("[redacted-credential]");
    const history = await runx(ws, ["history", "--json"], { env });
    const runId = String(ok.json().run_id);
    const detail = await runx(ws, ["history", "--detail", runId, "--json"], { env });
    expect(detail.json()).toMatchObject({ kind: "run" });
    for (const text of [
      ok.stdout,
      ok.stderr,
      failed.stdout,
      failed.stderr,
      history.stdout,
      detail.stdout,
      allStateBytes(),
    ]) {
      expect(text).not.toContain(SECRET);
    }
  });

  it("refuses a --secret-env variable that is not set, without running anything", async () => {
    const r = await runx(ws, ["skill", "skills/leaky", "--secret-env", "LEAKY_TOKEN", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({
      reason: "INPUT_INVALID",
      path: "secret_env.LEAKY_TOKEN",
    });
  });

  it("does not pass undeclared environment variables to the process", async () => {
    ws.write("skills/envdump/SKILL.md", "---\nname: envdump\n---\n");
    ws.write(
      "skills/envdump/X.yaml",
      "runners:\n  default:\n    type: cli-tool\n    command: env\n",
    );
    const r = await runx(ws, ["skill", "skills/envdump", "--json"], {
      env: { LEAKY_TOKEN: SECRET, AWS_SECRET_ACCESS_KEY: "aws-x" },
    });
    expect(r.code).toBe(0);
    const stdout = String((r.json().result as { stdout: string }).stdout);
    expect(stdout).toContain("RUNX_CWD=");
    expect(stdout).not.toContain("LEAKY_TOKEN");
    expect(stdout).not.toContain("AWS_SECRET_ACCESS_KEY");
  });
});

describe("interrupts", () => {
  it("exits 130 within 3 s of Ctrl-C and leaves no process behind", async () => {
    ws.write("skills/slow/SKILL.md", "---\nname: slow\n---\n");
    // Found by its argument: in the step's own pid namespace, `$!` is not its pid here.
    const sleep = `6013${process.pid % 10_000}`;
    ws.write("skills/slow/slow.sh", `sleep ${sleep} &\necho $! > grandchild.pid\nwait\n`);
    ws.write(
      "skills/slow/X.yaml",
      "runners:\n  default:\n    type: cli-tool\n    command: sh\n    args: [./slow.sh]\n    timeout_seconds: 120\n",
    );
    const pidFile = join(ws.root, "skills", "slow", "grandchild.pid");
    let sentAt = 0;
    let seenAlive = 0;
    const result = await runx(ws, ["skill", "skills/slow", "--json"], {
      timeoutMs: 30_000,
      onSpawn: (child) => {
        void pollUntil(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", {
          timeoutMs: 15_000,
          what: "the grandchild pid file",
        }).then(() => {
          seenAlive = pidsWithArgv(["sleep", sleep]).length;
          sentAt = Date.now();
          child.kill("SIGINT");
        });
      },
    });
    const elapsed = Date.now() - sentAt;
    expect(result.code).toBe(130);
    expect(elapsed).toBeLessThan(3000);
    // The marker matched a live grandchild before the interrupt, so its absence below means
    // it was killed (not that the command line was never found).
    expect(seenAlive).toBe(1);
    await pollUntil(() => pidsWithArgv(["sleep", sleep]).length === 0, {
      timeoutMs: 3000,
      what: "the grandchild to exit",
    });
    const receipts = readdirSync(join(ws.root, ".runx", "receipts")).filter((f) =>
      f.startsWith("sha256-"),
    );
    expect(receipts).toHaveLength(1);
    const receipt = JSON.parse(ws.read(`.runx/receipts/${receipts[0]}`));
    expect(receipt.seal.disposition).toBe("killed");
  });
});
