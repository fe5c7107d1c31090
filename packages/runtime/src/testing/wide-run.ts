/**
 * The shape of a wide test run of 20,001 receipts: a root sealing 20 steps, each the parent of
 * 999 receipts (the tree checks allow 1,024 children a receipt), and the sealed, locally
 * signed skill receipt each node is. Shared by the tests that page and bundle such a run.
 */
import { buildSkillReceipt } from "../receipts/build.js";
import type { Receipt } from "../receipts/model.js";
import { sealReceipt } from "../receipts/seal.js";
import { localDevelopmentSigner } from "../receipts/signer.js";

export const STEPS = 20;
export const PER_STEP = 999;
export const TOTAL = 1 + STEPS + STEPS * PER_STEP;

const signer = localDevelopmentSigner();

/** A closed skill receipt named `name`, created `i` seconds after `base`, over `children`. */
export function sealedAt(base: string, name: string, i: number, children: Receipt[] = []): Receipt {
  const at = new Date(Date.parse(base) + i * 1000);
  return sealReceipt(
    buildSkillReceipt({
      name,
      step: "default",
      createdAt: at.toISOString().replace(/\.\d+Z$/, "Z"),
      disposition: "closed",
      reasonCode: "process_closed",
      children,
    }),
    signer,
  );
}
