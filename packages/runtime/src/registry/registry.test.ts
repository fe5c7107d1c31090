import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UPSTREAM } from "../conformance/corpus.test-kit.js";
import { computePackageDigest, digestPackageEntries } from "../packages/digest.js";
import { sha256Prefixed } from "../receipts/canonical.js";
import { encodeBase64UrlNoPad, ed25519FromSeed } from "../receipts/ed25519.js";
import { packagePathProblem } from "./files.js";
import type { PublisherKey, TrustedKey } from "./keys.js";
import { LocalRegistry } from "./local.js";
import { checkRecordDigests, decodeRecord, signRecord, verifyRecord } from "./record.js";
import type { UnsignedRecord } from "./record.js";
import { parseRemoteAcquisition } from "./remote.js";
import { tryParseRegistryRef } from "./ref.js";

const code = (c: string): unknown => expect.objectContaining({ code: c }) as unknown;

describe("registry references", () => {
  it("parses owner/name@version in every accepted spelling", () => {
    expect(tryParseRegistryRef("acme/echo@1.0.0")).toEqual({
      owner: "acme",
      name: "echo",
      version: "1.0.0",
      skillId: "acme/echo",
    });
    expect(tryParseRegistryRef("registry:acme/echo")).toEqual({
      owner: "acme",
      name: "echo",
      skillId: "acme/echo",
    });
    expect(tryParseRegistryRef("runx://skill/acme%2Fecho%401.0.0")?.version).toBe("1.0.0");
    for (const bad of ["Acme/echo@1", "acme/echo@..", "acme/echo@a b", "../x/y", "acme"]) {
      expect(tryParseRegistryRef(bad)).toBeUndefined();
    }
  });

  it("accepts only normalized relative package paths", () => {
    expect(packagePathProblem("scripts/run.sh")).toBeUndefined();
    for (const bad of ["../x", "a/../../b", "/etc/passwd", "C:/x", "a\\b", "a//b", "./a", ""]) {
      expect(packagePathProblem(bad)).toBeDefined();
    }
  });
});

describe("remote acquisition body (fixtures/registry/remote/acquire-success.json)", () => {
  const body: unknown = JSON.parse(
    readFileSync(join(UPSTREAM, "fixtures/registry/remote/acquire-success.json"), "utf8"),
  );

  it("parses the wire shape into a registry record", () => {
    const parsed = parseRemoteAcquisition(body);
    expect(parsed.installCount).toBe(1);
    expect(parsed.publisher).toEqual({ kind: "organization", id: "pub_acme", handle: "acme" });
    expect(parsed.record).toMatchObject({
      skill_id: "acme/echo",
      owner: "acme",
      name: "echo",
      version: "1.0.0",
      runner_names: ["default"],
      trust_tier: "community",
      package_files: [{ path: "run.mjs", content: "console.log('echo');\n" }],
    });
    expect(parsed.record.signature).toBeUndefined();
  });

  it("is refused before materialising: its digests are placeholders and it is unsigned", () => {
    const { record } = parseRemoteAcquisition(body);
    expect(() => checkRecordDigests(record, "acme/echo@1.0.0")).toThrow(
      code("REGISTRY_DIGEST_MISMATCH"),
    );
    // With honest digests it would still need a trusted signature.
    const markdown = Buffer.from(record.markdown, "utf8");
    const profile = record.profile_document ?? "";
    const honest = {
      ...record,
      digest: sha256Prefixed(markdown),
      profile_digest: sha256Prefixed(profile),
    };
    honest.package_digest = digestPackageEntries([
      { path: "SKILL.md", content: markdown },
      { path: "X.yaml", content: Buffer.from(profile, "utf8") },
      { path: "run.mjs", content: Buffer.from("console.log('echo');\n", "utf8") },
    ]);
    expect(() =>
      verifyRecord(honest, "acme/echo@1.0.0", new Map(), { requireSignature: true }),
    ).toThrow(code("REGISTRY_SIGNATURE_INVALID"));
    expect(() =>
      verifyRecord(honest, "acme/echo@1.0.0", new Map(), { requireSignature: false }),
    ).not.toThrow();
  });

  it("refuses failures and malformed bodies", () => {
    expect(() => parseRemoteAcquisition({ status: "failure" })).toThrow(code("REGISTRY_INVALID"));
    const traversal = structuredClone(body) as { acquisition: { package_files: unknown[] } };
    traversal.acquisition.package_files.push({ path: "../../.bashrc", content: "x" });
    expect(() => parseRemoteAcquisition(traversal)).toThrow(code("REGISTRY_INVALID"));
  });
});

