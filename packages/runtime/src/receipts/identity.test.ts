import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical.js";
import {
  childReceiptReference,
  decodedBodyDigest,
  decodedContentId,
  receiptBodyDigest,
  receiptContentId,
  receiptFullDigest,
  referencedReceiptId,
} from "./identity.js";
import type { Receipt } from "./model.js";
import { decodeReceipt } from "./shape.js";
import { readUpstreamJson, readUpstreamText, upstreamPath } from "./test-oracles.js";

interface C14nCase {
  name: string;
  fixture: string;
  body_canonical_json: string;
  body_sha256: string;
  full_canonical_json: string;
  full_sha256: string;
}

function spine(fixture: string): Receipt {
  const document = readUpstreamJson(`fixtures/contracts/${fixture}`) as { expected: unknown };
  return decodeReceipt(document.expected);
}

const REFUND_STORE = "skills/refund/fixtures/receipt-store";

describe("runx.receipt.c14n.v1 oracles", () => {
  const oracle = readUpstreamJson(
    "fixtures/contracts/canonical-json/runx-receipt-c14n-v1.oracles.json",
  ) as { canonicalization: string; cases: C14nCase[] };

  it("pins the receipt canonicalization", () => {
    expect(oracle.canonicalization).toBe("runx.receipt.c14n.v1");
    expect(oracle.cases.length).toBeGreaterThanOrEqual(2);
  });

  it.each(oracle.cases.map((c) => [c.name, c] as const))(
    "reproduces the body and full canonical form of %s",
    (_name, c) => {
      const receipt = spine(c.fixture);
      const body: Record<string, unknown> = { ...receipt };
      delete body.signature;
      delete body.digest;
      expect(canonicalJson(body)).toBe(c.body_canonical_json);
      expect(receiptBodyDigest(receipt)).toBe(c.body_sha256);
      expect(canonicalJson(receipt)).toBe(c.full_canonical_json);
      expect(receiptFullDigest(receipt)).toBe(c.full_sha256);
    },
  );
});

describe("receipt identity", () => {
  it.each(["harness-spine/receipt-success.json", "harness-spine/receipt-abnormal.json"])(
    "recomputes id and digest of %s",
    (fixture) => {
      const receipt = spine(fixture);
      expect(receiptContentId(receipt)).toBe(receipt.id);
      expect(receiptBodyDigest(receipt)).toBe(receipt.digest);
    },
  );

  it("recomputes id and digest of the production-signed refund receipts", () => {
    const files = readdirSync(upstreamPath(REFUND_STORE)).filter((f) => f.endsWith(".json"));
    expect(files).toHaveLength(2);
    for (const file of files) {
      const receipt = decodeReceipt(JSON.parse(readUpstreamText(`${REFUND_STORE}/${file}`)));
      expect(`sha256-${receipt.id.slice("sha256:".length)}.json`).toBe(file);
      expect(receiptContentId(receipt)).toBe(receipt.id);
      expect(receiptBodyDigest(receipt)).toBe(receipt.digest);
    }
  });

  it("recomputes id, body digest and receipt digest of the echo-skill oracle", () => {
    const text = readUpstreamText("fixtures/harness/oracle/echo-skill.receipt.json");
    const receipt = decodeReceipt(JSON.parse(text));
    expect(canonicalJson(receipt)).toBe(text.trimEnd());
    expect(receiptContentId(receipt)).toBe(receipt.id);
    expect(receiptBodyDigest(receipt)).toBe(
      "sha256:241eef460b2874a93faa907ffd50b2d25ee09c8361deec73284aabaacaef317b",
    );
    expect(receiptFullDigest(receipt)).toBe(
      "sha256:b76412293fc8e168854a122a31c7449edb40053c503118bb4a68e3a670c5dd6e",
    );
  });

  it("keeps metadata out of id and digest, and lineage out of the id only", () => {
    const receipt = spine("harness-spine/receipt-success.json");
    const withMetadata: Receipt = { ...receipt, metadata: { skill: "echo" } };
    expect(receiptContentId(withMetadata)).toBe(receipt.id);
    expect(receiptBodyDigest(withMetadata)).toBe(receipt.digest);
    expect(receiptFullDigest(withMetadata)).not.toBe(receiptFullDigest(receipt));

    const relinked: Receipt = {
      ...receipt,
      lineage: { children: [], sync: [], previous: { type: "receipt", uri: "runx:receipt:x" } },
    };
    expect(receiptContentId(relinked)).toBe(receipt.id);
    expect(receiptBodyDigest(relinked)).not.toBe(receipt.digest);
  });

  it("references a child by id and locates it at its digest", () => {
    const child = spine("harness-spine/receipt-success.json");
    const reference = childReceiptReference(child);
    expect(reference).toEqual({
      type: "receipt",
      uri: `runx:receipt:${child.id}`,
      locator: child.digest,
    });
    expect(referencedReceiptId(reference)).toBe(child.id);
    expect(
      referencedReceiptId({ type: "artifact", uri: `runx:receipt:${child.id}` }),
    ).toBeUndefined();
    expect(referencedReceiptId({ type: "receipt", uri: child.id })).toBeUndefined();
    expect(referencedReceiptId({ type: "receipt", uri: "runx:receipt:" })).toBeUndefined();
  });
});

describe("hashes of an already decoded receipt", () => {
  it("equal the hashes computed from the raw receipt, for every upstream receipt-store receipt", () => {
    const dir = upstreamPath(REFUND_STORE);
    const files = readdirSync(dir).filter((name) => /^sha256-[0-9a-f]{64}\.json$/.test(name));
    expect(files.length).toBeGreaterThan(0);
    for (const name of files) {
      const raw = JSON.parse(readUpstreamText(`${REFUND_STORE}/${name}`)) as Receipt;
      const decoded = decodeReceipt(raw);
      // decodeReceipt is idempotent, which the decoded variants rely on.
      expect(decodeReceipt(decoded)).toEqual(decoded);
      expect(decodedContentId(decoded)).toBe(receiptContentId(raw));
      expect(decodedBodyDigest(decoded)).toBe(receiptBodyDigest(raw));
      expect(decodedContentId(decoded)).toBe(raw.id);
      expect(decodedBodyDigest(decoded)).toBe(raw.digest);
    }
  });
});
