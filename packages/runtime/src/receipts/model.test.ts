import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { serializeReceipt } from "./shape.js";
import type { Receipt } from "./model.js";
import { decodeReceipt } from "./shape.js";
import { readUpstreamText, upstreamPath } from "./test-oracles.js";

const REFUND_STORE = "skills/refund/fixtures/receipt-store";
const VALID_PRODUCTION = "fixtures/receipt-verify/valid-production/receipt.json";

function decodeError(value: unknown): RuntimeError {
  try {
    decodeReceipt(value);
  } catch (error) {
    if (error instanceof RuntimeError) return error;
    throw error;
  }
  throw new Error("expected the decode to fail");
}

function validProduction(): Record<string, unknown> {
  return JSON.parse(readUpstreamText(VALID_PRODUCTION)) as Record<string, unknown>;
}

describe("serializeReceipt", () => {
  it("writes the upstream production receipt files byte for byte", () => {
    const files = readdirSync(upstreamPath(REFUND_STORE)).filter((f) => f.endsWith(".json"));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readUpstreamText(`${REFUND_STORE}/${file}`);
      const receipt = decodeReceipt(JSON.parse(text));
      // The stored files end with a newline; the serialized form is the JSON alone.
      expect(`${serializeReceipt(receipt)}\n`).toBe(text);
    }
  });

  it("uses struct order for the pretty-printed verify corpus receipt too", () => {
    const value = validProduction();
    expect(serializeReceipt(decodeReceipt(value))).toBe(JSON.stringify(value));
  });

  it("reorders a receipt whose members were built in another order", () => {
    const value = validProduction();
    const shuffled = Object.fromEntries(Object.entries(value).reverse()) as unknown as Receipt;
    expect(serializeReceipt(shuffled)).toBe(JSON.stringify(value));
  });

  it("is stable under decode and re-serialize", () => {
    const once = serializeReceipt(decodeReceipt(validProduction()));
    expect(serializeReceipt(decodeReceipt(JSON.parse(once)))).toBe(once);
  });
});

describe("decodeReceipt", () => {
  it("fills defaults: missing lists become [] and missing nullable members become null", () => {
    const value = validProduction();
    delete value.signals;
    const decisions = value.decisions as Record<string, unknown>[];
    delete decisions[0]!.closure;
    delete (decisions[0]!.inputs as Record<string, unknown>).target_ref;
    const receipt = decodeReceipt(value);
    expect(receipt.signals).toEqual([]);
    expect(receipt.decisions[0]!.closure).toBeNull();
    expect(receipt.decisions[0]!.inputs.target_ref).toBeNull();
    expect(serializeReceipt(receipt)).toBe(JSON.stringify(validProduction()));
  });

  it("drops optional members given as null and writes nullable ones as null", () => {
    const value = validProduction();
    (value.authority as Record<string, unknown>).mandate_ref = null;
    const receipt = decodeReceipt(value);
    expect("mandate_ref" in receipt.authority).toBe(false);
    expect(receipt.authority.attenuation).toEqual({
      parent_authority_ref: null,
      subset_proof: null,
    });
  });

  it("writes free-form metadata with sorted keys", () => {
    const value = { ...validProduction(), metadata: { z: 1, a: { y: true, b: null } } };
    const text = serializeReceipt(decodeReceipt(value));
    expect(text.endsWith(',"metadata":{"a":{"b":null,"y":true},"z":1}}')).toBe(true);
  });

  it("keeps a free-form member named __proto__ as data", () => {
    const value = {
      ...validProduction(),
      metadata: JSON.parse('{"z":1,"__proto__":{"polluted":true}}') as Record<string, unknown>,
    };
    const receipt = decodeReceipt(value);
    const metadata = receipt.metadata as Record<string, unknown>;
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
    expect(Object.keys(metadata)).toEqual(["__proto__", "z"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(serializeReceipt(receipt)).toContain('"metadata":{"__proto__":{"polluted":true},"z":1}');
  });

  it("refuses unknown members with RECEIPT_INVALID naming the path", () => {
    const value = validProduction();
    (value.seal as Record<string, unknown>).extra = 1;
    const error = decodeError(value);
    expect(error.code).toBe("RECEIPT_INVALID");
    expect(error.details.path).toBe("$.seal.extra");
  });

  it.each([
    ["a null list", (v: Record<string, unknown>) => (v.signals = null), "$.signals"],
    ["a missing required member", (v: Record<string, unknown>) => delete v.seal, "$.seal"],
    ["an empty id", (v: Record<string, unknown>) => (v.id = ""), "$.id"],
    [
      "an unknown disposition",
      (v: Record<string, unknown>) => ((v.seal as Record<string, unknown>).disposition = "done"),
      "$.seal.disposition",
    ],
    ["a wrong schema", (v: Record<string, unknown>) => (v.schema = "runx.receipt.v2"), "$.schema"],
    [
      "a malformed timestamp",
      (v: Record<string, unknown>) => (v.created_at = "yesterday"),
      "$.created_at",
    ],
    [
      "a wrongly typed member of a list element",
      (v: Record<string, unknown>) =>
        ((v.decisions as Array<Record<string, unknown>>)[0]!.choice = 7),
      "$.decisions[0].choice",
    ],
    [
      "an unknown member of a nested struct in a list element",
      (v: Record<string, unknown>) =>
        ((
          (v.decisions as Array<Record<string, unknown>>)[0]!.proposed_intent as Record<
            string,
            unknown
          >
        ).extra = true),
      "$.decisions[0].proposed_intent.extra",
    ],
    [
      "a list element of the wrong type",
      (v: Record<string, unknown>) => ((v.decisions as unknown[])[1] = "decision"),
      "$.decisions[1]",
    ],
  ])("refuses %s", (_label, mutate, path) => {
    const value = validProduction();
    mutate(value);
    const error = decodeError(value);
    expect(error.code).toBe("RECEIPT_INVALID");
    expect(error.details.path).toBe(path);
  });

  it("refuses documents that are not objects", () => {
    expect(decodeError([]).code).toBe("RECEIPT_INVALID");
    expect(decodeError(null).code).toBe("RECEIPT_INVALID");
  });
});