describe("signed records", () => {
  let base: string;
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), "runx-registry-unit-"));
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  function key(seedByte: number, kid: string): PublisherKey {
    const pair = ed25519FromSeed(new Uint8Array(32).fill(seedByte));
    return { kid, pair, publicKey: encodeBase64UrlNoPad(pair.publicKey), source: "env" };
  }

  async function unsignedRecord(k: PublisherKey): Promise<UnsignedRecord> {
    const dir = join(base, "pkg");
    mkdirSync(join(dir, "bin"), { recursive: true });
    writeFileSync(join(dir, "SKILL.md"), "---\nname: blob\ndescription: Binary data.\n---\nx\n");
    writeFileSync(join(dir, "bin", "data.bin"), Buffer.from([0, 255, 254, 10, 128]));
    const registry = new LocalRegistry({
      root: join(base, "reg"),
      workspaceRoot: base,
      runxDir: join(base, ".runx"),
      runxHome: join(base, "home"),
      env: {},
      now: () => new Date("2026-01-01T00:00:00Z"),
    });
    const { record } = await registry.buildRecord(dir, {
      owner: "acme",
      version: "1.0.0",
      publisher: { kind: "key", id: k.kid, handle: "acme", public_key: k.publicKey },
    });
    expect(record.package_digest).toBe(computePackageDigest(dir));
    return record;
  }

  it("round-trips binary files and verifies against trusted keys and tiers", async () => {
    const k = key(1, "acme-key");
    const record = await unsignedRecord(k);
    expect(record.package_files).toEqual([
      {
        path: "bin/data.bin",
        content_base64: Buffer.from([0, 255, 254, 10, 128]).toString("base64"),
      },
    ]);
    const signed = decodeRecord(JSON.parse(JSON.stringify(signRecord(record, k))), "acme/blob");
    const trust = (maxTier: TrustedKey["maxTier"]) =>
      new Map([[k.kid, { kid: k.kid, publicKey: k.pair.publicKey, maxTier }]]);
    expect(() =>
      verifyRecord(signed, "acme/blob", trust("community"), { requireSignature: true }),
    ).not.toThrow();
    // A key the reader does not know, or an impostor key under the same id.
    expect(() => verifyRecord(signed, "acme/blob", new Map(), { requireSignature: true })).toThrow(
      code("REGISTRY_SIGNATURE_INVALID"),
    );
    const impostor = key(2, "acme-key");
    const forged = signRecord(record, impostor);
    expect(() =>
      verifyRecord(forged, "acme/blob", trust("community"), { requireSignature: true }),
    ).toThrow(code("REGISTRY_SIGNATURE_INVALID"));
    // A tier above what the key is trusted for.
    const promoted = signRecord({ ...record, trust_tier: "verified" }, k);
    expect(() =>
      verifyRecord(promoted, "acme/blob", trust("community"), { requireSignature: true }),
    ).toThrow(code("REGISTRY_SIGNATURE_INVALID"));
    expect(() =>
      verifyRecord(promoted, "acme/blob", trust("first_party"), { requireSignature: true }),
    ).not.toThrow();
    // Any content change is a digest mismatch, before the signature is even looked at.
    const tampered = structuredClone(signed);
    tampered.package_files = [{ path: "bin/data.bin", content_base64: "AAAA" }];
    expect(() =>
      verifyRecord(tampered, "acme/blob", trust("community"), { requireSignature: true }),
    ).toThrow(code("REGISTRY_DIGEST_MISMATCH"));
  });
});
