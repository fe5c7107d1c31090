import { describe, expect, it } from "vitest";
import type { RuntimeError } from "../errors.js";
import { buildSkillReceipt } from "./build.js";
import { encodeBase64UrlNoPad } from "./ed25519.js";
import type { Receipt } from "./model.js";
import { serializeReceipt } from "./shape.js";
import { sealReceipt } from "./seal.js";
import { decodeReceipt } from "./shape.js";
import { localDevelopmentSigner, RECEIPT_KEY_ENV, verifierFromEnv } from "./signer.js";
import { readUpstreamJson, readUpstreamText } from "./test-oracles.js";
import { formatVerdictJson, receiptVerdict } from "./verdict.js";
import type { VerifyVerdict } from "./verdict.js";
import type { ReceiptVerifier } from "./verifier.js";

const CORPUS = "fixtures/receipt-verify";

function corpusVerifier(): ReceiptVerifier {
  const fixture = readUpstreamJson(`${CORPUS}/verifier.json`) as {
    kid: string;
    public_key_base64: string;
  };
  const verifier = verifierFromEnv({
    [RECEIPT_KEY_ENV.verifyKid]: fixture.kid,
    [RECEIPT_KEY_ENV.verifyPublicKey]: fixture.public_key_base64,
  });
  if (verifier === undefined) throw new Error("corpus verifier did not load");
  return verifier;
}

function corpusCase(name: string): { receipt: string; expected: string; mode: string } {
  const meta = readUpstreamJson(`${CORPUS}/${name}/case.json`) as {
    receipt: string;
    expected: string;
    signature_mode: string;
  };
  return {
    receipt: readUpstreamText(`${CORPUS}/${name}/${meta.receipt}`),
    expected: readUpstreamText(`${CORPUS}/${name}/${meta.expected}`),
    mode: meta.signature_mode,
  };
}

function replay(name: string): { actual: VerifyVerdict; expected: string } {
  const { receipt, expected, mode } = corpusCase(name);
  const actual =
    mode === "production"
      ? receiptVerdict(receipt, { verifier: corpusVerifier() })
      : receiptVerdict(receipt, { allowLocalDevelopment: true });
  return { actual, expected };
}

function validProduction(): Receipt {
  return decodeReceipt(JSON.parse(corpusCase("valid-production").receipt));
}

function codes(verdict: VerifyVerdict): string[] {
  return verdict.findings.map((finding) => finding.code);
}

describe("receipt-verify corpus", () => {
  it("prints exactly the expected verdict for valid-production", () => {
    const { actual, expected } = replay("valid-production");
    expect(formatVerdictJson(actual)).toBe(expected);
  });

  it("prints the expected verdict for malformed-json, parse wording aside", () => {
    const { actual, expected } = replay("malformed-json");
    const wanted = JSON.parse(expected) as VerifyVerdict;
    expect(actual.findings).toHaveLength(1);
    expect(actual.findings[0]).toMatchObject({ code: "receipt_parse_error", path: "$" });
    const [wantedFinding] = wanted.findings;
    actual.findings[0]!.message = wantedFinding!.message;
    expect(formatVerdictJson(actual)).toBe(expected);
  });
});

