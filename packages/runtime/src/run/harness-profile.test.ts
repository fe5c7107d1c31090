import { chmodSync, cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime } from "../create-runtime.js";
import { canonicalJson, receiptBodyDigest, receiptFullDigest } from "../receipts/index.js";
import type { Receipt } from "../receipts/index.js";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
const upstream = resolve(repo, "..", "shared", "conformance", "runx-upstream");
let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

describe("harness receipt profile", () => {
  it("reproduces upstream's echo-skill harness receipt byte for byte", async () => {
    const ws = mkdtempSync(join(tmpdir(), "runx-oracle-"));
    dirs.push(ws);
    const pkg = join(ws, "fixtures", "skills", "echo");
    cpSync(join(upstream, "fixtures", "skills", "echo"), pkg, { recursive: true });
    cpSync(
      join(repo, "fixtures", "conformance-scripts", "skills", "echo", "run.sh"),
      join(pkg, "run.sh"),
    );
    chmodSync(pkg, 0o755);
    const runtime = createRuntime({
      workspaceRoot: ws,
      runxHome: join(ws, "home"),
      env: { PATH: process.env.PATH },
      receiptProfile: { kind: "harness", name: "echo-skill", createdAt: "2026-05-18T00:00:00Z" },
    });
    try {
      const envelope = await runtime.runSkill({
        ref: pkg,
        inputs: { message: { value: "hello from harness" } },
        secretEnv: [],
      });
      expect(envelope.status).toBe("sealed");
      const oracleText = readFileSync(
        join(upstream, "fixtures", "harness", "oracle", "echo-skill.receipt.json"),
        "utf8",
      ).trim();
      const file = readdirSync(join(ws, ".runx", "receipts")).find((f) => f.startsWith("sha256-"));
      const receipt = JSON.parse(
        readFileSync(join(ws, ".runx", "receipts", String(file)), "utf8"),
      ) as Receipt;
      expect(canonicalJson(receipt)).toBe(oracleText);
      expect(receiptBodyDigest(receipt)).toBe(
        "sha256:241eef460b2874a93faa907ffd50b2d25ee09c8361deec73284aabaacaef317b",
      );
      expect(receiptFullDigest(receipt)).toBe(
        "sha256:b76412293fc8e168854a122a31c7449edb40053c503118bb4a68e3a670c5dd6e",
      );
    } finally {
      runtime.close();
    }
  });
});
