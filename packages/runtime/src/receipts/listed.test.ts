import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildSkillReceipt } from "./build.js";
import { generateEd25519Seed } from "./ed25519.js";
import { receiptBodyDigest } from "./identity.js";
import { checkListedReceipt } from "./listed.js";
import type { Receipt } from "./model.js";
import { sealReceipt } from "./seal.js";
import { ed25519Signer, localDevelopmentSigner } from "./signer.js";
import { ReceiptStore } from "./store.js";
import { bytesDigest } from "./stored-receipt.js";
import { LISTING_CACHE_MAX, ListingCache } from "./verified-cache.js";
import { ed25519Verifier, localDevelopmentPolicy, productionPolicy } from "./verifier.js";
import type { SignaturePolicy } from "./verifier.js";

let root: string;
let dir: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "runx-listed-"));
  dir = join(root, ".runx", "receipts");
  mkdirSync(dir, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function built(n: number) {
  return buildSkillReceipt({
    name: "echo",
    step: `cli-tool-${n}`,
    createdAt: `2026-01-01T00:00:0${n}Z`,
    disposition: "closed",
    reasonCode: "process_closed",
  });
}

const fileOf = (id: string) => join(dir, `sha256-${id.slice("sha256:".length)}.json`);

async function stored(receipt: Receipt, policy: SignaturePolicy): Promise<Receipt> {
  await new ReceiptStore({ dir, policy, label: "receipts" }).write(receipt);
  return receipt;
}

function edit(id: string, change: (value: Record<string, unknown>) => void): void {
  const value = JSON.parse(readFileSync(fileOf(id), "utf8")) as Record<string, unknown>;
  change(value);
  writeFileSync(fileOf(id), JSON.stringify(value));
}

const check = (id: string, policy: SignaturePolicy, verified?: ListingCache) =>
  checkListedReceipt({
    dir,
    label: "receipts",
    policy,
    id,
    ...(verified !== undefined ? { verified } : {}),
  });

describe("checkListedReceipt", () => {
  const local = localDevelopmentPolicy();

  it("reports an intact local-development receipt unverified with no reason", async () => {
    const r = await stored(sealReceipt(built(1), localDevelopmentSigner()), local);
    const listed = check(r.id, local);
    expect(listed.receipt?.id).toBe(r.id);
    expect(listed.verification).toEqual({ status: "unverified" });
  });

  it("reports an edited body invalid, naming the digest check", async () => {
    const r = await stored(sealReceipt(built(1), localDevelopmentSigner()), local);
    edit(r.id, (v) => ((v.seal as Record<string, unknown>).summary = "edited"));
    const listed = check(r.id, local);
    expect(listed.receipt?.seal.summary).toBe("edited");
    expect(listed.verification.status).toBe("invalid");
    expect(listed.verification.reason).toContain("seal_digest_mismatch");
    expect(listed.findings.map((f) => f.code)).toContain("seal_digest_mismatch");
  });

  it("reports a receipt re-sealed under an id that is not its content address invalid", async () => {
    const r = await stored(sealReceipt(built(1), localDevelopmentSigner()), local);
    const other = `sha256:${"ab".repeat(32)}`;
    // Digest and pseudo signature recomputed for the forged id: only the address is wrong.
    edit(r.id, (v) => {
      v.id = other;
      v.digest = receiptBodyDigest(v as unknown as Receipt);
      (v.signature as Record<string, unknown>).value = `sig:${v.digest as string}`;
    });
    renameSync(fileOf(r.id), fileOf(other));
    expect(check(other, local).verification).toEqual({
      status: "invalid",
      reason: "receipt id is not its content address",
    });
  });

  it("reports a signature the active policy's key does not accept invalid", async () => {
    const signer = ed25519Signer({ kid: "k1", issuerType: "ci", seed: generateEd25519Seed() });
    const own = productionPolicy(ed25519Verifier([{ kid: "k1", publicKey: signer.publicKey }]));
    const r = await stored(sealReceipt(built(1), signer), own);
    expect(check(r.id, own).verification).toEqual({ status: "verified" });
    const stranger = ed25519Signer({ kid: "k1", issuerType: "ci", seed: generateEd25519Seed() });
    const other = productionPolicy(ed25519Verifier([{ kid: "k1", publicKey: stranger.publicKey }]));
    const listed = check(r.id, other);
    expect(listed.verification.status).toBe("invalid");
    expect(listed.verification.reason).toContain("signature");
  });

  it("reports a truncated, a foreign-schema and a missing file invalid without a receipt", async () => {
    const a = await stored(sealReceipt(built(1), localDevelopmentSigner()), local);
    const b = await stored(sealReceipt(built(2), localDevelopmentSigner()), local);
    const text = readFileSync(fileOf(a.id), "utf8");
    writeFileSync(fileOf(a.id), text.slice(0, text.length / 2));
    edit(b.id, (v) => (v.schema = "other.v1"));
    const missing = `sha256:${"cd".repeat(32)}`;
    expect(check(a.id, local)).toEqual({
      receipt: null,
      verification: { status: "invalid", reason: "receipt JSON is malformed" },
      findings: [],
    });
    expect(check(b.id, local).verification.reason).toBe("receipt has unsupported schema");
    expect(check(missing, local).verification.reason).toBe(
      "receipt file is missing from the store",
    );
  });
});

describe("the listing cache", () => {
  const local = localDevelopmentPolicy();
  const cacheOf = () => new ListingCache(join(root, ".runx"), dir, local);

  it("keeps the digests of clean files, trusts them, and checks a changed file in full", async () => {
    const r = await stored(sealReceipt(built(1), localDevelopmentSigner()), local);
    const first = cacheOf();
    check(r.id, local, first);
    first.save();
    const key = bytesDigest(readFileSync(fileOf(r.id)));
    expect(cacheOf().has(key)).toBe(true);

    // A cached digest stands for bytes found clean: those exact bytes are not verified again
    // (proved by caching the digest of bytes that would fail).
    edit(r.id, (v) => ((v.seal as Record<string, unknown>).summary = "edited"));
    const editedKey = bytesDigest(readFileSync(fileOf(r.id)));
    const trusting = cacheOf();
    expect(check(r.id, local, trusting).verification.status).toBe("invalid");
    trusting.add(editedKey);
    expect(check(r.id, local, trusting).verification).toEqual({ status: "unverified" });

    // Without that planted digest, the changed file misses and is reported invalid.
    expect(check(r.id, local, cacheOf()).verification.status).toBe("invalid");
  });

  it("records no invalid file and keeps only the newest digests", async () => {
    const r = await stored(sealReceipt(built(1), localDevelopmentSigner()), local);
    edit(r.id, (v) => ((v.seal as Record<string, unknown>).summary = "edited"));
    const cache = cacheOf();
    check(r.id, local, cache);
    expect(cache.has(bytesDigest(readFileSync(fileOf(r.id))))).toBe(false);

    const many = cacheOf();
    const keys = Array.from(
      { length: LISTING_CACHE_MAX + 10 },
      (_, i) => `sha256:${i.toString(16).padStart(64, "0")}`,
    );
    keys.forEach((k) => many.add(k));
    many.save();
    const reread = cacheOf();
    expect(reread.has(keys[0] as string)).toBe(false);
    expect(reread.has(keys[keys.length - 1] as string)).toBe(true);
  });
});
