import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import {
  buildGraphReceipt,
  buildRefusalReceipt,
  buildSkillReceipt,
  DEFAULT_ENFORCEMENT_PROFILE_HASH,
  stepIdentityDigest,
} from "./build.js";
import type { SkillReceiptFacts } from "./build.js";
import { canonicalJson, sha256Prefixed } from "./canonical.js";
import { receiptBodyDigest, receiptContentId, receiptFullDigest } from "./identity.js";
import type { Receipt } from "./model.js";
import { serializeReceipt } from "./shape.js";
import { sealReceipt } from "./seal.js";
import type { UnsealedReceipt } from "./seal.js";
import { decodeReceipt } from "./shape.js";
import { ed25519Signer, localDevelopmentSigner } from "./signer.js";
import type { ReceiptSigner } from "./signer.js";
import { readUpstreamText } from "./test-oracles.js";
import { generateEd25519Seed } from "./ed25519.js";
import { ed25519Verifier, localDevelopmentPolicy } from "./verifier.js";
import { receiptStatus, verifyReceiptProof } from "./verify.js";

const ECHO_FACTS: SkillReceiptFacts = {
  name: "echo-skill",
  step: "default",
  createdAt: "2026-05-18T00:00:00Z",
  disposition: "closed",
  reasonCode: "process_closed",
  claim: {},
};

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof RuntimeError ? error.code : "NOT_A_RUNTIME_ERROR";
  }
  return undefined;
}

describe("buildSkillReceipt", () => {
  it("reproduces the echo-skill oracle byte for byte once sealed locally", () => {
    const oracle = readUpstreamText("fixtures/harness/oracle/echo-skill.receipt.json").trimEnd();
    const sealed = sealReceipt(buildSkillReceipt(ECHO_FACTS), localDevelopmentSigner());
    expect(canonicalJson(sealed)).toBe(oracle);
    expect(sealed.digest).toBe(
      "sha256:241eef460b2874a93faa907ffd50b2d25ee09c8361deec73284aabaacaef317b",
    );
    expect(receiptFullDigest(sealed)).toBe(
      "sha256:b76412293fc8e168854a122a31c7449edb40053c503118bb4a68e3a670c5dd6e",
    );
    expect(sealed.subject.ref.uri).toBe("hrn_echo-skill_default");
    expect(sealed.acts.map((act) => act.id)).toEqual(["act_default"]);
  });

  it("derives the step identity from status and claimed outputs", () => {
    expect(stepIdentityDigest({ succeeded: true })).toBe(
      "sha256:956a708d225d6c0aecfa5d853a6cf6d085a912d69ea7ee60ddf90d46604ac950",
    );
    const a = stepIdentityDigest({ succeeded: true, claim: { a: 1, b: 2 } });
    expect(stepIdentityDigest({ succeeded: true, claim: { b: 2, a: 1 } })).toBe(a);
    expect(stepIdentityDigest({ succeeded: false, claim: { a: 1, b: 2 } })).not.toBe(a);
    expect(
      stepIdentityDigest({ succeeded: true, claim: { a: 1, b: 2 }, childIds: ["x"] }),
    ).not.toBe(a);
  });

  it("names the default enforcement profile by its upstream derivation", () => {
    const identity =
      '{"profile_id":"runx.runtime.enforcement.profile.v1","redaction_refs":[],"setup_refs":[],"teardown_refs":[]}';
    expect(sha256Prefixed(identity)).toBe(DEFAULT_ENFORCEMENT_PROFILE_HASH);
  });

  it("records a failed step with the failure text and a failed criterion", () => {
    const sealed = sealReceipt(
      buildSkillReceipt({
        ...ECHO_FACTS,
        disposition: "failed",
        reasonCode: "process_failed",
        outcomeSummary: "exit status 2",
      }),
      localDevelopmentSigner(),
    );
    expect(sealed.seal).toMatchObject({ disposition: "failed", reason_code: "process_failed" });
    expect(sealed.acts[0]!.criterion_bindings[0]).toMatchObject({
      status: "failed",
      summary: "exit status 2",
    });
    expect(sealed.acts[0]!.closure).toMatchObject({
      disposition: "failed",
      summary: "exit status 2",
    });
    expect(sealed.subject.ref.locator).toBe(stepIdentityDigest({ succeeded: false, claim: {} }));
    expect(verifyReceiptProof(sealed, localDevelopmentPolicy())).toEqual([]);
  });

  it("binds the execution boundary into the signed enforcement block", () => {
    const plain = sealReceipt(buildSkillReceipt(ECHO_FACTS), localDevelopmentSigner());
    const bounded = sealReceipt(
      buildSkillReceipt({ ...ECHO_FACTS, executionBoundary: "trusted_host_process" }),
      localDevelopmentSigner(),
    );
    expect(bounded.authority.enforcement.execution_boundary).toEqual({
      kind: "trusted_host_process",
    });
    expect(serializeReceipt(bounded)).toContain(
      '"enforcement":{"profile_hash":"sha256:635fdb0a7eef93911e3c6bd0b25b5e635edba32e0259133042b3a5f1fb19394e","execution_boundary":{"kind":"trusted_host_process"},"redaction_refs"',
    );
    expect(bounded.id).not.toBe(plain.id);
  });
});

