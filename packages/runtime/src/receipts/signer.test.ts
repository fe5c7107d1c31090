import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { sha256Prefixed } from "./canonical.js";
import {
  decodeBase64Flexible,
  ed25519FromSeed,
  ed25519Verify,
  encodeBase64UrlNoPad,
  generateEd25519Seed,
} from "./ed25519.js";
import type { Issuer } from "./model.js";
import {
  ed25519Signer,
  LOCAL_DEVELOPMENT_ISSUER,
  localDevelopmentSigner,
  RECEIPT_KEY_ENV,
  signerFromEnv,
  stripReceiptSigningEnv,
  verifierFromEnv,
} from "./signer.js";
import type { EnvRecord } from "./signer.js";
import { readUpstreamJson } from "./test-oracles.js";
import { ed25519Verifier, localPseudoSignatureVerifier, policyVerifier } from "./verifier.js";
import { localDevelopmentPolicy, productionPolicy } from "./verifier.js";

const DIGEST = "sha256:241eef460b2874a93faa907ffd50b2d25ee09c8361deec73284aabaacaef317b";

function codeOf(action: () => unknown): { code: string; message: string } | undefined {
  try {
    action();
  } catch (error) {
    if (error instanceof RuntimeError) return { code: error.code, message: error.message };
    throw error;
  }
  return undefined;
}

function seedText(seed: Uint8Array): string {
  return Buffer.from(seed).toString("base64");
}

function fullEnv(seed: Uint8Array, type = "hosted"): EnvRecord {
  return {
    [RECEIPT_KEY_ENV.signKid]: "test-key",
    [RECEIPT_KEY_ENV.signSeed]: seedText(seed),
    [RECEIPT_KEY_ENV.signIssuerType]: type,
  };
}

describe("Ed25519 production signer", () => {
  it("signs the ASCII digest string and verifies round trip with a generated seed", () => {
    const seed = generateEd25519Seed();
    const signer = ed25519Signer({ kid: "k1", issuerType: "ci", seed });
    expect(signer.mode).toBe("production");
    expect(signer.issuer).toEqual({
      type: "ci",
      kid: "k1",
      public_key_sha256: sha256Prefixed(signer.publicKey),
    });
    const value = signer.sign(DIGEST);
    expect(value).toMatch(/^base64:[A-Za-z0-9_-]{86}$/);
    const raw = decodeBase64Flexible(value.slice("base64:".length))!;
    expect(ed25519Verify(signer.publicKey, DIGEST, raw)).toBe(true);
    expect(
      signer.verifier.verify(signer.issuer, { alg: "Ed25519", value }, DIGEST),
    ).toBeUndefined();
    expect(signer.verifier.verify(signer.issuer, { alg: "Ed25519", value }, `${DIGEST}0`)).toBe(
      "signature_mismatch",
    );
  });

  it("accepts the seed as standard base64 and as base64url without padding", () => {
    const seed = generateEd25519Seed();
    const a = ed25519Signer({ kid: "k", issuerType: "hosted", seed: seedText(seed) });
    const b = ed25519Signer({ kid: "k", issuerType: "hosted", seed: encodeBase64UrlNoPad(seed) });
    expect(a.issuer).toEqual(b.issuer);
    expect(a.sign(DIGEST)).toBe(b.sign(DIGEST));
  });

  it("derives the upstream fixture key from the upstream fixture seed", () => {
    const verifier = readUpstreamJson("fixtures/receipt-verify/verifier.json") as {
      public_key_base64: string;
    };
    const pair = ed25519FromSeed(new Uint8Array(32).fill(0x47));
    expect(Buffer.from(pair.publicKey).toString("base64")).toBe(verifier.public_key_base64);
  });

  it("refuses local and verifier issuer types", () => {
    for (const issuerType of ["local", "verifier"] as const) {
      const failure = codeOf(() =>
        ed25519Signer({ kid: "k", issuerType, seed: generateEd25519Seed() }),
      );
      expect(failure?.code).toBe("SIGNER_CONFIG_INVALID");
    }
  });
});

describe("local development signer", () => {
  it("uses the runtime-skeleton issuer and the sig:<digest> pseudo signature", () => {
    const signer = localDevelopmentSigner();
    expect(signer.mode).toBe("local-development");
    expect(signer.issuer).toEqual({
      type: "local",
      kid: "runtime-skeleton",
      public_key_sha256: "sha256:runtime-skeleton-public",
    });
    expect(signer.issuer).toEqual(LOCAL_DEVELOPMENT_ISSUER);
    expect(signer.sign(DIGEST)).toBe(`sig:${DIGEST}`);
  });
});

