/**
 * `external_receipt.verify` as a graph step through the built CLI: a receipt that binds the
 * target and contract, accepted by its canonical verifier (a stand-in named by
 * RUNX_SCAFLD_BIN), seals the run with the verification packet; one that names another
 * commit fails the step with RECEIPT_INVALID and never reaches the verifier.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

const FINGERPRINT = "c".repeat(64);

let ws: Workspace;
let verifier: string;
beforeEach(() => {
  ws = makeWorkspace("runx-external-receipt-");
  ws.write(
    "skills/bind/SKILL.md",
    "---\nname: bind\ndescription: Bind an external receipt to a commit.\n---\nBind.\n",
  );
  ws.write(
    "skills/bind/X.yaml",
    [
      "skill: bind",
      "runners:",
      "  main:",
      "    default: true",
      "    type: graph",
      "    inputs:",
      "      target: { type: string, required: true }",
      "    graph:",
      "      name: bind",
      "      steps:",
      "        - id: check",
      "          tool: external_receipt.verify",
      "          scopes: [receipt.read]",
      "          inputs:",
      "            receipt_path: .scafld/receipt.json",
      "            target: $input.target",
      `            contract_digest: sha256:${FINGERPRINT}`,
      "            repo_root: repo",
      "",
    ].join("\n"),
  );
  ws.write(
    "repo/.scafld/receipt.json",
    JSON.stringify({
      body: {
        task_id: "task-1",
        verdict: "pass",
        head_commit: "abc123",
        spec_fingerprint: FINGERPRINT,
        open_blockers: [],
      },
    }),
  );
  const called = join(ws.home, "verifier-called");
  verifier = ws.write(
    "../bin/scafld",
    `#!/bin/sh\ntouch "${called}"\necho '{"ok": true}'\n`,
    0o755,
  );
});
afterEach(() => ws.cleanup());

describe("external_receipt.verify in a graph", () => {
  it("seals the run with the verification packet when the receipt binds and its verifier accepts it", async () => {
    const run = await runx(ws, ["skill", "skills/bind", "--target", "abc123", "--json"], {
      env: { RUNX_SCAFLD_BIN: verifier },
    });
    expect(run.code).toBe(0);
    const env = run.json<{
      status: string;
      result: Record<string, { data: Record<string, unknown> }>;
    }>();
    expect(env.status).toBe("sealed");
    const packet = env.result.external_receipt_verification?.data;
    expect(packet).toMatchObject({
      schema: "runx.external_receipt.verification.v1",
      verified: true,
      task_id: "task-1",
      target: "abc123",
    });
    expect(existsSync(join(ws.home, "verifier-called"))).toBe(true);
  });

  it("fails the step when the receipt names another commit, without running the verifier", async () => {
    const run = await runx(ws, ["skill", "skills/bind", "--target", "def456", "--json"], {
      env: { RUNX_SCAFLD_BIN: verifier },
    });
    const env = run.json<{ outcome: string; closure: { summary: string } }>();
    expect(env.outcome).toBe("failed");
    expect(env.closure.summary).toContain("RECEIPT_INVALID");
    expect(env.closure.summary).toContain("head_commit does not match target");
    expect(existsSync(join(ws.home, "verifier-called"))).toBe(false);
  });
});
