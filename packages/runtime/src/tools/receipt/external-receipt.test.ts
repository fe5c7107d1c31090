import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsReceiptExternalVerifyOutput } from "../../generated/validate-tools-receipt-external-verify.output.js";
import {
  TEST_PATH,
  failureCode,
  makeLayoutContext,
  successData,
} from "../../testing/tool-context.js";
import type { TestWorkspace } from "../../testing/tool-context.js";
import type { ToolContext, ToolResult } from "../types.js";
import { externalReceiptVerifyTool } from "./external-receipt.js";

const COMMIT = "0123456789abcdef0123456789abcdef01234567";
const FINGERPRINT = "a".repeat(64);

let layout: TestWorkspace;
let ctx: ToolContext;
let verifier: string;
let argvLog: string;

/** A stand-in verifier: records its argv, then answers as `mode` says. */
function writeVerifier(mode: "ok" | "not-ok" | "exit-1" | "garbage"): void {
  const answer = {
    ok: `echo '{"ok": true}'`,
    "not-ok": `echo '{"ok": false}'`,
    "exit-1": "exit 1",
    garbage: "echo 'not json'",
  }[mode];
  writeFileSync(verifier, `#!/bin/sh\nprintf '%s\\n' "$@" > "${argvLog}"\n${answer}\n`);
  chmodSync(verifier, 0o755);
}

function writeReceipt(body: Record<string, unknown>, name = "receipt.json"): string {
  const path = join(layout.workspace, "repo", ".scafld", name);
  writeFileSync(path, JSON.stringify({ body, signature: "sig" }));
  return path;
}

const goodBody = (): Record<string, unknown> => ({
  task_id: "task-7",
  verdict: "pass",
  head_commit: COMMIT,
  spec_fingerprint: FINGERPRINT,
  open_blockers: [],
});

function verify(input: Record<string, unknown>): Promise<ToolResult> {
  return externalReceiptVerifyTool.execute(
    {
      receipt_path: ".scafld/receipt.json",
      target: COMMIT,
      contract_digest: `sha256:${FINGERPRINT}`,
      repo_root: "repo",
      ...input,
    },
    ctx,
  );
}

beforeEach(() => {
  const made = makeLayoutContext({ scopes: ["receipt.read"] });
  layout = made.layout;
  verifier = join(layout.base, "fake-scafld");
  argvLog = join(layout.base, "argv.txt");
  mkdirSync(join(layout.workspace, "repo", ".scafld"), { recursive: true });
  ctx = { ...made.ctx, baseEnv: { PATH: TEST_PATH, RUNX_SCAFLD_BIN: verifier } };
});
afterEach(() => layout.cleanup());

describe("external_receipt.verify", () => {
  it("binds a passing receipt to the target and contract once its verifier accepts it", async () => {
    writeVerifier("ok");
    const path = writeReceipt(goodBody());
    const data = successData(await verify({}));
    const digest = `sha256:${createHash("sha256").update(readFileSync(path)).digest("hex")}`;
    expect(data).toEqual({
      schema: "runx.external_receipt.verification.v1",
      verifier: "scafld",
      verified: true,
      task_id: "task-7",
      verdict: "pass",
      target: COMMIT,
      contract_digest: `sha256:${FINGERPRINT}`,
      receipt_ref: `runx:external_receipt:${digest}`,
      receipt_digest: digest,
      verified_at: "2026-01-01T00:00:00Z",
    });
    expect(validateToolsReceiptExternalVerifyOutput(data)).toBe(true);
    const argv = readFileSync(argvLog, "utf8").trim().split("\n");
    expect(argv[0]).toBe("verify");
    expect(argv.slice(2)).toEqual(["--target", COMMIT, "--root", argv[5], "--json"]);
    expect(argv[1]).toMatch(/repo\/\.scafld\/receipt\.json$/);
  });

  it("needs the receipt.read scope", () => {
    expect(externalReceiptVerifyTool.scopes).toEqual(["receipt.read"]);
    expect(externalReceiptVerifyTool.mutating).toBe(false);
  });

  it.each([
    ["a failing verdict", { verdict: "fail" }, "receipt verdict is not pass"],
    ["another commit", { head_commit: "f".repeat(40) }, "head_commit does not match target"],
    ["another contract", { spec_fingerprint: "b".repeat(64) }, "spec_fingerprint does not match"],
    ["open blockers", { open_blockers: ["review"] }, "receipt has open blockers"],
    ["no blocker list", { open_blockers: undefined }, "receipt omits open_blockers"],
    ["no task id", { task_id: " " }, "receipt body omits task_id"],
  ])("refuses %s before running the verifier", async (_label, change, message) => {
    writeVerifier("ok");
    writeReceipt({ ...goodBody(), ...change });
    const result = await verify({});
    expect(failureCode(result)).toBe("RECEIPT_INVALID");
    expect(result.status === "failure" && result.summary).toContain(message);
    expect(() => readFileSync(argvLog)).toThrow();
  });

  it.each([
    ["exits non-zero", "exit-1", "canonical verifier rejected the receipt"],
    ["does not report ok", "not-ok", "did not report success"],
    ["prints no JSON", "garbage", "returned invalid JSON"],
  ] as const)("refuses when the verifier %s", async (_label, mode, message) => {
    writeVerifier(mode);
    writeReceipt(goodBody());
    const result = await verify({});
    expect(failureCode(result)).toBe("RECEIPT_INVALID");
    expect(result.status === "failure" && result.summary).toContain(message);
  });

  it.each([
    ["an option-looking target", { target: "--upload-pack=x" }, "target"],
    ["a target with whitespace", { target: "main branch" }, "target"],
    ["a digest without its algorithm", { contract_digest: FINGERPRINT }, "contract_digest"],
    ["a short digest", { contract_digest: "sha256:abc" }, "contract_digest"],
    ["an unknown field", { extra: 1 }, "extra"],
  ])("refuses %s as invalid input", async (_label, change, field) => {
    writeVerifier("ok");
    writeReceipt(goodBody());
    const result = await verify(change);
    expect(failureCode(result)).toBe("INPUT_INVALID");
    expect(JSON.stringify(result)).toContain(field);
  });

  it("keeps the receipt inside repo_root: escapes, absolute paths outside and links out are refused", async () => {
    writeVerifier("ok");
    writeReceipt(goodBody());
    writeFileSync(join(layout.outside, "outside.json"), JSON.stringify({ body: goodBody() }));
    symlinkSync(join(layout.outside, "outside.json"), join(layout.workspace, "repo", "link.json"));
    for (const receipt_path of [
      "../../outside/outside.json",
      join(layout.outside, "outside.json"),
      "link.json",
    ]) {
      const code = failureCode(await verify({ receipt_path }));
      expect(["PATH_ESCAPE", "INPUT_INVALID"]).toContain(code);
    }
    const absolute = join(layout.workspace, "repo", ".scafld", "receipt.json");
    expect(successData(await verify({ receipt_path: absolute })).task_id).toBe("task-7");
  });

  it("names a verifier that cannot be started", async () => {
    writeReceipt(goodBody());
    const result = await verify({});
    expect(failureCode(result)).toBe("SPAWN_FAILED");
  });
});
