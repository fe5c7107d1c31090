import { afterEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import {
  makeTestReceiptStore,
  paymentReceipt,
  type TestReceiptStore,
} from "../testing/payment-receipts.test-kit.js";
import { ed25519Signer, generateEd25519Seed, productionPolicy, ReceiptStore } from "./index.js";
import { verifiedReceiptLookup } from "./lookup.js";

let stores: TestReceiptStore[] = [];
function freshStore(...args: Parameters<typeof makeTestReceiptStore>): TestReceiptStore {
  const made = makeTestReceiptStore(...args);
  stores.push(made);
  return made;
}
afterEach(() => {
  for (const s of stores) s.cleanup();
  stores = [];
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "(resolved)";
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    return error.code;
  }
}

const charge = paymentReceipt({ step: "charge", verb: "commit", operation: "charge", amount: 125 });
const refund = paymentReceipt({
  step: "refund",
  verb: "reverse",
  operation: "refund",
  amount: 25,
  links: charge.id,
});
const unrelated = paymentReceipt({
  step: "other",
  verb: "commit",
  operation: "charge",
  amount: 7,
});

describe("verifiedReceiptLookup", () => {
  it("reads a stored receipt by id, verified", async () => {
    const s = freshStore();
    await s.add(charge, refund);
    const read = await s.lookup.read(charge.id);
    expect(read.id).toBe(charge.id);
    expect(read.digest).toBe(charge.digest);
  });

  it("refuses an id that is not in the store, and a reference that is not a receipt id", async () => {
    const s = freshStore();
    await s.add(charge);
    expect(await codeOf(s.lookup.read(refund.id))).toBe("RECEIPT_NOT_FOUND");
    expect(await codeOf(s.lookup.read("receipt:charge:demo-001"))).toBe("RECEIPT_NOT_FOUND");
  });

  it("lists only the receipts whose acts reference the id, never the receipt itself", async () => {
    const s = freshStore();
    await s.add(charge, refund, unrelated);
    const linked = await s.lookup.referencing(charge.id);
    expect(linked.map((r) => r.id)).toEqual([refund.id]);
    expect(await s.lookup.referencing(unrelated.id)).toEqual([]);
  });

  it("refuses a tampered receipt on read, naming it", async () => {
    const s = freshStore();
    await s.add(charge, refund);
    s.tamper(refund.id, (text) =>
      text.replace('"max_per_call_units":25', '"max_per_call_units":1'),
    );
    const error = await s.lookup.read(refund.id).catch((e: unknown) => e);
    expect(isRuntimeError(error) && error.code).toBe("RECEIPT_INVALID");
    expect(isRuntimeError(error) && error.details.receipt_id).toBe(refund.id);
  });

  it("fails closed: a tampered receipt anywhere in the store refuses a history lookup", async () => {
    const s = freshStore();
    await s.add(charge, refund, unrelated);
    s.tamper(unrelated.id, (text) =>
      text.replace('"max_per_call_units":7', '"max_per_call_units":8'),
    );
    const error = await s.lookup.referencing(charge.id).catch((e: unknown) => e);
    expect(isRuntimeError(error) && error.code).toBe("RECEIPT_INVALID");
    expect(isRuntimeError(error) && error.details.receipt_id).toBe(unrelated.id);
  });

  it("verifies under the store's signature policy: production refuses local signatures", async () => {
    const seed = generateEd25519Seed();
    const signer = ed25519Signer({ kid: "test-key", issuerType: "hosted", seed });
    const signed = paymentReceipt(
      { step: "charge", verb: "commit", operation: "charge", amount: 125 },
      signer,
    );
    const s = freshStore(productionPolicy(signer.verifier));
    await s.add(signed);
    expect((await s.lookup.read(signed.id)).id).toBe(signed.id);
    // The same local-development receipt that a local store returns is refused when the
    // run's policy is production.
    const local = freshStore();
    await local.add(charge);
    const strict = verifiedReceiptLookup(
      () => new ReceiptStore({ dir: local.store.dir, policy: productionPolicy(signer.verifier) }),
    );
    expect((await local.lookup.read(charge.id)).id).toBe(charge.id);
    expect(await codeOf(strict.read(charge.id))).toBe("RECEIPT_INVALID");
    expect(await codeOf(strict.referencing(signed.id))).toBe("RECEIPT_INVALID");
  });
});