describe("signerFromEnv", () => {
  it("falls back to local development when no signing variable is set", () => {
    expect(signerFromEnv({}).mode).toBe("local-development");
    expect(signerFromEnv({ [RECEIPT_KEY_ENV.signKid]: "  " }).mode).toBe("local-development");
  });

  it("builds the production signer when all three variables are set", () => {
    const signer = signerFromEnv(fullEnv(generateEd25519Seed(), "ci"));
    expect(signer.mode).toBe("production");
    expect(signer.issuer.type).toBe("ci");
    expect(signer.issuer.kid).toBe("test-key");
  });

  it("reports a missing issuer type when only kid and seed are set", () => {
    const env = { ...fullEnv(generateEd25519Seed()) };
    delete env[RECEIPT_KEY_ENV.signIssuerType];
    const failure = codeOf(() => signerFromEnv(env));
    expect(failure?.code).toBe("SIGNER_CONFIG_INVALID");
    expect(failure?.message).toContain("issuer type is missing");
  });

  it.each([
    ["kid only", [RECEIPT_KEY_ENV.signKid]],
    ["seed only", [RECEIPT_KEY_ENV.signSeed]],
    ["issuer type only", [RECEIPT_KEY_ENV.signIssuerType]],
    ["kid and issuer type", [RECEIPT_KEY_ENV.signKid, RECEIPT_KEY_ENV.signIssuerType]],
    ["seed and issuer type", [RECEIPT_KEY_ENV.signSeed, RECEIPT_KEY_ENV.signIssuerType]],
  ])("requires the variables together (%s)", (_label, names) => {
    const complete = fullEnv(generateEd25519Seed());
    const env: Record<string, string | undefined> = {};
    for (const name of names) env[name] = complete[name];
    const failure = codeOf(() => signerFromEnv(env));
    expect(failure?.code).toBe("SIGNER_CONFIG_INVALID");
    expect(failure?.message).toContain("set together");
  });

  it("rejects a seed of the wrong length without echoing it", () => {
    const shortSeed = Buffer.alloc(16, 7).toString("base64");
    const env = { ...fullEnv(generateEd25519Seed()), [RECEIPT_KEY_ENV.signSeed]: shortSeed };
    const failure = codeOf(() => signerFromEnv(env));
    expect(failure?.code).toBe("SIGNER_CONFIG_INVALID");
    expect(failure?.message).not.toContain(shortSeed);
    const garbage = { ...env, [RECEIPT_KEY_ENV.signSeed]: "not*base64" };
    expect(codeOf(() => signerFromEnv(garbage))?.code).toBe("SIGNER_CONFIG_INVALID");
  });

  it.each(["local", "verifier", "production"])("rejects issuer type %s", (type) => {
    expect(codeOf(() => signerFromEnv(fullEnv(generateEd25519Seed(), type)))?.code).toBe(
      "SIGNER_CONFIG_INVALID",
    );
  });

  it("strips signing variables from environments handed to children", () => {
    const env = { ...fullEnv(generateEd25519Seed()), PATH: "/bin", RUNX_RECEIPT_VERIFY_KID: "v" };
    expect(stripReceiptSigningEnv(env)).toEqual({ PATH: "/bin", RUNX_RECEIPT_VERIFY_KID: "v" });
  });
});