describe("receiptVerdict", () => {
  it("flags a tampered body through the digest, content address and signature", () => {
    const receipt = validProduction();
    receipt.acts[0]!.summary = "tampered receipt body";
    const verdict = receiptVerdict(serializeReceipt(receipt), { verifier: corpusVerifier() });
    expect(verdict.valid).toBe(false);
    expect(verdict.digest.status).toBe("invalid");
    expect(verdict.digest.actual).toBe(receipt.digest);
    expect(verdict.content_address.status).toBe("invalid");
    expect(verdict.signature.status).toBe("invalid");
    expect(codes(verdict)).toEqual(["seal_digest_mismatch", "signature_invalid"]);
  });

  it("flags a tampered signature alone", () => {
    const receipt = validProduction();
    receipt.signature.value = `base64:${encodeBase64UrlNoPad(new Uint8Array(64))}`;
    const verdict = receiptVerdict(serializeReceipt(receipt), { verifier: corpusVerifier() });
    expect(verdict.digest.status).toBe("valid");
    expect(verdict.content_address.status).toBe("valid");
    expect(verdict.signature).toEqual({
      mode: "production",
      status: "invalid",
      kid: "runx-cli-verify-fixture-key",
    });
    expect(verdict.findings).toEqual([
      {
        code: "signature_invalid",
        path: "signature.value",
        message: "signature does not verify against the receipt body commitment",
      },
    ]);
  });

  it("flags an unknown key id", () => {
    const receipt = validProduction();
    receipt.issuer.kid = "unknown-fixture-key";
    const verdict = receiptVerdict(serializeReceipt(receipt), { verifier: corpusVerifier() });
    expect(verdict.valid).toBe(false);
    expect(verdict.signature.kid).toBe("unknown-fixture-key");
    expect(codes(verdict)).toEqual(["seal_digest_mismatch", "signature_key_missing"]);
    expect(verdict.findings[1]!.path).toBe("issuer");
  });

  it("flags a child lineage reference that is not a receipt reference", () => {
    const unsealed = buildSkillReceipt({
      name: "receipt-verify",
      step: "broken-lineage",
      createdAt: "2026-06-10T00:00:00Z",
      disposition: "closed",
      reasonCode: "process_closed",
    });
    unsealed.lineage = {
      children: [{ type: "artifact", uri: "runx:receipt:sha256:missing" }],
      sync: [],
    };
    const sealed = sealReceipt(unsealed, localDevelopmentSigner());
    const verdict = receiptVerdict(serializeReceipt(sealed), { allowLocalDevelopment: true });
    expect(verdict.valid).toBe(false);
    expect(verdict.signature).toEqual({
      mode: "local-development",
      status: "valid",
      kid: "runtime-skeleton",
    });
    expect(verdict.findings).toEqual([
      {
        code: "child_receipt_ref_invalid",
        path: "lineage.children[0].type",
        message: "child receipt refs must use type receipt",
      },
    ]);
    expect(verdict.lineage.status).toBe("unverified");
  });

  it.each(["harness-spine/receipt-success.json", "harness-spine/receipt-abnormal.json"])(
    "accepts the local-development spine receipt %s when pseudo signatures are allowed",
    (fixture) => {
      const document = readUpstreamJson(`fixtures/contracts/${fixture}`) as { expected: unknown };
      const verdict = receiptVerdict(JSON.stringify(document.expected), {
        allowLocalDevelopment: true,
      });
      expect(verdict.valid).toBe(true);
      expect(verdict.digest.actual).toBe(verdict.digest.expected);
    },
  );

  it("rejects pseudo signatures in production mode and real ones in local mode", () => {
    const local = sealReceipt(
      buildSkillReceipt({
        name: "n",
        step: "s",
        createdAt: "2026-06-10T00:00:00Z",
        disposition: "closed",
        reasonCode: "process_closed",
      }),
      localDevelopmentSigner(),
    );
    const underProduction = receiptVerdict(serializeReceipt(local), { verifier: corpusVerifier() });
    expect(codes(underProduction)).toEqual(["signature_unsupported_issuer"]);
    const production = serializeReceipt(validProduction());
    const underLocal = receiptVerdict(production, { allowLocalDevelopment: true });
    expect(codes(underLocal)).toEqual(["signature_malformed"]);
  });

  it("reports documents that are not receipts as parse errors without needing keys", () => {
    const verdict = receiptVerdict('{"schema":"runx.receipt.v1","surprise":1}');
    expect(verdict.receipt_id).toBeNull();
    expect(verdict.signature.mode).toBe("local-development");
    expect(codes(verdict)).toEqual(["receipt_parse_error"]);
  });

  it("requires keys or the local-development allowance for a well-formed receipt", () => {
    try {
      receiptVerdict(serializeReceipt(validProduction()));
      expect.unreachable();
    } catch (error) {
      expect((error as RuntimeError).code).toBe("VERIFIER_CONFIG_INVALID");
    }
  });

  it("refuses documents over 10 MiB", () => {
    try {
      receiptVerdict(" ".repeat(10 * 1024 * 1024 + 1));
      expect.unreachable();
    } catch (error) {
      expect((error as RuntimeError).code).toBe("USAGE");
    }
  });
});
