import { describe, expect, it } from "vitest";
import {
  buildGraphReceipt,
  buildSkillReceipt,
  localDevelopmentPolicy,
  localDevelopmentSigner,
  receiptStatus,
  sealReceipt,
} from "../receipts/index.js";
import type { JsonObject, Receipt } from "../receipts/index.js";
import { RuntimeError } from "../errors.js";
import { receiptView } from "./receipt-view.js";

const AT = "2026-01-01T00:00:00Z";
const seal = <T extends Parameters<typeof sealReceipt>[0]>(r: T) =>
  sealReceipt(r, localDevelopmentSigner());

function step(name: string, disposition: "closed" | "failed"): Receipt {
  return seal(
    buildSkillReceipt({
      name: "flow",
      step: name,
      createdAt: AT,
      disposition,
      reasonCode: disposition === "closed" ? "step_closed" : "step_failed",
    }),
  );
}

function graph(children: Receipt[], metadata: JsonObject): Receipt {
  return seal(buildGraphReceipt({ name: "flow", createdAt: AT, children, metadata }));
}

const policy = localDevelopmentPolicy();
const status = (r: Receipt) => receiptStatus(r, policy);

describe("receiptView", () => {
  it("takes step statuses from the children's signed seals and lists contradicting metadata", async () => {
    const a = step("a", "closed");
    const b = step("b", "failed");
    const root = graph([a, b], {
      steps: [
        { step_id: "a", status: "failed", receipt_id: a.id },
        { step_id: "b", status: "failed", receipt_id: b.id },
      ],
    });
    const store = new Map([a, b].map((r) => [r.id, r]));
    const { signed, unsigned } = await receiptView(
      root,
      (id) => Promise.resolve(store.get(id)),
      status,
    );
    expect(signed.steps.map((s) => [s.step_id, s.disposition, s.verification])).toEqual([
      ["a", "closed", "unverified"],
      ["b", "failed", "unverified"],
    ]);
    expect(unsigned.conflicts).toEqual([
      { path: "metadata.steps[0].status", unsigned: "failed", signed: "closed" },
    ]);
    expect("metadata" in signed.receipt).toBe(false);
    // Every field but metadata, as written.
    const { metadata: _metadata, ...withoutMetadata } = root as unknown as Record<string, unknown>;
    expect(signed.receipt).toEqual(withoutMetadata);
  });

  it("a missing, unreadable or swapped child is never shown with a signed status", async () => {
    const a = step("a", "closed");
    const b = step("b", "closed");
    const root = graph([a, b], {});
    // Another body under the ids the parent committed.
    const other = step("c", "closed");
    const unreadable = await receiptView(
      root,
      (id) =>
        id === a.id
          ? Promise.reject(new RuntimeError("RECEIPT_INVALID", "does not decode"))
          : Promise.resolve(undefined),
      status,
    );
    expect(unreadable.signed.steps.map((s) => [s.disposition, s.verification])).toEqual([
      [null, "invalid"],
      [null, "missing"],
    ]);
    // Anything but a runtime error is a bug and is not swallowed.
    await expect(
      receiptView(root, () => Promise.reject(new TypeError("bug")), status),
    ).rejects.toThrow("bug");
    const missing = await receiptView(root, () => Promise.resolve(undefined), status);
    expect(missing.signed.steps.map((s) => [s.disposition, s.verification])).toEqual([
      [null, "missing"],
      [null, "missing"],
    ]);
    const swapped = await receiptView(root, () => Promise.resolve(other), status);
    expect(swapped.signed.steps.map((s) => [s.disposition, s.verification])).toEqual([
      [null, "invalid"],
      [null, "invalid"],
    ]);
  });
});