describe("buildRefusalReceipt", () => {
  const failure = {
    code: "prepared_context_blocked",
    message: "required input 'token' is missing",
    prepared_context_digest: sha256Prefixed("prepared"),
    stage: "validate_inputs",
  };

  it("seals a blocked preflight_refused receipt with the failure in metadata only", () => {
    const sealed = sealReceipt(
      buildRefusalReceipt({
        name: "deploy",
        step: "default",
        createdAt: ECHO_FACTS.createdAt,
        failure,
      }),
      localDevelopmentSigner(),
    );
    expect(sealed.seal).toMatchObject({
      disposition: "blocked",
      reason_code: "preflight_refused",
      summary: failure.message,
    });
    expect(sealed.metadata).toEqual({ failure });
    const withoutMetadata: Receipt = { ...sealed };
    delete withoutMetadata.metadata;
    expect(receiptContentId(withoutMetadata)).toBe(sealed.id);
    expect(receiptBodyDigest(withoutMetadata)).toBe(sealed.digest);
    expect(receiptStatus(sealed, localDevelopmentPolicy())).toBe("unverified");
  });
});

describe("sealReceipt", () => {
  it("re-seals the verify corpus receipt exactly with the upstream fixture key", () => {
    const text = readUpstreamText("fixtures/receipt-verify/valid-production/receipt.json");
    const original = decodeReceipt(JSON.parse(text));
    const unsealed: UnsealedReceipt = { ...original };
    delete unsealed.id;
    delete unsealed.digest;
    delete unsealed.signature;
    delete unsealed.issuer;
    const signer = ed25519Signer({
      kid: "runx-cli-verify-fixture-key",
      issuerType: "hosted",
      seed: new Uint8Array(32).fill(0x47),
    });
    expect(serializeReceipt(sealReceipt(unsealed, signer))).toBe(serializeReceipt(original));
  });

  it("verifies production signatures immediately and refuses one its verifier rejects", () => {
    const signer = ed25519Signer({ kid: "k", issuerType: "hosted", seed: generateEd25519Seed() });
    const sealed = sealReceipt(buildSkillReceipt(ECHO_FACTS), signer);
    expect(sealed.signature.value.startsWith("base64:")).toBe(true);
    const stranger = ed25519Signer({ kid: "k", issuerType: "hosted", seed: generateEd25519Seed() });
    expect(
      codeOf(() =>
        sealReceipt(buildSkillReceipt(ECHO_FACTS), signer, { verifier: stranger.verifier }),
      ),
    ).toBe("RECEIPT_INVALID");
  });

  it("refuses a production signer that returns a pseudo signature or has no verifier", () => {
    const real = ed25519Signer({ kid: "k", issuerType: "hosted", seed: generateEd25519Seed() });
    const pseudo: ReceiptSigner = { ...real, sign: (digest) => `sig:${digest}` };
    expect(codeOf(() => sealReceipt(buildSkillReceipt(ECHO_FACTS), pseudo))).toBe(
      "RECEIPT_INVALID",
    );
    const blind: ReceiptSigner = {
      issuer: real.issuer,
      mode: "production",
      sign: (digest) => real.sign(digest),
    };
    expect(codeOf(() => sealReceipt(buildSkillReceipt(ECHO_FACTS), blind))).toBe("RECEIPT_INVALID");
    const localIssuer: ReceiptSigner = { ...real, issuer: { ...real.issuer, type: "local" } };
    expect(codeOf(() => sealReceipt(buildSkillReceipt(ECHO_FACTS), localIssuer))).toBe(
      "RECEIPT_INVALID",
    );
  });

  it("seals a graph receipt only when its committed children verify", () => {
    const local = localDevelopmentSigner();
    const first = sealReceipt(buildSkillReceipt({ ...ECHO_FACTS, name: "g", step: "a" }), local);
    const second = sealReceipt(buildSkillReceipt({ ...ECHO_FACTS, name: "g", step: "b" }), local);
    const graph = sealReceipt(
      buildGraphReceipt({ name: "g", createdAt: ECHO_FACTS.createdAt, children: [first, second] }),
      local,
      { children: [first, second] },
    );
    expect(graph.lineage?.children.map((child) => child.locator)).toEqual([
      first.digest,
      second.digest,
    ]);
    expect(graph.subject.ref.locator).toBe(
      sha256Prefixed(JSON.stringify([`runx:receipt:${first.id}`, `runx:receipt:${second.id}`])),
    );
    const forged: Receipt = { ...second, digest: sha256Prefixed("forged") };
    expect(
      codeOf(() =>
        sealReceipt(
          buildGraphReceipt({
            name: "g",
            createdAt: ECHO_FACTS.createdAt,
            children: [first, forged],
          }),
          local,
          { children: [first, forged] },
        ),
      ),
    ).toBe("RECEIPT_INVALID");
  });

  it("lets a step receipt commit child receipts by id and digest", () => {
    const local = localDevelopmentSigner();
    const child = sealReceipt(buildSkillReceipt({ ...ECHO_FACTS, name: "inner" }), local);
    const parent = sealReceipt(
      buildSkillReceipt({ ...ECHO_FACTS, name: "outer", children: [child] }),
      local,
      { children: [child] },
    );
    expect(parent.lineage?.children).toEqual([
      { type: "receipt", uri: `runx:receipt:${child.id}`, locator: child.digest },
    ]);
    expect(parent.subject.ref.locator).toBe(
      stepIdentityDigest({ succeeded: true, claim: {}, childIds: [child.id] }),
    );
    const verifier = ed25519Verifier([]);
    expect(verifyReceiptProof(parent, localDevelopmentPolicy(verifier))).toEqual([]);
  });
});
