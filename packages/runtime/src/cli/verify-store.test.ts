import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSkillReceipt } from "../receipts/build.js";
import type { Receipt } from "../receipts/model.js";
import { sealReceipt } from "../receipts/seal.js";
import { localDevelopmentSigner } from "../receipts/signer.js";
import { ReceiptStore } from "../receipts/store.js";
import { bytesDigest } from "../receipts/stored-receipt.js";
import { localDevelopmentPolicy } from "../receipts/verifier.js";
import { verifyReceiptStore } from "../services/verify-store.js";
import type { StoreVerification } from "../services/verify.js";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

// Enough receipts that `runx verify` checks them in worker threads (verify-pool.ts starts
// workers from 2,000 files on).
const COUNT = 2_400;
const signer = localDevelopmentSigner();

function sealed(i: number, children: Receipt[] = []): Receipt {
  const second = i % 60;
  const minute = Math.floor(i / 60) % 60;
  const hour = Math.floor(i / 3600);
  const pad = (n: number) => String(n).padStart(2, "0");
  return sealReceipt(
    buildSkillReceipt({
      name: children.length > 0 ? `parent-${i}` : `skill-${i}`,
      step: "default",
      createdAt: `2026-03-01T${pad(hour)}:${pad(minute)}:${pad(second)}Z`,
      disposition: "closed",
      reasonCode: "process_closed",
      children,
    }),
    signer,
  );
}

let ws: Workspace;
let dir: string;
let all: Receipt[];
let inProcess: StoreVerification;

beforeAll(async () => {
  ws = makeWorkspace("runx-verify-store-");
  dir = join(ws.root, ".runx", "receipts");
  mkdirSync(dir, { recursive: true });
  const store = new ReceiptStore({ dir, policy: localDevelopmentPolicy() });
  all = [];
  const batch: Receipt[] = [];
  for (let i = 0; i < COUNT; i++) {
    // Every tenth receipt is the parent of the two before it.
    const r = i % 10 === 9 ? sealed(i, batch.slice(-2)) : sealed(i);
    batch.push(r);
    all.push(r);
    if (batch.length === 500) await store.writeAll(batch.splice(0));
  }
  await store.writeAll(batch);
  // The reference: this thread alone, no cache.
  inProcess = await verifyReceiptStore({
    dir,
    label: ".runx/receipts",
    policy: localDevelopmentPolicy(),
    workers: 0,
  });
}, 120_000);

afterAll(() => ws.cleanup());

function fileOf(receipt: Receipt): string {
  return join(dir, `sha256-${receipt.id.slice("sha256:".length)}.json`);
}

function cacheDigests(): string[] {
  const cacheDir = join(ws.root, ".runx", "cache");
  const [name] = readdirSync(cacheDir).filter((f) => f.startsWith("verified-receipts-"));
  return readFileSync(join(cacheDir, String(name)), "utf8")
    .trim()
    .split("\n")
    .slice(1);
}

async function verifyJson(
  args: string[] = [],
): Promise<{ code: number | null; report: StoreVerification }> {
  const r = await runx(ws, ["verify", ...args, "--json"]);
  return { code: r.code, report: r.json<StoreVerification>() };
}

describe("runx verify over a large store", () => {
  it("reports on every core exactly what one thread reports, and caches the clean files' digests", async () => {
    const { code, report } = await verifyJson();
    expect(code).toBe(0);
    expect(report.valid).toBe(true);
    expect(report.receipt_count).toBe(COUNT);
    expect(report.trees).toHaveLength(COUNT - (COUNT / 10) * 2);
    expect(report).toEqual(JSON.parse(JSON.stringify(inProcess)));
    const digests = new Set(cacheDigests());
    expect(digests.size).toBe(COUNT);
    expect(digests.has(bytesDigest(readFileSync(fileOf(all[7] as Receipt))))).toBe(true);
  }, 60_000);

  it("still reports a receipt tampered after a cached verification, and one renamed onto another id", async () => {
    // Every file a cache hit now: the same report.
    expect((await verifyJson()).report).toEqual(JSON.parse(JSON.stringify(inProcess)));
    const victim = all[1234] as Receipt;
    const original = readFileSync(fileOf(victim), "utf8");
    const renamedOnto = all[1500] as Receipt;
    const displaced = readFileSync(fileOf(renamedOnto), "utf8");
    try {
      writeFileSync(fileOf(victim), original.replace("skill-1234", "skill-9999"));
      // Verified bytes under another receipt's name: their digest is cached, the id is not theirs.
      copyFileSync(fileOf(all[1501] as Receipt), fileOf(renamedOnto));
      const { code, report } = await verifyJson();
      expect(code).toBe(3);
      const tree = report.trees.find((t) => t.root_receipt_id === victim.id);
      expect(tree?.findings.map((f) => f.code)).toContain("seal_digest_mismatch");
      expect(report.unreadable_files.map((u) => u.file_name)).toEqual([
        `sha256-${renamedOnto.id.slice(7)}.json`,
      ]);
      expect(cacheDigests()).not.toContain(bytesDigest(readFileSync(fileOf(victim))));
      // Streamed: the tampered file's problem comes before the tree summary.
      const human = await runx(ws, ["verify"]);
      expect(human.code).toBe(3);
      const line = human.stdout.indexOf(`sha256-${victim.id.slice(7)}.json: seal_digest_mismatch`);
      expect(line).toBeGreaterThanOrEqual(0);
      expect(line).toBeLessThan(human.stdout.indexOf("receipt store .runx/receipts"));
    } finally {
      writeFileSync(fileOf(victim), original);
      writeFileSync(fileOf(renamedOnto), displaced);
    }
    expect((await verifyJson()).code).toBe(0);
  }, 60_000);

  it("verifies the trees touching a time range without reading the rest", async () => {
    // Minute 10 holds receipts 600..659 (parents at 609, 619, ..., 659, each of the two
    // before it); a receipt outside the range is tampered with and must not be read.
    const outside = all[100] as Receipt;
    const original = readFileSync(fileOf(outside), "utf8");
    try {
      writeFileSync(fileOf(outside), original.replace("skill-100", "skill-999"));
      const { code, report } = await verifyJson([
        "--since",
        "2026-03-01T00:10:00Z",
        "--until",
        "2026-03-01T00:10:58Z",
      ]);
      expect(code).toBe(0);
      // 600..658 created in the range; 659, their parent created after it, through the
      // journal's record of its children.
      expect(report.receipt_count).toBe(60);
      expect(report.valid).toBe(true);
      expect(report.trees.every((t) => t.valid)).toBe(true);
      const whole = await verifyJson();
      expect(whole.code).toBe(3);
    } finally {
      writeFileSync(fileOf(outside), original);
    }
    const day = await verifyJson(["--since", "2026-03-01", "--until", "2026-03-01"]);
    expect(day.report.receipt_count).toBe(COUNT);
    const none = await verifyJson(["--since", "2026-03-02"]);
    expect(none.report).toMatchObject({ receipt_count: 0, trees: [], valid: true });
  }, 60_000);

  it("refuses a malformed or reversed range as a usage error naming the flag", async () => {
    const bad = await runx(ws, ["verify", "--since", "yesterday", "--json"]);
    expect(bad.code).toBe(64);
    expect(bad.json()).toMatchObject({ error: { reason: "USAGE", flag: "--since" } });
    const reversed = await runx(ws, [
      "verify",
      "--since",
      "2026-03-02",
      "--until",
      "2026-03-01",
      "--json",
    ]);
    expect(reversed.code).toBe(64);
    expect(reversed.json()).toMatchObject({ error: { reason: "USAGE" } });
  });
});