describe("verifierFromEnv", () => {
  const fixture = readUpstreamJson("fixtures/receipt-verify/verifier.json") as {
    kid: string;
    public_key_base64: string;
  };
  const verifyEnv = {
    [RECEIPT_KEY_ENV.verifyKid]: fixture.kid,
    [RECEIPT_KEY_ENV.verifyPublicKey]: fixture.public_key_base64,
  };

  it("is undefined when nothing is configured", () => {
    expect(verifierFromEnv({})).toBeUndefined();
  });

  it("uses an explicit verification key pair", () => {
    const verifier = verifierFromEnv(verifyEnv);
    const signer = ed25519Signer({
      kid: fixture.kid,
      issuerType: "hosted",
      seed: new Uint8Array(32).fill(0x47),
    });
    const value = signer.sign(DIGEST);
    expect(verifier?.verify(signer.issuer, { alg: "Ed25519", value }, DIGEST)).toBeUndefined();
  });

  it("treats a partial pair as a configuration error, never falling back to the signer", () => {
    const signing = fullEnv(generateEd25519Seed());
    for (const name of [RECEIPT_KEY_ENV.verifyKid, RECEIPT_KEY_ENV.verifyPublicKey]) {
      const env = { ...signing, [name]: verifyEnv[name] };
      expect(codeOf(() => verifierFromEnv(env))?.code).toBe("VERIFIER_CONFIG_INVALID");
    }
  });

  it("lets a complete signing identity verify its own receipts", () => {
    const env = fullEnv(generateEd25519Seed());
    const signer = signerFromEnv(env);
    const verifier = verifierFromEnv(env);
    const value = signer.sign(DIGEST);
    expect(verifier?.verify(signer.issuer, { alg: "Ed25519", value }, DIGEST)).toBeUndefined();
  });

  it("rejects key material that is not base64", () => {
    const env = { ...verifyEnv, [RECEIPT_KEY_ENV.verifyPublicKey]: "%%%" };
    expect(codeOf(() => verifierFromEnv(env))?.code).toBe("VERIFIER_CONFIG_INVALID");
  });
});

describe("ed25519Verifier", () => {
  const seed = generateEd25519Seed();
  const signer = ed25519Signer({ kid: "ring-key", issuerType: "hosted", seed });
  const verifier = ed25519Verifier([{ kid: "ring-key", publicKey: signer.publicKey }]);
  const value = signer.sign(DIGEST);
  const sign = (overrides: Partial<Issuer>, signature = value) =>
    verifier.verify(
      { ...signer.issuer, ...overrides },
      { alg: "Ed25519", value: signature },
      DIGEST,
    );

  it("maps each failure to its reason", () => {
    expect(sign({})).toBeUndefined();
    expect(sign({ kid: "other" })).toBe("missing_key");
    expect(sign({ type: "local" })).toBe("unsupported_issuer");
    expect(sign({ type: "verifier" })).toBe("unsupported_issuer");
    expect(sign({ public_key_sha256: sha256Prefixed("x") })).toBe("key_hash_mismatch");
    expect(sign({}, `sig:${DIGEST}`)).toBe("malformed_signature");
    expect(sign({}, "base64:AAAA")).toBe("malformed_signature");
    expect(sign({}, `base64:${encodeBase64UrlNoPad(new Uint8Array(64))}`)).toBe(
      "signature_mismatch",
    );
    const shortKey = ed25519Verifier([{ kid: "ring-key", publicKey: new Uint8Array(31) }]);
    expect(shortKey.verify(signer.issuer, { alg: "Ed25519", value }, DIGEST)).toBe("malformed_key");
  });

  it("accepts a standard base64 signature encoding as well", () => {
    const raw = decodeBase64Flexible(value.slice("base64:".length))!;
    expect(sign({}, `base64:${Buffer.from(raw).toString("base64")}`)).toBeUndefined();
  });

  it("applies the signature policy to pseudo and real signatures", () => {
    const local = policyVerifier(localDevelopmentPolicy())!;
    const issuer = LOCAL_DEVELOPMENT_ISSUER;
    expect(
      local.verify(issuer, { alg: "Ed25519", value: `sig:${DIGEST}` }, DIGEST),
    ).toBeUndefined();
    expect(local.verify(issuer, { alg: "Ed25519", value: "sig:sha256:00" }, DIGEST)).toBe(
      "signature_mismatch",
    );
    expect(local.verify(signer.issuer, { alg: "Ed25519", value }, DIGEST)).toBe("missing_key");
    const localWithRing = policyVerifier(localDevelopmentPolicy(verifier))!;
    expect(localWithRing.verify(signer.issuer, { alg: "Ed25519", value }, DIGEST)).toBeUndefined();
    const production = policyVerifier(productionPolicy(verifier))!;
    expect(production.verify(issuer, { alg: "Ed25519", value: `sig:${DIGEST}` }, DIGEST)).toBe(
      "malformed_signature",
    );
    expect(policyVerifier(productionPolicy())).toBeUndefined();
    expect(
      localPseudoSignatureVerifier.verify(signer.issuer, { alg: "Ed25519", value }, DIGEST),
    ).toBe("malformed_signature");
  });
});
