import { describe, expect, it } from "vitest";
import { buildSkillReceipt } from "./build.js";
import type { SkillReceiptFacts } from "./build.js";
import { generateEd25519Seed } from "./ed25519.js";
import type { Receipt } from "./model.js";
import { receiptReport } from "./report.js";
import type { ReportInput } from "./report.js";
import { sealReceipt } from "./seal.js";
import { ed25519Signer } from "./signer.js";
import { ed25519Verifier, localDevelopmentPolicy, productionPolicy } from "./verifier.js";

const FACTS: SkillReceiptFacts = {
  name: "echo-skill",
  step: "default",
  createdAt: "2026-05-18T00:00:00Z",
  disposition: "closed",
  reasonCode: "process_closed",
  claim: {},
};

const signer = ed25519Signer({ kid: "ci-key", issuerType: "ci", seed: generateEd25519Seed() });
const trusted = ed25519Verifier([{ kid: "ci-key", publicKey: signer.publicKey }]);

function report(receipt: Receipt, over: Partial<ReportInput> = {}) {
  return receiptReport({
    id: receipt.id,
    document: { receipt },
    policy: productionPolicy(trusted),
    linked: new Map(),
    parentIds: [],
    now: new Date("2026-05-18T00:00:01Z"),
    ...over,
  });
}

describe("receiptReport", () => {
  it("reports a receipt signed by a trusted key as verified, naming the key and mode", () => {
    const receipt = sealReceipt(buildSkillReceipt(FACTS), signer);
    const r = report(receipt);
    expect(r).toMatchObject({
      status: "verified",
      failed_check: null,
      signer: { issuer_type: "ci", kid: "ci-key", signature_kind: "ed25519" },
      checked_at: "2026-05-18T00:00:01.000Z",
    });
    expect(r.checks.find((c) => c.name === "signature")).toMatchObject({
      ok: true,
      message: "signature matches the body, made with key ci-key",
    });
  });

  it("names the signature check when another key signed the body", () => {
    const other = ed25519Signer({ kid: "ci-key", issuerType: "ci", seed: generateEd25519Seed() });
    const forged = sealReceipt(buildSkillReceipt(FACTS), other);
    // Same kid, another key: the issuer's key hash no longer matches the trusted key.
    expect(report(forged).failed_check).toMatchObject({
      name: "signature",
      codes: ["signature_key_hash_mismatch"],
    });
    // The trusted key's receipt carrying another key's signature: it does not match.
    const mixed = { ...sealReceipt(buildSkillReceipt(FACTS), signer), signature: forged.signature };
    expect(report(mixed).failed_check).toMatchObject({
      name: "signature",
      message: "signature does not match",
    });
  });

  it("says unverified, not verified, for a local-development pseudo signature", () => {
    const receipt = sealReceipt(buildSkillReceipt(FACTS), signer);
    const pseudo = {
      ...receipt,
      signature: { alg: "Ed25519" as const, value: `sig:${receipt.digest}` },
    };
    const r = report(pseudo, { policy: localDevelopmentPolicy(trusted) });
    expect(r.status).toBe("unverified");
    expect(r.signer?.signature_kind).toBe("local-development");
    expect(report(pseudo).failed_check).toMatchObject({ name: "signature", ok: false });
  });

  it("names a missing parent, a filing under another id, and an unreadable file", () => {
    const receipt = sealReceipt(buildSkillReceipt(FACTS), signer);
    const parentId = `sha256:${"a".repeat(64)}`;
    const orphan = report(receipt, { parentIds: [parentId] });
    expect(orphan.failed_check).toMatchObject({
      name: "parent",
      message: `parent missing: ${parentId}`,
    });
    const misfiled = report(receipt, { id: `sha256:${"b".repeat(64)}` });
    expect(misfiled.failed_check).toMatchObject({
      name: "content_address",
      message: "the receipt's id differs from the id it is filed under",
    });
    const unreadable = receiptReport({
      id: receipt.id,
      document: { error: "Unexpected end of JSON input" },
      policy: productionPolicy(trusted),
      linked: new Map(),
      parentIds: [],
      now: new Date(),
    });
    expect(unreadable).toMatchObject({ status: "invalid", signer: null, commits: null });
    expect(unreadable.failed_check).toMatchObject({
      name: "readable",
      codes: ["receipt_unreadable"],
    });
  });
});
